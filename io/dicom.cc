// DICOM MR images through DCMTK (see dicom.h). C++ only here: the interface is plain C.
#include "dicom.h"

#include <dcmtk/config/osconfig.h>
#include <dcmtk/dcmdata/dctk.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <vector>

#include "../base/grid.h"
#include "fsutil.h"

namespace {

// 2.25.<decimal of a random version-4 UUID> (PS3.5 B.2): at most 5 + 39 characters.
mr_status uuid_uid(char *out, size_t size)
{
    unsigned char b[16];
    FILE *f = std::fopen("/dev/urandom", "rb");
    const bool ok = f && std::fread(b, 1, sizeof b, f) == sizeof b;
    if (f)
        std::fclose(f);
    if (!ok)
        return mr_error(MR_EIO, "DICOM: cannot read /dev/urandom for a UID");
    b[6] = (unsigned char)((b[6] & 0x0f) | 0x40); // version 4
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80); // RFC 4122 variant
    // the 128-bit big-endian number in decimal, by repeated division by 10
    char digits[48];
    int n = 0;
    bool nonzero = true;
    while (nonzero) {
        unsigned rem = 0;
        nonzero = false;
        for (int i = 0; i < 16; i++) {
            const unsigned cur = rem * 256u + b[i];
            b[i] = (unsigned char)(cur / 10u);
            rem = cur % 10u;
            nonzero = nonzero || b[i] != 0;
        }
        digits[n++] = (char)('0' + rem);
    }
    if (size < (size_t)n + 6)
        return mr_error(MR_EINTERNAL, "DICOM: UID buffer too small");
    std::strcpy(out, "2.25.");
    for (int i = 0; i < n; i++)
        out[5 + i] = digits[n - 1 - i];
    out[5 + n] = '\0';
    return MR_OK;
}

// Decimal strings (VR DS) of at most 16 characters.
void ds(char *buf, size_t size, double v)
{
    if (std::fabs(v) < 1e-9)
        v = 0;
    std::snprintf(buf, size, "%.10g", v);
    if (std::strlen(buf) > 16)
        std::snprintf(buf, size, "%.6g", v);
}

struct put_failed {
    const char *what;
};

void put(DcmDataset *d, const DcmTagKey &tag, const char *value)
{
    if (d->putAndInsertString(tag, value).bad())
        throw put_failed{"attribute"};
}

void put_ds3(DcmDataset *d, const DcmTagKey &tag, const double *v, int n)
{
    char buf[128] = "", one[32];
    for (int i = 0; i < n; i++) {
        ds(one, sizeof one, v[i]);
        std::strcat(buf, i ? "\\" : "");
        std::strcat(buf, one);
    }
    put(d, tag, buf);
}

} // namespace

extern "C" int mr_dicom_available(void) { return 1; }

extern "C" mr_status mr_dicom_uid_new(char *uid) { return uuid_uid(uid, MR_DICOM_UID_SIZE); }

extern "C" mr_status mr_dicom_study_new(mr_dicom_study *s)
{
    std::memset(s, 0, sizeof *s);
    mr_status st = uuid_uid(s->study_uid, sizeof s->study_uid);
    if (st == MR_OK)
        st = uuid_uid(s->frame_uid, sizeof s->frame_uid);
    const std::time_t now = std::time(nullptr);
    std::tm tm;
    gmtime_r(&now, &tm);
    std::strftime(s->date, sizeof s->date, "%Y%m%d", &tm);
    std::strftime(s->time, sizeof s->time, "%H%M%S", &tm);
    return st;
}

