/* Attributes (see h5util.h): reading numbers and strings with their class, size and text checked
 * (UTF-8 without control characters), and writing them. This file owns the attribute helpers and the
 * text check (mr_h5_text_bad_at, mr_h5_text_clean). */
#include "h5util.h"
#include "h5util_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- attributes --------------------------------------------------------------------------- */

/* Open attribute `attr` if it exists: 1 opened, 0 absent, -1 error recorded. */
static int open_attr(hid_t obj, const char *path, const char *objname, const char *attr, hid_t *a)
{
    *a = H5I_INVALID_HID;
    htri_t e = H5Aexists(obj, attr);
    if (e < 0) {
        h5_reason r;
        mr_error(MR_EIO, "%s: %s attribute '%s': cannot look up%s", path, objname, attr, h5_why(&r));
        return -1;
    }
    if (e == 0)
        return 0;
    *a = H5Aopen(obj, attr, H5P_DEFAULT);
    if (*a < 0) {
        h5_reason r;
        mr_error(MR_EIO, "%s: %s attribute '%s': cannot open%s", path, objname, attr, h5_why(&r));
        return -1;
    }
    return 1;
}

/* Open attribute `attr` with its type and dataspace. Absent: an error when required (present is
 * NULL), else MR_OK with *a < 0. The caller closes *space, *type and *a. */
static mr_status attr_begin(hid_t obj, const char *path, const char *objname, const char *attr, int *present,
                            hid_t *a, hid_t *type, hid_t *space)
{
    *type = *space = H5I_INVALID_HID;
    if (present)
        *present = 0;
    int o = open_attr(obj, path, objname, attr, a);
    if (o < 0)
        return MR_EIO;
    if (o == 0)
        return present ? MR_OK : mr_error(MR_EFORMAT, "%s: %s attribute '%s' is missing", path, objname, attr);
    *type = H5Aget_type(*a);
    *space = H5Aget_space(*a);
    return MR_OK;
}

/* Integers of 1, 2, 4 or 8 bytes using all their bits; IEEE binary32 or binary64 floats. HDF5
 * converts anything else too, through its generic bit-field conversions; no writer of ours or of
 * the usual tools produces it. */
static int standard_number(hid_t type, H5T_class_t cls)
{
    size_t size = H5Tget_size(type);
    if (cls == H5T_INTEGER)
        return (size == 1 || size == 2 || size == 4 || size == 8) && H5Tget_precision(type) == 8 * size &&
               H5Tget_offset(type) == 0 && (H5Tget_order(type) == H5T_ORDER_LE || H5Tget_order(type) == H5T_ORDER_BE);
    return H5Tequal(type, H5T_IEEE_F32LE) > 0 || H5Tequal(type, H5T_IEEE_F32BE) > 0 ||
           H5Tequal(type, H5T_IEEE_F64LE) > 0 || H5Tequal(type, H5T_IEEE_F64BE) > 0;
}

mr_status mr_h5_attr_read(hid_t obj, const char *path, const char *objname, const char *attr, H5T_class_t cls,
                          hid_t memtype, void *buf, int n, int *present)
{
    hid_t a, type, space;
    mr_status st = attr_begin(obj, path, objname, attr, present, &a, &type, &space);
    if (st != MR_OK || a < 0)
        return st;
    H5T_class_t c = type < 0 ? H5T_NO_CLASS : H5Tget_class(type);
    if (c != cls) {
        st = mr_error(MR_EFORMAT, "%s: %s attribute '%s' is of class %s, expected %s", path, objname, attr,
                      h5_class_name(c), h5_class_name(cls));
        goto done;
    }
    if (!standard_number(type, cls)) {
        st = mr_error(MR_EFORMAT, "%s: %s attribute '%s' is a non-standard %zu-byte %s type", path, objname, attr,
                      H5Tget_size(type), h5_class_name(cls));
        goto done;
    }
    hssize_t npts = space < 0 ? -1 : H5Sget_simple_extent_npoints(space);
    int rank = space < 0 ? -1 : H5Sget_simple_extent_ndims(space);
    if (npts != n || rank > 1) {
        st = mr_error(MR_EFORMAT, "%s: %s attribute '%s' has %lld elements (rank %d), expected %d", path, objname, attr,
                      (long long)npts, rank, n);
        goto done;
    }
    if (H5Aread(a, memtype, buf) < 0) {
        h5_reason r;
        st = mr_error(MR_EFORMAT, "%s: %s attribute '%s': cannot read or convert%s", path, objname, attr,
                      h5_why(&r));
        goto done;
    }
    if (present)
        *present = 1;
done:
    mr_h5_close(&space);
    mr_h5_close(&type);
    mr_h5_close(&a);
    return st;
}

