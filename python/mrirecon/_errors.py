"""The exceptions: one class per status of libmrirecon (base/status.h), the message is the library's."""


class Error(Exception):
    """A failure reported by libmrirecon.

    ``str(error)`` (and ``error.message``) is the library's message, the text the ``mrirecon`` command
    prints (it names the file, dataset, option or value at fault); ``error.status`` is the status name
    (``"EFORMAT"``, ``"USAGE"``, ...).
    """

    def __init__(self, message, status="UNKNOWN"):
        super().__init__(message)
        self.message = message
        self.status = status


class UsageError(Error, ValueError):
    """An option name or value the command refuses (``mrirecon`` exits 2): unknown option, a value out of
    range, options that exclude each other or do not apply."""


class InvalidArgumentError(Error, ValueError):
    """EINVAL: an argument or an input that cannot be used as given (arrays of the wrong size, a volume
    that does not exist, an option the input contradicts)."""


class FormatError(Error, ValueError):
    """EFORMAT: a malformed input file."""


class FileError(Error, OSError):
    """EIO: a file that cannot be opened, read or written."""


class OutOfMemoryError(Error, MemoryError):
    """ENOMEM."""


class NoDeviceError(Error, RuntimeError):
    """ENODEV: ``device="gpu"`` without a usable GPU."""


class CudaError(Error, RuntimeError):
    """ECUDA: a CUDA call failed."""


class FFTError(Error, RuntimeError):
    """EFFT: FFT planning failed."""


class NotSupportedError(Error, NotImplementedError):
    """ENOTSUP: not supported by this build or this input (e.g. DICOM without DCMTK)."""


class InterruptedError_(Error, RuntimeError):
    """EINTR: the run was interrupted."""


class InternalError(Error, RuntimeError):
    """EINTERNAL: a defect of libmrirecon; please report it with the message."""


class LibraryNotFoundError(Error, ImportError):
    """libmrirecon.so was not found or cannot be used (see docs/PYTHON.md, "Where the library is found")."""


BY_STATUS = {
    "USAGE": UsageError,
    "EINVAL": InvalidArgumentError,
    "EFORMAT": FormatError,
    "EIO": FileError,
    "ENOMEM": OutOfMemoryError,
    "ENODEV": NoDeviceError,
    "ECUDA": CudaError,
    "EFFT": FFTError,
    "ENOTSUP": NotSupportedError,
    "EINTR": InterruptedError_,
    "EINTERNAL": InternalError,
}


def from_status(status, message):
    """The exception for a status name and message."""
    return BY_STATUS.get(status, Error)(message, status)
