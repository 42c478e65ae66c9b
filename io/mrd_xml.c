/* ISMRMRD XML header with expat (see mrd_xml.h). The parser keeps a stack of element names (the
 * namespace stripped) and the text of the innermost element; when an element ends, its path below
 * the root is looked up in one table of the leaves this reader keeps. */
#include "mrd_xml.h"

#include <errno.h>
#include <expat.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 32
#define MAX_NAME 64
#define MAX_TEXT 4096

typedef enum { V_INT, V_FLOAT, V_STRING } value_kind;

/* A leaf: its path below <ismrmrdHeader>, and where its value goes. Paths below "encoding/" are
 * relative to the current <encoding>; `base` then selects the encoding struct. */
typedef struct {
    const char *path;
    value_kind kind;
    int in_encoding;
    size_t offset; /* into mr_mrd_header, or into mr_mrd_encoding when in_encoding */
    size_t size;   /* of the string buffer */
    double lo, hi; /* range of a number */
    size_t flag;   /* offset of an int "present" flag to set, or (size_t)-1 */
} leaf;

#define NOFLAG ((size_t)-1)
#define H(field) offsetof(mr_mrd_header, field)
#define E(field) offsetof(mr_mrd_encoding, field)
#define U16 0, 65535
#define LIMIT_LEAVES(name, k)                                                                                     \
    {"encoding/encodingLimits/" name "/minimum", V_INT, 1, E(limits[k].minimum), 0, U16, E(limits[k].present)},   \
        {"encoding/encodingLimits/" name "/maximum", V_INT, 1, E(limits[k].maximum), 0, U16, E(limits[k].present)}, \
        {"encoding/encodingLimits/" name "/center", V_INT, 1, E(limits[k].center), 0, U16, E(limits[k].present)}
#define SPACE_LEAVES(name, s)                                                                                     \
    {"encoding/" name "/matrixSize/x", V_INT, 1, E(s.matrix[0]), 0, U16, E(s.have_matrix)},                     \
        {"encoding/" name "/matrixSize/y", V_INT, 1, E(s.matrix[1]), 0, U16, E(s.have_matrix)},                 \
        {"encoding/" name "/matrixSize/z", V_INT, 1, E(s.matrix[2]), 0, U16, E(s.have_matrix)},                 \
        {"encoding/" name "/fieldOfView_mm/x", V_FLOAT, 1, E(s.fov_mm[0]), 0, 0, 1e7, E(s.have_fov)},           \
        {"encoding/" name "/fieldOfView_mm/y", V_FLOAT, 1, E(s.fov_mm[1]), 0, 0, 1e7, E(s.have_fov)},           \
        {"encoding/" name "/fieldOfView_mm/z", V_FLOAT, 1, E(s.fov_mm[2]), 0, 0, 1e7, E(s.have_fov)}

