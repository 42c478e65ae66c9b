"""Scans as numpy arrays: read from any file our readers accept, made by the phantom command, or built from
arrays; handed to the library as an mr_api_scan (recon/api/api.h) for reconstruction and writing."""

import contextlib
import ctypes
import os

import numpy as np

from . import _errors, _lib, _options

# the arrays of a scan: attribute, kind (recon/api/api.h), dtype, shape as a function of (M, C, Nx, Ny, Nz)
_ARRAYS = (
    ("trajectory", _lib.TRAJ, np.float32, lambda m, c, nx, ny, nz: (m, 3)),
    ("data", _lib.DATA, np.complex64, lambda m, c, nx, ny, nz: (c, m)),
    ("weights", _lib.WEIGHTS, np.float32, lambda m, c, nx, ny, nz: (m,)),
    ("truth", _lib.TRUTH, np.float32, lambda m, c, nx, ny, nz: (nz, ny, nx)),
    ("truth_bandlimited", _lib.TRUTH_BL, np.float32, lambda m, c, nx, ny, nz: (nz, ny, nx)),
    ("sens", _lib.SENS, np.complex64, lambda m, c, nx, ny, nz: (c, nz, ny, nx)),
    ("time", _lib.TIME, np.float32, lambda m, c, nx, ny, nz: (m,)),
    ("fieldmap", _lib.FIELDMAP, np.float32, lambda m, c, nx, ny, nz: (nz, ny, nx)),
)


def fov_triple(fov, nz, what):
    """A field of view in mm as (x, y, z): one value for every axis of the matrix (z: 0 = unknown for a 2D
    matrix, nz = 1), two for x and y, or three."""
    f = [float(x) for x in np.atleast_1d(np.asarray(fov, dtype=float)).ravel()]
    if len(f) == 1:
        f = [f[0], f[0], f[0] if nz > 1 else 0.0]
    elif len(f) == 2:
        f.append(0.0)
    if len(f) != 3:
        raise _errors.InvalidArgumentError(f"{what}: fov {fov!r} is not 1 to 3 values (mm)", "EINVAL")
    return tuple(f)


def geometry_dict(g):
    """An mr_api_geometry as a dict (None for the default placement)."""
    if not g.present:
        return None
    return {k: tuple(float(x) for x in getattr(g, k)) for k in ("position", "read_dir", "phase_dir", "slice_dir")}


def geometry_struct(geometry):
    """A dict of position, read_dir, phase_dir, slice_dir (LPS, mm) as mr_api_geometry; None: the default."""
    g = _lib.Geometry()
    if geometry is None:
        return g
    try:
        for k in ("position", "read_dir", "phase_dir", "slice_dir"):
            vals = [float(x) for x in geometry[k]]
            if len(vals) != 3 or not np.all(np.isfinite(vals)):
                raise ValueError(f"{k} must be 3 finite numbers")
            getattr(g, k)[:] = vals
    except (KeyError, TypeError, ValueError) as e:
        raise _errors.InvalidArgumentError(
            f"geometry: {e} (a dict of position, read_dir, phase_dir, slice_dir: 3 numbers each, LPS mm)",
            "EINVAL") from e
    g.present = 1
    return g


