/* DICOM without DCMTK (see dicom.h): the build found no libdcmtk-dev. */
#include "dicom.h"

#include <string.h>

int mr_dicom_available(void) { return 0; }

mr_status mr_dicom_uid_new(char *uid)
{
    uid[0] = '\0';
    return mr_error(MR_ENOTSUP, "DICOM: this mrirecon was built without DCMTK");
}

mr_status mr_dicom_study_new(mr_dicom_study *s)
{
    memset(s, 0, sizeof *s);
    return MR_OK;
}

mr_status mr_dicom_write_series(const char *prefix, const float *img, const int64_t matrix[3], const mr_dicom_opts *o,
                                int *nfiles)
{
    (void)img;
    (void)matrix;
    (void)o;
    if (nfiles)
        *nfiles = 0;
    return mr_error(MR_ENOTSUP, "%s: this mrirecon was built without DICOM support (install libdcmtk-dev and "
                                "rebuild: scripts/setup.sh)",
                    prefix);
}
