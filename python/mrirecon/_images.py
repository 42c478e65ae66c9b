"""Images in and out of every format mrirecon writes (io/image_io.h; one orientation: docs/FORMAT.md)."""

import ctypes
import os

import numpy as np

from . import _errors, _lib
from ._scan import fov_triple, geometry_dict, geometry_struct

_NIFTI = {None: 0, "magnitude": 0, "complex": 1}


def _image_array(image):
    a = np.asarray(image)
    if a.ndim == 2:
        a = a[np.newaxis]
    if a.ndim != 3:
        raise _errors.InvalidArgumentError(
            f"write_image: an image of shape {a.shape}: expected [Ny, Nx] or [Nz, Ny, Nx]", "EINVAL")
    return np.ascontiguousarray(a, dtype=np.complex64)


def write_image(path, image, format=None, *, fov=None, geometry=None, method="", nifti=None, window=None,
                description=None):
    """Write an image (numpy [Ny, Nx] or [Nz, Ny, Nx], any real or complex dtype; x fastest) as mrirecon
    writes its images.

    format: "h5" (our HDF5 image), "png" (the magnitude picture recon draws; 3D: three labelled planes),
    "nifti" (.nii), "cfl" (BART: path.hdr + path.cfl), "mrd" (ISMRMRD/MRD image), "dicom" (an MR series:
    a folder of IM0001.dcm ..., or with path NAME.dcm the files NAME_0001.dcm ...); the names of
    ``mrirecon convert --to`` (mrirecon, bart) work too; None: by the path's name as convert decides.
    fov: mm per axis (one value: every axis; None: unknown, 1 mm voxels); geometry: the scanner placement
    (dict of position, read_dir, phase_dir, slice_dir, LPS mm; None: the default placement); method: the
    method's name in the file; nifti: "magnitude" (float32, default) or "complex" (complex64); window:
    the PNG's grey window [0, window] (default [0, max]); description: NIfTI descrip / DICOM series
    description / MRD comment."""
    a = _image_array(image)
    info = _lib.ImageInfo()
    info.matrix[:] = (a.shape[2], a.shape[1], a.shape[0])
    if fov is not None:
        info.fov_mm[:] = fov_triple(fov, a.shape[0], os.fspath(path))
    info.geometry = geometry_struct(geometry)
    info.method = str(method).encode()[:31]
    if nifti not in _NIFTI:
        raise _errors.InvalidArgumentError(f"write_image: nifti={nifti!r} is not 'magnitude' or 'complex'", "EINVAL")
    lib = _lib.load()
    with _lib.LOCK:
        _lib.check(lib.mr_api_image_write(os.fspath(path).encode(), None if format is None else format.encode(),
                                          _lib.fptr(a), ctypes.byref(info), _NIFTI[nifti],
                                          0.0 if window is None else float(window),
                                          None if description is None else description.encode()))


def read_image(path, info=False):
    """Read an image file (our HDF5 image, NIfTI-1, an MRD image, a BART array) as complex64
    [Nz, Ny, Nx]; with info=True also a dict of fov (mm), geometry (or None) and method."""
    lib = _lib.load()
    h = ctypes.c_void_p()
    with _lib.LOCK:
        _lib.check(lib.mr_api_image_read(os.fspath(path).encode(), ctypes.byref(h)))
        try:
            i = _lib.ImageInfo()
            lib.mr_api_image_info_get(h, ctypes.byref(i))
            nx, ny, nz = (int(x) for x in i.matrix)
            a = np.empty((nz, ny, nx), dtype=np.complex64)
            _lib.check(lib.mr_api_image_get(h, _lib.fptr(a), 2 * a.size))
        finally:
            lib.mr_api_image_free(h)
    if not info:
        return a
    return a, {"fov": tuple(float(x) for x in i.fov_mm), "geometry": geometry_dict(i.geometry),
               "method": _lib.text(i.method)}
