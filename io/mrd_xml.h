/* The ISMRMRD XML header (schema/ismrmrd.xsd of ismrmrd/ismrmrd), parsed with expat: only the
 * elements mrirecon uses. Unknown elements are ignored; a DOCTYPE (and with it any entity) is
 * refused, so that no entity expansion can happen. Values are checked (integers in range, finite
 * floats) and a failure names the element path and the text. */
#ifndef MR_MRD_XML_H
#define MR_MRD_XML_H

#include <stddef.h>
#include <stdint.h>

#include "../base/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MR_MRD_MAX_ENCODINGS 16
#define MR_MRD_MAX_XML_BYTES ((size_t)16 << 20)
#define MR_MRD_MAX_TE 64

/* encodingLimits children this reader keeps */
typedef enum {
    MR_LIMIT_E1 = 0, /* kspace_encoding_step_1 */
    MR_LIMIT_E2,     /* kspace_encoding_step_2 */
    MR_LIMIT_AVERAGE,
    MR_LIMIT_SLICE,
    MR_LIMIT_CONTRAST,
    MR_LIMIT_PHASE,
    MR_LIMIT_REPETITION,
    MR_LIMIT_SET,
    MR_LIMIT_SEGMENT,
    MR_LIMIT_COUNT
} mr_mrd_limit_kind;

typedef struct {
    int present;     /* 1 when the element exists */
    int64_t minimum; /* each 0 when absent (the schema's default) */
    int64_t maximum;
    int64_t center;
} mr_mrd_limit;

typedef struct {
    int64_t matrix[3]; /* matrixSize x, y, z; 0 when absent */
    double fov_mm[3];  /* fieldOfView_mm x, y, z; 0 when absent */
    int have_matrix;   /* matrixSize present */
    int have_fov;      /* fieldOfView_mm present */
} mr_mrd_space;

typedef struct {
    mr_mrd_space encoded;          /* encodedSpace */
    mr_mrd_space recon;            /* reconSpace */
    mr_mrd_limit limits[MR_LIMIT_COUNT];
    char trajectory[32];           /* cartesian, epi, radial, goldenangle, spiral, other; "" absent */
    char traj_identifier[64];      /* trajectoryDescription/identifier; "" absent */
} mr_mrd_encoding;

typedef struct {
    int64_t version;                   /* -1 absent */
    int nencodings;                    /* >= 1 after a successful parse */
    mr_mrd_encoding enc[MR_MRD_MAX_ENCODINGS];
    int64_t receiver_channels;         /* acquisitionSystemInformation/receiverChannels; -1 absent */
    double rel_noise_bandwidth;        /* .../relativeReceiverNoiseBandwidth; -1 absent */
    double field_strength_t;           /* .../systemFieldStrength_T; -1 absent */
    char vendor[64];                   /* .../systemVendor; "" absent */
    char model[64];                    /* .../systemModel; "" absent */
    char patient_position[8];          /* measurementInformation/patientPosition (HFS, ...); "" absent */
    int64_t h1_frequency_hz;           /* experimentalConditions/H1resonanceFrequency_Hz; -1 absent */
    int nte;                           /* sequenceParameters/TE elements kept (at most MR_MRD_MAX_TE) */
    double te_ms[MR_MRD_MAX_TE];       /* their values in ms, in document order (one per contrast) */
} mr_mrd_header;

/* Parse len bytes of XML (not necessarily NUL-terminated) into *h. `label` names the source in
 * messages ("scan.h5: /dataset/xml"). MR_EFORMAT for malformed XML (with expat's reason, line and
 * column), a root other than ismrmrdHeader, no <encoding>, more than MR_MRD_MAX_ENCODINGS, or a
 * value that does not parse or is out of range. */
mr_status mr_mrd_header_parse(const char *xml, size_t len, const char *label, mr_mrd_header *h);

/* "kspace_encoding_step_1", "slice", ... */
const char *mr_mrd_limit_name(mr_mrd_limit_kind k);

#ifdef __cplusplus
}
#endif
#endif
