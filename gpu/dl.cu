/* gpu/dl.h: a library from the first name that loads, with every entry point, or the reason. */
#include <dlfcn.h>
#include <stdio.h>

#include "dl.h"

mr_status mr_dl_load(mr_dl_lib *l)
{
    pthread_mutex_lock(&l->lock);
    if (!l->tried) {
        l->tried = 1;
        for (int i = 0; l->names[i] && !l->lib; i++) {
            l->lib = dlopen(l->names[i], RTLD_NOW | RTLD_LOCAL);
            if (!l->lib && i == 0)
                snprintf(l->why, sizeof l->why, "%s", dlerror());
        }
        for (int i = 0; l->lib && l->symbols[i]; i++)
            if (!(l->fns[i] = dlsym(l->lib, l->symbols[i]))) {
                snprintf(l->why, sizeof l->why, "the entry point %s is missing (%s)", l->symbols[i], dlerror());
                dlclose(l->lib);
                l->lib = NULL;
            }
    }
    const int ok = l->lib != NULL;
    pthread_mutex_unlock(&l->lock);
    if (ok)
        return MR_OK;
    return mr_error(MR_ENODEV, "cannot load %s (%s%s%s): %s", l->what, l->names[0], l->names[1] ? ", or " : "",
                    l->names[1] ? l->names[1] : "", l->why);
}