class Scan:
    """A non-Cartesian scan in memory (docs/PYTHON.md; conventions of docs/FORMAT.md).

    Arrays (numpy; None where absent), M samples, C coils, an Nx x Ny x Nz matrix:
      trajectory          float32 [M, 3]         k in cycles per field of view (Nyquist box [-N/2, N/2])
      data                complex64 [C, M]       the samples of each coil
      weights             float32 [M]            density compensation (gridding's --dcf file)
      truth               float32 [Nz, Ny, Nx]   voxel-averaged truth (phantoms); scored in the report
      truth_bandlimited   float32 [Nz, Ny, Nx]   band-limited truth
      sens                complex64 [C, Nz, Ny, Nx]  coil sensitivity maps (SENSE)
      time                float32 [M]            readout time of each sample in seconds
      fieldmap            float32 [Nz, Ny, Nx]   off-resonance in Hz
    Description:
      matrix (Nx, Ny, Nz), fov (mm per axis, 0 unknown; None when all unknown), noise_sigma (None when
      unknown), snr_db, noise_seed, traj_kind, phantom, name (names the scan in messages and the report),
      and where it came from: format ("mrirecon-kspace", "ismrmrd", "bart", "arrays", "phantom"), volume,
      volumes, label, prewhitened, noise_samples, geometry (scanner placement, dict or None), recon_matrix
      and recon_fov (the ISMRMRD reconSpace grid the images are cropped to; None otherwise).
    """

    def __init__(self, trajectory, data, matrix, *, fov=None, noise_sigma=None, sens=None, weights=None,
                 truth=None, truth_bandlimited=None, time=None, fieldmap=None, traj_kind="", phantom="",
                 name="arrays", geometry=None):
        """A scan from arrays. trajectory [M, 3] (or [M, 2] for 2D: kz = 0) in cycles/FOV; data [C, M] or
        [M] (one coil); matrix N, (Nx, Ny) or (Nx, Ny, Nz); fov in mm (one value: every axis of the
        matrix); noise_sigma per real/imaginary part; the other arrays as in the class description;
        geometry: a dict of position, read_dir, phase_dir, slice_dir (LPS mm) placing the images."""
        self.name = str(name)
        m = [int(x) for x in np.atleast_1d(np.asarray(matrix)).ravel()]
        if not 1 <= len(m) <= 3:
            raise _errors.InvalidArgumentError(f"{self.name}: matrix {matrix!r} is not N, (Nx, Ny) or (Nx, Ny, Nz)",
                                               "EINVAL")
        self.matrix = tuple(m * 2 + [1] if len(m) == 1 else m + [1] * (3 - len(m)))
        traj = np.asarray(trajectory, dtype=np.float32)
        if traj.ndim == 2 and traj.shape[1] == 2:
            traj = np.concatenate([traj, np.zeros((traj.shape[0], 1), np.float32)], axis=1)
        self.trajectory = traj
        d = np.asarray(data, dtype=np.complex64)
        self.data = d[np.newaxis, :] if d.ndim == 1 else d
        self.fov = None if fov is None else fov_triple(fov, self.matrix[2], self.name)
        self.noise_sigma = None if noise_sigma is None else float(noise_sigma)
        self.sens = None if sens is None else np.asarray(sens, dtype=np.complex64)
        self.weights = None if weights is None else np.asarray(weights, dtype=np.float32)
        self.truth = None if truth is None else np.asarray(truth, dtype=np.float32)
        self.truth_bandlimited = None if truth_bandlimited is None else np.asarray(truth_bandlimited, np.float32)
        self.time = None if time is None else np.asarray(time, dtype=np.float32)
        self.fieldmap = None if fieldmap is None else np.asarray(fieldmap, dtype=np.float32)
        self.traj_kind = str(traj_kind)
        self.phantom = str(phantom)
        self.snr_db = 0.0
        self.noise_seed = 0
        self.format = "arrays"
        self.volume = 0
        self.volumes = 1
        self.label = "volume0"
        self.prewhitened = False
        self.noise_samples = 0
        self.geometry = geometry
        self.recon_matrix = None
        self.recon_fov = None

    # ---- shape --------------------------------------------------------------------------------------
    @property
    def nsamples(self):
        """M, the samples per coil."""
        return int(self.trajectory.shape[0])

    @property
    def ncoils(self):
        """C, the coils."""
        return int(self.data.shape[0])

    @property
    def image_shape(self):
        """(Nz, Ny, Nx): the shape of this scan's images."""
        return (self.matrix[2], self.matrix[1], self.matrix[0])

    def __repr__(self):
        extra = [a for a, _, _, _ in _ARRAYS[2:] if getattr(self, a) is not None]
        return (f"Scan({self.name!r}: {'x'.join(map(str, self.matrix))}, {self.nsamples} samples x "
                f"{self.ncoils} coil(s), {self.traj_kind or 'trajectory'}, format {self.format}"
                f"{', ' + ', '.join(extra) if extra else ''})")

    # ---- to and from the library ---------------------------------------------------------------------
    def _check_shapes(self):
        nx, ny, nz = self.matrix
        if self.trajectory.ndim != 2 or self.trajectory.shape[1] != 3:
            raise _errors.InvalidArgumentError(
                f"{self.name}: trajectory has shape {self.trajectory.shape}, expected (M, 3) (or (M, 2) in 2D)",
                "EINVAL")
        m, c = self.trajectory.shape[0], self.data.shape[0]
        for attr, _, _, shape in _ARRAYS:
            a = getattr(self, attr)
            want = shape(m, c, nx, ny, nz)
            if a is None:
                continue
            if a.shape != want:
                raise _errors.InvalidArgumentError(
                    f"{self.name}: {attr} has shape {a.shape}, expected {want} (M = {m} samples, C = {c} coils, "
                    f"matrix {nx}x{ny}x{nz})", "EINVAL")

    def _info(self):
        i = _lib.ScanInfo()
        i.matrix[:] = self.matrix
        i.nsamples = self.nsamples
        i.ncoils = self.ncoils
        i.fov_mm[:] = self.fov if self.fov is not None else (0.0, 0.0, 0.0)
        i.noise_sigma = -1.0 if self.noise_sigma is None else self.noise_sigma
        i.snr_db = self.snr_db
        i.noise_seed = int(self.noise_seed)
        i.traj_kind = self.traj_kind.encode()[:63]
        i.phantom = self.phantom.encode()[:63]
        i.name = self.name.encode()[:1023]
        i.format = self.format.encode()[:31]
        i.volume = self.volume
        i.volumes = self.volumes
        i.label = self.label.encode()[:95]
        i.prewhitened = int(bool(self.prewhitened))
        i.noise_samples = int(self.noise_samples)
        i.geometry = geometry_struct(self.geometry)
        if self.recon_matrix is not None or self.geometry is not None:
            i.has_grid = 1
            i.recon_matrix[:] = self.recon_matrix if self.recon_matrix is not None else self.matrix
            i.recon_fov_mm[:] = self.recon_fov if self.recon_fov is not None else i.fov_mm[:]
        return i

    @contextlib.contextmanager
    def _handle(self):
        """The scan as an mr_api_scan for the length of a with block (under the library's lock)."""
        self._check_shapes()
        lib = _lib.load()
        h = ctypes.c_void_p()
        with _lib.LOCK:
            _lib.check(lib.mr_api_scan_create(ctypes.byref(self._info()), ctypes.byref(h)))
            try:
                for attr, kind, dtype, _ in _ARRAYS:
                    a = getattr(self, attr)
                    if a is None:
                        continue
                    a = np.ascontiguousarray(a, dtype=dtype)
                    floats = a.size * (2 if dtype == np.complex64 else 1)
                    _lib.check(lib.mr_api_scan_set(h, kind, _lib.fptr(a), floats))
                yield h
            finally:
                lib.mr_api_scan_free(h)

    @classmethod
    def _from_handle(cls, h):
        """A Scan with copies of an mr_api_scan's arrays and description (the caller holds the lock)."""
        lib = _lib.load()
        i = _lib.ScanInfo()
        lib.mr_api_scan_info_get(h, ctypes.byref(i))
        s = cls.__new__(cls)
        s.matrix = tuple(int(x) for x in i.matrix)
        nx, ny, nz = s.matrix
        m, c = int(i.nsamples), int(i.ncoils)
        for attr, kind, dtype, shape in _ARRAYS:
            floats = lib.mr_api_scan_size(h, kind)
            if floats == 0:
                setattr(s, attr, None)
                continue
            a = np.empty(shape(m, c, nx, ny, nz), dtype=dtype)
            _lib.check(lib.mr_api_scan_get(h, kind, _lib.fptr(a), floats))
            setattr(s, attr, a)
        fov = tuple(float(x) for x in i.fov_mm)
        s.fov = fov if any(fov) else None
        s.noise_sigma = float(i.noise_sigma) if i.noise_sigma >= 0 else None
        s.snr_db = float(i.snr_db)
        s.noise_seed = int(i.noise_seed)
        s.traj_kind = _lib.text(i.traj_kind)
        s.phantom = _lib.text(i.phantom)
        s.name = _lib.text(i.name)
        s.format = _lib.text(i.format)
        s.volume, s.volumes = int(i.volume), int(i.volumes)
        s.label = _lib.text(i.label)
        s.prewhitened = bool(i.prewhitened)
        s.noise_samples = int(i.noise_samples)
        s.geometry = geometry_dict(i.geometry)
        s.recon_matrix = tuple(int(x) for x in i.recon_matrix) if i.has_grid else None
        s.recon_fov = tuple(float(x) for x in i.recon_fov_mm) if i.has_grid else None
        return s

    # ---- writing ---------------------------------------------------------------------------------------
    def write(self, path, format=None, bart_scale=False):
        """Write the scan: format "mrirecon" (our HDF5, docs/FORMAT.md) or "bart" (path a prefix: path_traj,
        path_ksp [, path_sens] .hdr/.cfl, what `bart pics` reads; bart_scale multiplies the data by
        sqrt(Nx Ny Nz) as `mrirecon convert --bart-scale`); None: by name (.h5/.hdf5 mrirecon, else bart).
        Written atomically."""
        path = os.fspath(path)
        if format is None and not path.endswith((".h5", ".hdf5")):
            for suffix in (".hdr", ".cfl"):
                path = path[: -len(suffix)] if path.endswith(suffix) else path
            for suffix in ("_ksp", "_traj"):
                path = path[: -len(suffix)] if path.endswith(suffix) else path
        lib = _lib.load()
        with self._handle() as h:
            _lib.check(lib.mr_api_scan_write(h, path.encode(), None if format is None else format.encode(),
                                             int(bool(bart_scale))))