static const leaf leaves[] = {
    {"version", V_INT, 0, H(version), 0, 0, 1e9, NOFLAG},
    {"acquisitionSystemInformation/receiverChannels", V_INT, 0, H(receiver_channels), 0, U16, NOFLAG},
    {"acquisitionSystemInformation/relativeReceiverNoiseBandwidth", V_FLOAT, 0, H(rel_noise_bandwidth), 0, 0, 1e6,
     NOFLAG},
    {"acquisitionSystemInformation/systemFieldStrength_T", V_FLOAT, 0, H(field_strength_t), 0, 0, 1e3, NOFLAG},
    {"acquisitionSystemInformation/systemVendor", V_STRING, 0, H(vendor), sizeof(((mr_mrd_header *)0)->vendor), 0,
     0, NOFLAG},
    {"acquisitionSystemInformation/systemModel", V_STRING, 0, H(model), sizeof(((mr_mrd_header *)0)->model), 0, 0,
     NOFLAG},
    {"measurementInformation/patientPosition", V_STRING, 0, H(patient_position),
     sizeof(((mr_mrd_header *)0)->patient_position), 0, 0, NOFLAG},
    {"experimentalConditions/H1resonanceFrequency_Hz", V_INT, 0, H(h1_frequency_hz), 0, 0, 1e12, NOFLAG},
    SPACE_LEAVES("encodedSpace", encoded),
    SPACE_LEAVES("reconSpace", recon),
    {"encoding/trajectory", V_STRING, 1, E(trajectory), sizeof(((mr_mrd_encoding *)0)->trajectory), 0, 0, NOFLAG},
    {"encoding/trajectoryDescription/identifier", V_STRING, 1, E(traj_identifier),
     sizeof(((mr_mrd_encoding *)0)->traj_identifier), 0, 0, NOFLAG},
    LIMIT_LEAVES("kspace_encoding_step_1", MR_LIMIT_E1),
    LIMIT_LEAVES("kspace_encoding_step_2", MR_LIMIT_E2),
    LIMIT_LEAVES("average", MR_LIMIT_AVERAGE),
    LIMIT_LEAVES("slice", MR_LIMIT_SLICE),
    LIMIT_LEAVES("contrast", MR_LIMIT_CONTRAST),
    LIMIT_LEAVES("phase", MR_LIMIT_PHASE),
    LIMIT_LEAVES("repetition", MR_LIMIT_REPETITION),
    LIMIT_LEAVES("set", MR_LIMIT_SET),
    LIMIT_LEAVES("segment", MR_LIMIT_SEGMENT),
};

static const char *const limit_names[MR_LIMIT_COUNT] = {
    "kspace_encoding_step_1", "kspace_encoding_step_2", "average", "slice", "contrast", "phase", "repetition", "set",
    "segment"};

const char *mr_mrd_limit_name(mr_mrd_limit_kind k)
{
    return (k >= 0 && k < MR_LIMIT_COUNT) ? limit_names[k] : "?";
}

typedef struct {
    XML_Parser parser;
    const char *label;
    mr_mrd_header *h;
    char names[MAX_DEPTH][MAX_NAME];
    int depth;   /* elements open */
    int skipped; /* elements open beyond MAX_DEPTH or with over-long names: ignored subtree depth */
    char text[MAX_TEXT + 1];
    size_t ntext;
    int text_overflow;
    mr_status st; /* first failure */
} parse_ctx;

static void fail(parse_ctx *c, mr_status st)
{
    if (c->st == MR_OK)
        c->st = st;
    XML_StopParser(c->parser, XML_FALSE);
}

/* "ns|local" -> "local" */
static const char *local_name(const char *name)
{
    const char *bar = strrchr(name, '|');
    return bar ? bar + 1 : name;
}

/* The path below the root ("encoding/encodedSpace/matrixSize/x") into buf. */
static void current_path(const parse_ctx *c, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 1; i < c->depth && used < size; i++) {
        int k = snprintf(buf + used, size - used, "%s%s", i > 1 ? "/" : "", c->names[i]);
        if (k < 0)
            break;
        used += (size_t)k;
    }
}

static void XMLCALL on_start(void *ud, const XML_Char *name, const XML_Char **attrs)
{
    (void)attrs;
    parse_ctx *c = ud;
    if (c->st != MR_OK)
        return;
    const char *ln = local_name(name);
    if (c->skipped || c->depth >= MAX_DEPTH || strlen(ln) >= MAX_NAME) {
        c->skipped++;
        return;
    }
    if (c->depth == 0 && strcmp(ln, "ismrmrdHeader") != 0) {
        fail(c, mr_error(MR_EFORMAT, "%s: the root element is <%s>, expected <ismrmrdHeader>", c->label, ln));
        return;
    }
    if (c->depth == 1 && strcmp(ln, "encoding") == 0) {
        if (c->h->nencodings >= MR_MRD_MAX_ENCODINGS) {
            fail(c, mr_error(MR_EFORMAT, "%s: more than %d <encoding> elements", c->label, MR_MRD_MAX_ENCODINGS));
            return;
        }
        c->h->nencodings++;
    }
    memcpy(c->names[c->depth], ln, strlen(ln) + 1);
    c->depth++;
    c->ntext = 0;
    c->text_overflow = 0;
}

