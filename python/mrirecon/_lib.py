"""libmrirecon through ctypes: loading it (where: _find.py), the declarations of recon/api/api.h, status
checks."""

import ctypes
import os
import threading

from . import _errors
from ._find import ENV_VAR, LIB_NAME, candidates

API_VERSION = 1  # recon/api/api.h MR_API_VERSION this binding speaks

# One call sequence at a time: the library's FFTW planning and log level are process-wide (recon/api/api.h).
LOCK = threading.RLock()


class Geometry(ctypes.Structure):
    _fields_ = [
        ("present", ctypes.c_int),
        ("position", ctypes.c_float * 3),
        ("read_dir", ctypes.c_float * 3),
        ("phase_dir", ctypes.c_float * 3),
        ("slice_dir", ctypes.c_float * 3),
    ]


class ScanInfo(ctypes.Structure):
    _fields_ = [
        ("matrix", ctypes.c_int64 * 3),
        ("nsamples", ctypes.c_int64),
        ("ncoils", ctypes.c_int64),
        ("fov_mm", ctypes.c_float * 3),
        ("noise_sigma", ctypes.c_double),
        ("snr_db", ctypes.c_double),
        ("noise_seed", ctypes.c_uint64),
        ("traj_kind", ctypes.c_char * 64),
        ("phantom", ctypes.c_char * 64),
        ("name", ctypes.c_char * 1024),
        ("format", ctypes.c_char * 32),
        ("volume", ctypes.c_int),
        ("volumes", ctypes.c_int),
        ("label", ctypes.c_char * 96),
        ("prewhitened", ctypes.c_int),
        ("noise_samples", ctypes.c_int64),
        ("has_grid", ctypes.c_int),
        ("recon_matrix", ctypes.c_int64 * 3),
        ("recon_fov_mm", ctypes.c_float * 3),
        ("geometry", Geometry),
    ]


class ImageInfo(ctypes.Structure):
    _fields_ = [
        ("matrix", ctypes.c_int64 * 3),
        ("fov_mm", ctypes.c_float * 3),
        ("geometry", Geometry),
        ("method", ctypes.c_char * 32),
    ]


# array kinds of mr_api_scan_set/get (recon/api/api.h mr_api_array)
TRAJ, DATA, WEIGHTS, TRUTH, TRUTH_BL, SENS, TIME, FIELDMAP = range(8)

_P = ctypes.c_void_p
_S = ctypes.c_char_p
_I = ctypes.c_int
_I64 = ctypes.c_int64
_FP = ctypes.POINTER(ctypes.c_float)
_ARGV = ctypes.POINTER(ctypes.c_char_p)

_PROTOTYPES = {
    "mr_api_version": (_I, []),
    "mr_api_last_error": (_S, []),
    "mr_api_status_name": (_S, [_I]),
    "mr_api_free": (None, [_P]),
    "mr_api_sizeof": (ctypes.c_size_t, [_S]),
    "mr_api_options": (_I, [_S, ctypes.POINTER(_P)]),
    "mr_api_help": (_I, [_S, ctypes.POINTER(_P)]),
    "mr_api_scan_read": (_I, [_S, _I, _ARGV, ctypes.POINTER(_P)]),
    "mr_api_scan_create": (_I, [ctypes.POINTER(ScanInfo), ctypes.POINTER(_P)]),
    "mr_api_scan_set": (_I, [_P, _I, _FP, _I64]),
    "mr_api_scan_get": (_I, [_P, _I, _FP, _I64]),
    "mr_api_scan_size": (_I64, [_P, _I]),
    "mr_api_scan_info_get": (None, [_P, ctypes.POINTER(ScanInfo)]),
    "mr_api_scan_write": (_I, [_P, _S, _S, _I]),
    "mr_api_scan_free": (None, [_P]),
    "mr_api_phantom": (_I, [_I, _ARGV, ctypes.POINTER(_P)]),
    "mr_api_recon": (_I, [_S, _P, _I, _ARGV, ctypes.POINTER(_P)]),
    "mr_api_result_volumes": (_I, [_P]),
    "mr_api_result_methods": (_I, [_P, _I]),
    "mr_api_result_label": (_S, [_P, _I]),
    "mr_api_result_report": (_S, [_P, _I]),
    "mr_api_result_image_info": (_I, [_P, _I, _I, ctypes.POINTER(ImageInfo)]),
    "mr_api_result_image": (_I, [_P, _I, _I, _FP, _I64]),
    "mr_api_result_free": (None, [_P]),
    "mr_api_image_write": (_I, [_S, _S, _FP, ctypes.POINTER(ImageInfo), _I, ctypes.c_double, _S]),
    "mr_api_image_read": (_I, [_S, ctypes.POINTER(_P)]),
    "mr_api_image_info_get": (None, [_P, ctypes.POINTER(ImageInfo)]),
    "mr_api_image_get": (_I, [_P, _FP, _I64]),
    "mr_api_image_free": (None, [_P]),
}