extern "C" mr_status mr_dicom_write_series(const char *prefix, const float *img, const int64_t matrix[3],
                                           const mr_dicom_opts *o, int *nfiles)
{
    if (nfiles)
        *nfiles = 0;
    char what[1100];
    std::snprintf(what, sizeof what, "%s: image", prefix);
    mr_status st = mr_matrix_check(matrix, what);
    if (st != MR_OK)
        return mr_error(MR_EINVAL, "%s", mr_last_error());
    if (matrix[0] > 65535 || matrix[1] > 65535 || matrix[2] > 99999 || !img)
        return mr_error(MR_EINVAL, "%s: a %lldx%lldx%lld image cannot be written as DICOM slices", prefix,
                        (long long)matrix[0], (long long)matrix[1], (long long)matrix[2]);
    const char *desc = o && o->series_description ? o->series_description : "mrirecon";
    if (std::strlen(desc) > 64)
        return mr_error(MR_EINVAL, "%s: series description longer than 64 characters", prefix);
    mr_dicom_study own;
    const mr_dicom_study *study = o ? o->study : nullptr;
    if (!study) {
        if ((st = mr_dicom_study_new(&own)) != MR_OK)
            return st;
        study = &own;
    }
    char series_uid[MR_DICOM_UID_SIZE];
    if (o && o->series_uid) {
        if (std::strlen(o->series_uid) >= sizeof series_uid)
            return mr_error(MR_EINVAL, "%s: series UID longer than 64 characters", prefix);
        std::strcpy(series_uid, o->series_uid);
    } else if ((st = uuid_uid(series_uid, sizeof series_uid)) != MR_OK) {
        return st;
    }
    const long long first = o && o->first_instance > 0 ? o->first_instance : 0;

    const int64_t nx = matrix[0], ny = matrix[1], nz = matrix[2], per = nx * ny;
    // one rescale slope for the series: the largest magnitude maps to 65535
    double mx = 0;
    for (int64_t v = 0; v < per * nz; v++)
        mx = std::fmax(mx, std::hypot((double)img[2 * v], (double)img[2 * v + 1]));
    const double slope = mx > 0 ? mx / 65535.0 : 1.0;
    double A[3][4], d[3];
    mr_geometry_affine(matrix, o ? o->fov_mm : nullptr, o ? o->geometry : nullptr, A);
    mr_voxel_size_mm(matrix, o ? o->fov_mm : nullptr, d);
    const double orient[6] = {A[0][0] / d[0], A[1][0] / d[0], A[2][0] / d[0],
                              A[0][1] / d[1], A[1][1] / d[1], A[2][1] / d[1]};
    const double spacing[2] = {d[1], d[0]};
    std::vector<Uint16> pix((size_t)per);
    char buf[128];
    int written = 0;
    for (int64_t k = 0; k < nz && st == MR_OK; k++) {
        for (int64_t v = 0; v < per; v++) {
            const float *p = img + 2 * (k * per + v);
            const double m = std::hypot((double)p[0], (double)p[1]) / slope;
            pix[(size_t)v] = (Uint16)(m >= 65535.0 ? 65535L : std::lround(m));
        }
        DcmFileFormat file;
        DcmDataset *ds_ = file.getDataset();
        char sop_uid[MR_DICOM_UID_SIZE];
        if ((st = uuid_uid(sop_uid, sizeof sop_uid)) != MR_OK)
            break;
        try {
            put(ds_, DCM_SOPClassUID, UID_MRImageStorage);
            put(ds_, DCM_SOPInstanceUID, sop_uid);
            put(ds_, DCM_StudyInstanceUID, study->study_uid);
            put(ds_, DCM_SeriesInstanceUID, series_uid);
            put(ds_, DCM_FrameOfReferenceUID, study->frame_uid);
            put(ds_, DCM_PositionReferenceIndicator, "");
            put(ds_, DCM_ImageType, "DERIVED\\PRIMARY\\OTHER");
            put(ds_, DCM_Modality, "MR");
            put(ds_, DCM_Manufacturer, "mrirecon");
            put(ds_, DCM_SoftwareVersions, MR_VERSION);
            put(ds_, DCM_PatientName, o && o->patient_name ? o->patient_name : "mrirecon^phantom");
            put(ds_, DCM_PatientID, o && o->patient_id ? o->patient_id : "mrirecon");
            put(ds_, DCM_PatientBirthDate, "");
            put(ds_, DCM_PatientSex, "");
            put(ds_, DCM_StudyDate, study->date);
            put(ds_, DCM_StudyTime, study->time);
            put(ds_, DCM_SeriesDate, study->date);
            put(ds_, DCM_SeriesTime, study->time);
            put(ds_, DCM_ContentDate, study->date);
            put(ds_, DCM_ContentTime, study->time);
            put(ds_, DCM_ReferringPhysicianName, "");
            put(ds_, DCM_StudyID, "1");
            put(ds_, DCM_AccessionNumber, "");
            std::snprintf(buf, sizeof buf, "%d", o && o->series_number > 0 ? o->series_number : 1);
            put(ds_, DCM_SeriesNumber, buf);
            put(ds_, DCM_SeriesDescription, desc);
            std::snprintf(buf, sizeof buf, "%lld", first + (long long)(k + 1));
            put(ds_, DCM_InstanceNumber, buf);
            put(ds_, DCM_PatientPosition, "HFS");
            put(ds_, DCM_Laterality, ""); // type 2C without a body part: empty
            // MR Image module: what an offline reconstruction can say
            put(ds_, DCM_ScanningSequence, "RM");
            put(ds_, DCM_SequenceVariant, "NONE");
            put(ds_, DCM_ScanOptions, "");
            put(ds_, DCM_MRAcquisitionType, nz > 1 ? "3D" : "2D");
            put(ds_, DCM_RepetitionTime, "");
            put(ds_, DCM_EchoTime, "");
            put(ds_, DCM_EchoTrainLength, "");
            // Image Plane module
            put_ds3(ds_, DCM_PixelSpacing, spacing, 2);
            put_ds3(ds_, DCM_ImageOrientationPatient, orient, 6);
            double pos[3];
            for (int i = 0; i < 3; i++)
                pos[i] = A[i][2] * (double)k + A[i][3];
            put_ds3(ds_, DCM_ImagePositionPatient, pos, 3);
            put_ds3(ds_, DCM_SliceThickness, &d[2], 1);
            put_ds3(ds_, DCM_SpacingBetweenSlices, &d[2], 1);
            // Image Pixel module
            put(ds_, DCM_PhotometricInterpretation, "MONOCHROME2");
            if (ds_->putAndInsertUint16(DCM_SamplesPerPixel, 1).bad() ||
                ds_->putAndInsertUint16(DCM_Rows, (Uint16)ny).bad() ||
                ds_->putAndInsertUint16(DCM_Columns, (Uint16)nx).bad() ||
                ds_->putAndInsertUint16(DCM_BitsAllocated, 16).bad() ||
                ds_->putAndInsertUint16(DCM_BitsStored, 16).bad() ||
                ds_->putAndInsertUint16(DCM_HighBit, 15).bad() ||
                ds_->putAndInsertUint16(DCM_PixelRepresentation, 0).bad() ||
                ds_->putAndInsertUint16Array(DCM_PixelData, pix.data(), (unsigned long)per).bad())
                throw put_failed{"pixel"};
            const double rescale[1] = {slope}, zero[1] = {0}, center[1] = {mx / 2}, width[1] = {mx > 0 ? mx : 1};
            put_ds3(ds_, DCM_RescaleSlope, rescale, 1);
            put_ds3(ds_, DCM_RescaleIntercept, zero, 1);
            put(ds_, DCM_RescaleType, "US");
            put_ds3(ds_, DCM_WindowCenter, center, 1);
            put_ds3(ds_, DCM_WindowWidth, width, 1);
            // LINEAR_EXACT: the window [0, max] maps exactly, and widths below 1 (intensities in phantom
            // units) are allowed
            put(ds_, DCM_VOILUTFunction, "LINEAR_EXACT");
        } catch (const put_failed &) {
            st = mr_error(MR_EINTERNAL, "%s: DCMTK refused an attribute of slice %lld", prefix, (long long)k);
            break;
        }
        char path[4200], tmp[4300];
        if (std::snprintf(path, sizeof path, "%s%04lld.dcm", prefix, (long long)(k + 1)) >= (int)sizeof path) {
            st = mr_error(MR_EINVAL, "%s: path too long", prefix);
            break;
        }
        if ((st = mr_tmp_name(path, tmp, sizeof tmp)) != MR_OK)
            break;
        const OFCondition c = file.saveFile(tmp, EXS_LittleEndianExplicit);
        if (c.bad()) {
            std::remove(tmp);
            st = mr_error(MR_EIO, "%s: DICOM write failed: %s", path, c.text());
            break;
        }
        if ((st = mr_commit_file(tmp, path)) != MR_OK)
            break;
        written++;
    }
    if (nfiles)
        *nfiles = written;
    return st;
}
