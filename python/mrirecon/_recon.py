"""Reconstruction: ``mrirecon recon`` in the process, the images and the report returned."""

import ctypes
import json
import os

import numpy as np

from . import _lib, _options
from ._images import write_image
from ._scan import Scan, geometry_dict


class Reconstruction:
    """One reconstructed volume.

    images   {method: complex64 [Nz, Ny, Nx]} in the order the methods ran (``method="all"`` runs several)
    image    the first method's image (the one ``method`` names first; the default method's)
    report   report.json as a dict: the scan, the settings used (lambda chosen, solver, model, device),
             per-method metrics against the truth when the scan has one, iterations, histories, times
    method, methods, label (the volume's name), fov (mm per axis, 0 unknown), geometry (placement or None)
    """

    def __init__(self, images, report, label, fov, geometry):
        self.images = images
        self.report = report
        self.label = label
        self.fov = fov
        self.geometry = geometry

    @property
    def methods(self):
        return list(self.images)

    @property
    def method(self):
        return self.methods[0]

    @property
    def image(self):
        return self.images[self.method]

    def psnr(self, truth="image", method=None):
        """The report's PSNR in dB of `method` (default: the first) against the scan's `truth` ("image" or
        "bandlimited"); None when the scan has no such truth."""
        m = method or self.method
        for entry in self.report.get("methods", []):
            if entry.get("method") == m:
                return entry.get("metrics", {}).get(truth, {}).get("psnr_db")
        return None

    def write(self, path, method=None, format=None, **options):
        """Write one method's image (default: the first) with this volume's voxel size and placement:
        mrirecon.write_image's formats and options."""
        return write_image(path, self.images[method or self.method], format, fov=self.fov,
                           geometry=self.geometry, method=method or self.method, **options)

    def __repr__(self):
        shape = "x".join(map(str, self.image.shape[::-1]))
        return f"Reconstruction({self.label}: {', '.join(self.methods)}; {shape})"


def _run(scan, options):
    lib = _lib.load()
    n, argv = _lib.argv(_options.command_line("recon", options))
    res = ctypes.c_void_p()
    with _lib.LOCK:
        if isinstance(scan, Scan):
            with scan._handle() as h:
                _lib.check(lib.mr_api_recon(None, h, n, argv, ctypes.byref(res)))
        else:
            _lib.check(lib.mr_api_recon(os.fspath(scan).encode(), None, n, argv, ctypes.byref(res)))
        try:
            out = []
            for v in range(lib.mr_api_result_volumes(res)):
                images = {}
                info = _lib.ImageInfo()
                for m in range(lib.mr_api_result_methods(res, v)):
                    _lib.check(lib.mr_api_result_image_info(res, v, m, ctypes.byref(info)))
                    nx, ny, nz = (int(x) for x in info.matrix)
                    img = np.empty((nz, ny, nx), dtype=np.complex64)
                    _lib.check(lib.mr_api_result_image(res, v, m, _lib.fptr(img), 2 * img.size))
                    images[_lib.text(info.method)] = img
                report = json.loads(lib.mr_api_result_report(res, v).decode("utf-8", "replace"))
                label = lib.mr_api_result_label(res, v).decode("utf-8", "replace")
                fov = tuple(float(x) for x in info.fov_mm)
                out.append(Reconstruction(images, report, label, fov, geometry_dict(info.geometry)))
            return out
        finally:
            lib.mr_api_result_free(res)


def recon(scan, **options):
    """Reconstruct a scan with ``mrirecon recon``'s options as keywords (``method="iterative"``,
    ``reg="tv"``, ``device="gpu"``, ``sens="file"``, ``lambda_=1e-3`` (``lambda`` is a Python keyword),
    ``lambda_rel``, ``iters``, ``quiet=True``, ...; mrirecon.help("recon") lists them). ``scan``: a file
    name (any format recon reads; the reader options apply) or a Scan. Nothing is written unless
    ``output="DIR"`` (then every file the command writes). The same input and options give the same
    image, bit for bit, as the command.

    Returns a Reconstruction; for a multi-volume input without ``volume=N``, a list of them (one per
    volume; recon_all always returns a list)."""
    out = _run(scan, options)
    return out[0] if len(out) == 1 else out


def recon_all(scan, **options):
    """recon, always returning a list of Reconstructions (one per volume)."""
    return _run(scan, options)
