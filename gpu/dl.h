/* Shared libraries of the CUDA toolkit loaded at run time (dlopen), once per process: cuFFT
 * (gpu/toeplitz.cu) and cuBLAS (gpu/cublas_load.cu). Nothing links them, so a CUDA build starts on a
 * machine where they are missing; the code that needs one fails with MR_ENODEV naming it.
 * Included by the gpu/ .cu files only. */
#ifndef MR_DL_H
#define MR_DL_H

#include <pthread.h>
#include <stddef.h>

#include "../base/status.h"

typedef struct {
    const char *what;           /* "cuFFT" */
    const char *const *names;   /* file names tried in order (absolute paths or sonames), NULL-terminated */
    const char *const *symbols; /* entry points, NULL-terminated */
    void **fns;                 /* receives the entry points, in the order of symbols */
    /* state, zero-initialised (MR_DL_STATE) */
    pthread_mutex_t lock;
    int tried;
    void *lib;
    char why[512];
} mr_dl_lib;

#define MR_DL_STATE PTHREAD_MUTEX_INITIALIZER, 0, NULL, ""

/* Load l (the first call tries, later calls return its outcome at once; thread-safe): MR_OK with every
 * entry point in l->fns, or MR_ENODEV "cannot load WHAT (NAME0, or NAME1): reason". */
mr_status mr_dl_load(mr_dl_lib *l);

#endif