static void XMLCALL on_text(void *ud, const XML_Char *s, int len)
{
    parse_ctx *c = ud;
    if (c->st != MR_OK || c->skipped || len <= 0)
        return;
    if (c->ntext + (size_t)len > MAX_TEXT) {
        c->text_overflow = 1;
        return;
    }
    memcpy(c->text + c->ntext, s, (size_t)len);
    c->ntext += (size_t)len;
}

/* text without leading/trailing white space, in place */
static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
        s++;
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\r'))
        s[--n] = '\0';
    return s;
}

static void store(parse_ctx *c, const leaf *l, const char *path)
{
    char *base = l->in_encoding ? (char *)&c->h->enc[c->h->nencodings - 1] : (char *)c->h;
    c->text[c->ntext] = '\0';
    if (c->text_overflow) {
        fail(c, mr_error(MR_EFORMAT, "%s: <%s> holds more than %d characters", c->label, path, MAX_TEXT));
        return;
    }
    char *t = trim(c->text);
    char *end = NULL;
    errno = 0;
    switch (l->kind) {
    case V_INT: {
        long long v = strtoll(t, &end, 10);
        if (!t[0] || errno || *end || (double)v < l->lo || (double)v > l->hi) {
            fail(c, mr_error(MR_EFORMAT, "%s: <%s> is '%.40s', expected an integer in %.0f..%.0f", c->label, path, t,
                             l->lo, l->hi));
            return;
        }
        *(int64_t *)(base + l->offset) = v;
        break;
    }
    case V_FLOAT: {
        double v = strtod(t, &end);
        if (!t[0] || errno || *end || !isfinite(v) || v < l->lo || v > l->hi) {
            fail(c, mr_error(MR_EFORMAT, "%s: <%s> is '%.40s', expected a number in %g..%g", c->label, path, t, l->lo,
                             l->hi));
            return;
        }
        *(double *)(base + l->offset) = v;
        break;
    }
    case V_STRING: {
        size_t n = strlen(t);
        if (n >= l->size) {
            fail(c, mr_error(MR_EFORMAT, "%s: <%s> is %zu characters, longer than %zu", c->label, path, n,
                             l->size - 1));
            return;
        }
        memcpy(base + l->offset, t, n + 1);
        break;
    }
    }
    if (l->flag != NOFLAG)
        *(int *)(base + l->flag) = 1;
}

static void XMLCALL on_end(void *ud, const XML_Char *name)
{
    (void)name;
    parse_ctx *c = ud;
    if (c->st != MR_OK)
        return;
    if (c->skipped) {
        c->skipped--;
        return;
    }
    char path[MAX_DEPTH * MAX_NAME];
    current_path(c, path, sizeof path);
    if (strcmp(path, "sequenceParameters/TE") == 0 && c->h->nte < MR_MRD_MAX_TE) { /* one per contrast */
        const leaf te = {"sequenceParameters/TE", V_FLOAT, 0, H(te_ms) + (size_t)c->h->nte * sizeof(double), 0, 0, 1e6,
                         NOFLAG};
        store(c, &te, path);
        c->h->nte++;
    }
    for (size_t i = 0; i < sizeof leaves / sizeof leaves[0]; i++)
        if (strcmp(leaves[i].path, path) == 0) {
            store(c, &leaves[i], path);
            break;
        }
    c->depth--;
    c->ntext = 0;
    c->text_overflow = 0;
}

static void XMLCALL on_doctype(void *ud, const XML_Char *name, const XML_Char *sysid, const XML_Char *pubid,
                               int internal)
{
    (void)name, (void)sysid, (void)pubid, (void)internal;
    parse_ctx *c = ud;
    fail(c, mr_error(MR_EFORMAT, "%s: the XML header has a DOCTYPE declaration, which ISMRMRD does not use "
                                 "(refused: no DTDs or entities are read)",
                     c->label));
}

