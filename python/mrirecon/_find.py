"""Where libmrirecon.so is found, first match wins (standard library only: the package's build backend,
python/_build/backend.py, uses it too):
  1. the environment variable MRIRECON_LIB: the library file, or a folder holding libmrirecon.so (when
     set, nothing else is tried);
  2. next to the package (what ``pip install ./python`` copies there);
  3. the build tree of the source checkout the package sits in: <checkout>/build/libmrirecon.so (what
     scripts/setup.sh builds), then the other <checkout>/build*/ folders, the most recently built first.
"""

import os
import pathlib

LIB_NAME = "libmrirecon.so"
ENV_VAR = "MRIRECON_LIB"


def candidates(package_file):
    """The places tried for the package whose __init__ or module file is `package_file`, in order."""
    env = os.environ.get(ENV_VAR)
    if env:
        p = pathlib.Path(env)
        return [p / LIB_NAME if p.is_dir() else p]
    here = pathlib.Path(package_file).resolve().parent
    found = [here / LIB_NAME]
    checkout = here.parent.parent
    if (checkout / "recon" / "api.h").is_file():
        builds = [d for d in checkout.glob("build*") if d.is_dir() and (d / LIB_NAME).is_file()]
        builds.sort(key=lambda d: (d.name != "build", -(d / LIB_NAME).stat().st_mtime))
        found += [d / LIB_NAME for d in builds]
    return found
