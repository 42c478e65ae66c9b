"""mrirecon: iterative non-Cartesian MRI reconstruction (exact and NUFFT models, TV / wavelet / quadratic
priors, SENSE, CPU and GPU) from Python, over the shared library libmrirecon built with the command.

    import mrirecon
    scan = mrirecon.phantom(matrix=128, traj="radial", spokes=201, readout=256, snr=30, seed=1)
    rec = mrirecon.recon(scan)                       # the options of `mrirecon recon`, as keywords
    rec.image                                        # complex64 [Nz, Ny, Nx]
    rec.report["methods"][0]["metrics"]              # report.json as a dict

Reading:     read(path, volume=None, **reader_options) -> Scan; read_all(path) -> [Scan]
Scans:       Scan(trajectory, data, matrix, fov=..., sens=..., noise_sigma=...); Scan.write(path)
Phantoms:    phantom(**phantom_options) -> Scan
Reconstruct: recon(scan_or_path, **recon_options) -> Reconstruction (images, image, report)
Images:      write_image(path, image, format=None, ...), read_image(path)
Options:     help("recon"), options("recon")  (the command's own table: the same names and checks)
Errors:      mrirecon.Error and its subclasses, with the library's messages (UsageError for options)

docs/PYTHON.md in the source tree is the reference.
"""

from ._errors import (CudaError, Error, FFTError, FileError, FormatError, InternalError, InterruptedError_,
                      InvalidArgumentError, LibraryNotFoundError, NoDeviceError, NotSupportedError,
                      OutOfMemoryError, UsageError)
from ._images import read_image, write_image
from ._lib import library_path
from ._options import help_text as _help_text
from ._options import table as _table
from ._recon import Reconstruction, recon, recon_all
from ._scan import Scan, phantom, read, read_all

__version__ = "0.1.0"


def help(command="recon"):  # noqa: A001 (the command's --help, as `mrirecon help COMMAND`)
    """The --help text of a command: "recon", "phantom" or "read" (the reader options of read())."""
    return _help_text(command)


def options(command="recon"):
    """The options of a command as {name: (short, type, choices)}: the keywords recon(), phantom() and
    read() take (a keyword's "_" stands for "-": lambda_rel for --lambda-rel; lambda_ for --lambda)."""
    return dict(_table(command))


__all__ = [
    "CudaError", "Error", "FFTError", "FileError", "FormatError", "InternalError", "InterruptedError_",
    "InvalidArgumentError", "LibraryNotFoundError", "NoDeviceError", "NotSupportedError", "OutOfMemoryError",
    "Reconstruction", "Scan", "UsageError", "help", "library_path", "options", "phantom", "read", "read_all",
    "read_image", "recon", "recon_all", "write_image",
]