def read(path, volume=None, **options):
    """Read a scan file as ``mrirecon recon`` reads it: mrirecon HDF5, ISMRMRD (.h5/.mrd; multi-coil data
    prewhitened with the noise scans unless prewhiten=False) or a BART pair (NAME_traj + NAME_ksp [+
    NAME_sens], or NAME with traj=...). ``volume``: which volume of a multi-volume ISMRMRD file (required
    when it holds several: read_all reads them all). Options: recon's reader options (traj_units,
    traj_sign, prewhiten, space, averages, matrix, fov, traj; mrirecon.options("read"))."""
    lib = _lib.load()
    args = _options.command_line("read", dict(options, volume=volume))
    n, argv = _lib.argv(args)
    h = ctypes.c_void_p()
    with _lib.LOCK:
        _lib.check(lib.mr_api_scan_read(os.fspath(path).encode(), n, argv, ctypes.byref(h)))
        try:
            return Scan._from_handle(h)
        finally:
            lib.mr_api_scan_free(h)


def read_all(path, **options):
    """Every volume of a scan file, as a list of Scans (one for the single-volume formats)."""
    first = read(path, volume=0, **options)
    return [first] + [read(path, volume=v, **options) for v in range(1, first.volumes)]


def phantom(**options):
    """A simulated scan with ``mrirecon phantom``'s options (matrix=128, traj="radial", spokes=201,
    readout=256, snr=30, seed=1, coils=8, marker=True, ...; mrirecon.help("phantom")); output="scan.h5"
    also writes it there. The same options give the same scan (bit for bit) as the command."""
    lib = _lib.load()
    n, argv = _lib.argv(_options.command_line("phantom", options))
    h = ctypes.c_void_p()
    with _lib.LOCK:
        _lib.check(lib.mr_api_phantom(n, argv, ctypes.byref(h)))
        try:
            return Scan._from_handle(h)
        finally:
            lib.mr_api_scan_free(h)