static void header_init(mr_mrd_header *h)
{
    memset(h, 0, sizeof *h);
    h->version = -1;
    h->receiver_channels = -1;
    h->rel_noise_bandwidth = -1;
    h->field_strength_t = -1;
    h->h1_frequency_hz = -1;
}

/* checks that need the whole document */
static mr_status check_header(const char *label, const mr_mrd_header *h)
{
    if (h->nencodings < 1)
        return mr_error(MR_EFORMAT, "%s: no <encoding> element (the schema requires one)", label);
    for (int e = 0; e < h->nencodings; e++) {
        const mr_mrd_encoding *en = &h->enc[e];
        if (!en->encoded.have_matrix)
            return mr_error(MR_EFORMAT, "%s: encoding %d: <encodedSpace><matrixSize> is missing", label, e);
        for (int a = 0; a < 3; a++)
            if (en->encoded.matrix[a] < 1)
                return mr_error(MR_EFORMAT, "%s: encoding %d: <encodedSpace><matrixSize><%c> is %lld, expected >= 1",
                                label, e, "xyz"[a], (long long)en->encoded.matrix[a]);
        if (en->recon.have_matrix)
            for (int a = 0; a < 3; a++)
                if (en->recon.matrix[a] < 1)
                    return mr_error(MR_EFORMAT,
                                    "%s: encoding %d: <reconSpace><matrixSize><%c> is %lld, expected >= 1", label, e,
                                    "xyz"[a], (long long)en->recon.matrix[a]);
        for (int k = 0; k < MR_LIMIT_COUNT; k++) {
            const mr_mrd_limit *l = &en->limits[k];
            if (l->present && l->minimum > l->maximum)
                return mr_error(MR_EFORMAT, "%s: encoding %d: <encodingLimits><%s>: minimum %lld > maximum %lld",
                                label, e, limit_names[k], (long long)l->minimum, (long long)l->maximum);
        }
    }
    return MR_OK;
}

mr_status mr_mrd_header_parse(const char *xml, size_t len, const char *label, mr_mrd_header *h)
{
    header_init(h);
    if (len > MR_MRD_MAX_XML_BYTES)
        return mr_error(MR_EFORMAT, "%s: XML header of %zu bytes, more than %zu", label, len, MR_MRD_MAX_XML_BYTES);
    if (len == 0)
        return mr_error(MR_EFORMAT, "%s: the XML header is empty", label);
    parse_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return mr_error(MR_ENOMEM, "%s: out of memory", label);
    c->label = label;
    c->h = h;
    c->st = MR_OK;
    c->parser = XML_ParserCreateNS(NULL, '|');
    if (!c->parser) {
        free(c);
        return mr_error(MR_ENOMEM, "%s: cannot create the XML parser", label);
    }
    XML_SetUserData(c->parser, c);
    XML_SetElementHandler(c->parser, on_start, on_end);
    XML_SetCharacterDataHandler(c->parser, on_text);
    XML_SetStartDoctypeDeclHandler(c->parser, on_doctype);
    mr_status st = MR_OK;
    if (XML_Parse(c->parser, xml, (int)len, XML_TRUE) == XML_STATUS_ERROR) {
        if (c->st != MR_OK)
            st = c->st;
        else
            st = mr_error(MR_EFORMAT, "%s: malformed XML: %s at line %lu, column %lu", label,
                          XML_ErrorString(XML_GetErrorCode(c->parser)),
                          (unsigned long)XML_GetCurrentLineNumber(c->parser),
                          (unsigned long)XML_GetCurrentColumnNumber(c->parser));
    } else if (c->st != MR_OK) {
        st = c->st;
    }
    XML_ParserFree(c->parser);
    free(c);
    if (st == MR_OK)
        st = check_header(label, h);
    return st;
}
