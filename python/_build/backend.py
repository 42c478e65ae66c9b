"""The package's build backend (PEP 517, PEP 660): `pip install ./python` packs python/mrirecon and the
libmrirecon.so that CMake built into a wheel, with the standard library alone (no compiler, no download,
no setuptools). The library is found as the package finds it (mrirecon/_find.py): MRIRECON_LIB, else
<checkout>/build/libmrirecon.so (scripts/setup.sh), else the other build*/ folders. `pip install -e
./python` installs a path to the sources instead (the library then comes from the build tree)."""

import base64
import hashlib
import importlib.util
import io
import pathlib
import re
import sysconfig
import tarfile
import zipfile

ROOT = pathlib.Path(__file__).resolve().parent.parent  # python/
PACKAGE = ROOT / "mrirecon"
NAME = "mrirecon"


def _version():
    text = (PACKAGE / "__init__.py").read_text()
    return re.search(r'^__version__ = "([^"]+)"', text, re.M).group(1)


def _metadata():
    return (f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {_version()}\n"
            "Summary: Iterative non-Cartesian MRI reconstruction (the mrirecon library from Python)\n"
            "Requires-Python: >=3.8\nRequires-Dist: numpy\n")


def _library():
    spec = importlib.util.spec_from_file_location("_mrirecon_find", PACKAGE / "_find.py")
    find = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(find)
    tried = find.candidates(PACKAGE / "__init__.py")
    for p in tried:
        if p.is_file():
            return p
    raise RuntimeError(f"{find.LIB_NAME} not found (tried {', '.join(map(str, tried))}): build it first "
                       f"(bash scripts/setup.sh), or set {find.ENV_VAR} to it")


def _tag():
    return "py3-none-" + re.sub(r"[-.]", "_", sysconfig.get_platform())


class _Wheel:
    def __init__(self, directory, tag):
        self.name = f"{NAME}-{_version()}-{tag}.whl"
        self.path = pathlib.Path(directory) / self.name
        self.zip = zipfile.ZipFile(self.path, "w", zipfile.ZIP_DEFLATED)
        self.record = []
        self.info = f"{NAME}-{_version()}.dist-info"

    def add(self, arcname, data, mode=0o644):
        z = zipfile.ZipInfo(arcname, date_time=(2020, 1, 1, 0, 0, 0))
        z.external_attr = (0o100000 | mode) << 16
        z.compress_type = zipfile.ZIP_DEFLATED
        self.zip.writestr(z, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        self.record.append(f"{arcname},sha256={digest},{len(data)}")

    def close(self, tag):
        self.add(f"{self.info}/METADATA", _metadata().encode())
        wheel = f"Wheel-Version: 1.0\nGenerator: mrirecon-build\nRoot-Is-Purelib: false\nTag: {tag}\n"
        self.add(f"{self.info}/WHEEL", wheel.encode())
        record = "\n".join(self.record + [f"{self.info}/RECORD,,"]) + "\n"
        self.zip.writestr(f"{self.info}/RECORD", record)
        self.zip.close()
        return self.name


def _sources():
    return sorted(p for p in PACKAGE.glob("*.py"))


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    tag = _tag()
    w = _Wheel(wheel_directory, tag)
    for p in _sources():
        w.add(f"{NAME}/{p.name}", p.read_bytes())
    w.add(f"{NAME}/libmrirecon.so", _library().read_bytes(), 0o755)
    return w.close(tag)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    tag = _tag()
    w = _Wheel(wheel_directory, tag)
    w.add(f"{NAME}_editable.pth", (str(ROOT) + "\n").encode())
    return w.close(tag)


def build_sdist(sdist_directory, config_settings=None):
    base = f"{NAME}-{_version()}"
    name = f"{base}.tar.gz"
    with tarfile.open(pathlib.Path(sdist_directory) / name, "w:gz") as tar:
        for p in [ROOT / "pyproject.toml", ROOT / "_build" / "backend.py"] + _sources():
            tar.add(p, arcname=f"{base}/{p.relative_to(ROOT)}")
        info = _metadata().encode()
        t = tarfile.TarInfo(f"{base}/PKG-INFO")
        t.size = len(info)
        tar.addfile(t, io.BytesIO(info))
    return name