_lib = None
_lib_path = None


def load():
    """The loaded library (loaded once; LibraryNotFoundError when none is usable)."""
    global _lib, _lib_path
    if _lib is not None:
        return _lib
    tried = candidates(__file__)
    path = next((p for p in tried if p.is_file()), None)
    if path is None:
        where = ", ".join(str(p) for p in tried)
        raise _errors.LibraryNotFoundError(
            f"{LIB_NAME} not found (tried {where}): build it (bash scripts/setup.sh) and install the package "
            f"(pip install ./python), or set {ENV_VAR} to the library", "ENOLIB")
    # OpenMP (libgomp) reads its wait policy when it is loaded: a short spin, as the command runs, unless the
    # user chose one (on a loaded machine the default spinning costs 10x; docs/RECON.md "Threads")
    if "OMP_WAIT_POLICY" not in os.environ and "GOMP_SPINCOUNT" not in os.environ:
        os.environ["GOMP_SPINCOUNT"] = "1000"
    try:
        lib = ctypes.CDLL(str(path))
    except OSError as e:
        raise _errors.LibraryNotFoundError(f"{path}: cannot be loaded: {e}", "ENOLIB") from e
    for name, (restype, argtypes) in _PROTOTYPES.items():
        try:
            fn = getattr(lib, name)
        except AttributeError as e:
            raise _errors.LibraryNotFoundError(f"{path}: has no {name}: an older library? rebuild it", "ENOLIB") from e
        fn.restype = restype
        fn.argtypes = argtypes
    version = lib.mr_api_version()
    if version != API_VERSION:
        raise _errors.LibraryNotFoundError(
            f"{path}: C API version {version}, this package speaks {API_VERSION}: rebuild the library or "
            f"reinstall the package from the same checkout", "ENOLIB")
    for struct, name in ((ScanInfo, b"scan_info"), (ImageInfo, b"image_info"), (Geometry, b"geometry")):
        if lib.mr_api_sizeof(name) != ctypes.sizeof(struct):
            raise _errors.LibraryNotFoundError(
                f"{path}: struct {name.decode()} is {lib.mr_api_sizeof(name)} bytes, this package expects "
                f"{ctypes.sizeof(struct)}: rebuild the library or reinstall the package", "ENOLIB")
    _lib, _lib_path = lib, path
    return lib


def library_path():
    """The path of the libmrirecon.so in use (loads it)."""
    load()
    return str(_lib_path)


def check(status):
    """Raise the exception of a failed call (its message is the library's last error)."""
    if status == 0:
        return
    lib = load()
    message = (lib.mr_api_last_error() or b"").decode("utf-8", "replace")
    name = (lib.mr_api_status_name(status) or b"UNKNOWN").decode()
    raise _errors.from_status(name, message or f"libmrirecon failed ({name})")


def argv(args):
    """A C argv (char **) of a list of str, and the objects that keep it alive."""
    encoded = [a.encode() for a in args]
    arr = (ctypes.c_char_p * (len(encoded) + 1))(*encoded, None)
    return len(encoded), arr


def take_text(ptr):
    """A char * the caller owns (mr_api_free) as str."""
    lib = load()
    try:
        return ctypes.string_at(ptr).decode("utf-8", "replace")
    finally:
        lib.mr_api_free(ptr)


def fptr(array):
    """A float * into a contiguous numpy array."""
    return array.ctypes.data_as(_FP)


def text(field):
    """A char[] field as str."""
    return bytes(field).split(b"\0", 1)[0].decode("utf-8", "replace")