/* Offset of the first byte of s[len] that is not part of valid UTF-8 text without control
 * characters (C0, DEL), or -1 when all is well. ASCII is a subset. */
static long bad_text_at(const unsigned char *s, size_t len);

long mr_h5_text_bad_at(const char *s, size_t len) { return bad_text_at((const unsigned char *)s, len); }

void mr_h5_text_clean(char *s)
{
    size_t len = strlen(s);
    long bad;
    while ((bad = bad_text_at((const unsigned char *)s, len)) >= 0) {
        /* a control character or a byte that starts no character becomes '?'; a character cut off at the
           end (a truncated name) is dropped */
        const unsigned char c = (unsigned char)s[bad];
        size_t n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
        if (n && (size_t)bad + n > len) {
            s[bad] = '\0';
            len = (size_t)bad;
        } else {
            s[bad] = '?';
        }
    }
}

static long bad_text_at(const unsigned char *s, size_t len)
{
    size_t i = 0;
    while (i < len) {
        unsigned c = s[i];
        if (c < 0x80) {
            if (c < 0x20 || c == 0x7f)
                return (long)i;
            i++;
            continue;
        }
        size_t n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
        if (n == 0 || i + n > len)
            return (long)i;
        unsigned lo = 0x80, hi = 0xbf; /* the second byte's range excludes overlong forms, surrogates, > U+10FFFF */
        if (c == 0xe0)
            lo = 0xa0;
        else if (c == 0xed)
            hi = 0x9f;
        else if (c == 0xf0)
            lo = 0x90;
        else if (c == 0xf4)
            hi = 0x8f;
        if (s[i + 1] < lo || s[i + 1] > hi)
            return (long)i;
        for (size_t k = 2; k < n; k++)
            if ((s[i + k] & 0xc0) != 0x80)
                return (long)i;
        i += n;
    }
    return -1;
}

mr_status mr_h5_attr_read_string(hid_t obj, const char *path, const char *objname, const char *attr, char *buf,
                                 size_t size, int *present)
{
    hid_t a, type, space, mem = H5I_INVALID_HID;
    char *text = NULL;
    size_t len = 0;
    int vlen = 0;
    mr_status st = attr_begin(obj, path, objname, attr, present, &a, &type, &space);
    if (st != MR_OK || a < 0)
        return st;
    if (type < 0 || H5Tget_class(type) != H5T_STRING) {
        st = mr_error(MR_EFORMAT, "%s: %s attribute '%s' is not a string", path, objname, attr);
        goto done;
    }
    if (space < 0 || H5Sget_simple_extent_npoints(space) != 1 || H5Sget_simple_extent_ndims(space) > 1) {
        st = mr_error(MR_EFORMAT, "%s: %s attribute '%s' is not a single string", path, objname, attr);
        goto done;
    }
    /* read in the file's character set: HDF5 does not convert between ASCII and UTF-8 */
    H5T_cset_t cset = H5Tget_cset(type);
    if (cset != H5T_CSET_ASCII && cset != H5T_CSET_UTF8) {
        st = mr_error(MR_EFORMAT, "%s: %s attribute '%s' has an unknown character set %d", path, objname, attr,
                      (int)cset);
        goto done;
    }
    vlen = H5Tis_variable_str(type) > 0;
    mem = H5Tcopy(H5T_C_S1);
    if (mem < 0 || H5Tset_cset(mem, cset) < 0) {
        st = mr_error(MR_EIO, "%s: %s attribute '%s': cannot make a string type", path, objname, attr);
        goto done;
    }
    if (vlen) {
        if (H5Tset_size(mem, H5T_VARIABLE) < 0 || H5Aread(a, mem, &text) < 0) {
            h5_reason r;
            text = NULL;
            st = mr_error(MR_EFORMAT, "%s: %s attribute '%s': cannot read the variable-length string%s", path,
                          objname, attr, h5_why(&r));
            goto done;
        }
        len = text ? strlen(text) : 0;
    } else {
        size_t n = H5Tget_size(type);
        if (n == 0 || n > MR_H5_MAX_STRING_BYTES) {
            st = mr_error(MR_EFORMAT, "%s: %s attribute '%s' is a %zu-byte string, more than %d", path, objname, attr,
                          n, MR_H5_MAX_STRING_BYTES);
            goto done;
        }
        text = calloc(n + 1, 1);
        if (!text) {
            st = mr_error(MR_ENOMEM, "%s: out of memory", path);
            goto done;
        }
        /* NUL-padded in memory: HDF5 strips a space-padded string's trailing spaces */
        if (H5Tset_size(mem, n) < 0 || H5Tset_strpad(mem, H5T_STR_NULLPAD) < 0 || H5Aread(a, mem, text) < 0) {
            h5_reason r;
            st = mr_error(MR_EFORMAT, "%s: %s attribute '%s': cannot read the string%s", path, objname, attr,
                          h5_why(&r));
            goto done;
        }
        len = strlen(text);
        for (size_t i = len; i < n; i++)
            if (text[i] != '\0') {
                st = mr_error(MR_EFORMAT, "%s: %s attribute '%s' holds a NUL byte at offset %zu inside the string",
                              path, objname, attr, len);
                goto done;
            }
    }
    long bad = bad_text_at((const unsigned char *)(text ? text : ""), len);
    if (bad >= 0) {
        st = mr_error(MR_EFORMAT, "%s: %s attribute '%s': byte %ld (0x%02x) is %s", path, objname, attr, bad,
                      (unsigned)(unsigned char)text[bad],
                      (unsigned char)text[bad] < 0x80 ? "a control character" : "not valid UTF-8");
        goto done;
    }
    if (len >= size) {
        st = mr_error(MR_EFORMAT, "%s: %s attribute '%s' is %zu bytes long, longer than %zu", path, objname, attr,
                      len, size - 1);
        goto done;
    }
    memcpy(buf, text ? text : "", len + 1);
    if (present)
        *present = 1;
done:
    if (vlen)
        H5free_memory(text);
    else
        free(text);
    mr_h5_close(&mem);
    mr_h5_close(&space);
    mr_h5_close(&type);
    mr_h5_close(&a);
    return st;
}

mr_status mr_h5_attr_write(hid_t obj, const char *path, const char *attr, hid_t filetype, hid_t memtype,
                           const void *buf, int n)
{
    hsize_t dims[1] = {(hsize_t)n};
    hid_t space = n > 0 ? H5Screate_simple(1, dims, NULL) : H5Screate(H5S_SCALAR);
    hid_t a = space < 0 ? H5I_INVALID_HID : H5Acreate2(obj, attr, filetype, space, H5P_DEFAULT, H5P_DEFAULT);
    mr_status st = MR_OK;
    if (a < 0 || H5Awrite(a, memtype, buf) < 0) {
        h5_reason r;
        st = mr_error(MR_EIO, "%s: attribute '%s': write failed%s", path, attr, h5_why(&r));
    }
    mr_h5_close(&a);
    mr_h5_close(&space);
    return st;
}

mr_status mr_h5_attr_write_string(hid_t obj, const char *path, const char *attr, const char *s)
{
    hid_t type = H5Tcopy(H5T_C_S1);
    mr_status st = MR_OK;
    if (type < 0 || H5Tset_size(type, strlen(s) ? strlen(s) : 1) < 0 || H5Tset_strpad(type, H5T_STR_NULLPAD) < 0)
        st = mr_error(MR_EIO, "%s: attribute '%s': cannot make a string type", path, attr);
    else
        st = mr_h5_attr_write(obj, path, attr, type, type, s, 0);
    mr_h5_close(&type);
    return st;
}
