"""Keyword arguments to a command line for the library, which parses it with the command's own option table
(recon/cli/cmd_args.h): the names, values, defaults, checks and messages are those of ``mrirecon COMMAND``."""

import ctypes
import functools
import numbers
import os

from . import _lib


@functools.lru_cache(maxsize=None)
def table(command):
    """The options of ``command`` ("recon", "phantom", "read"): {name: (short, type, choices)}."""
    lib = _lib.load()
    ptr = ctypes.c_void_p()
    with _lib.LOCK:
        _lib.check(lib.mr_api_options(command.encode(), ctypes.byref(ptr)))
        text = _lib.take_text(ptr)
    out = {}
    for line in text.splitlines():
        name, short, kind, choices = line.split("\t")
        out[name] = (short, kind, tuple(choices.split("|")) if choices else ())
    return out


def help_text(command):
    """The --help text of ``command``."""
    lib = _lib.load()
    ptr = ctypes.c_void_p()
    with _lib.LOCK:
        _lib.check(lib.mr_api_help(command.encode(), ctypes.byref(ptr)))
        return _lib.take_text(ptr)


def _value(v):
    if isinstance(v, (str, os.PathLike)):
        return os.fspath(v)
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, numbers.Integral):
        return str(int(v))
    if isinstance(v, numbers.Real):
        return repr(float(v))  # the shortest text that reads back to the same double
    if hasattr(v, "__iter__"):  # a list of values: "a,b,c" (--matrix 128,128,4, --method cg,gridding-kb)
        return ",".join(_value(x) for x in v)
    return str(v)


def _name(key, opts):
    """A keyword to an option name: lambda_ -> lambda, lambda_rel -> lambda-rel, o -> output."""
    name = key[:-1] if key.endswith("_") else key
    name = name.replace("_", "-")
    if len(name) == 1:
        for long, (short, _, _) in opts.items():
            if short == name:
                return long
    return name


def command_line(command, kwargs):
    """The arguments (without the command name) for keyword options. None leaves an option out; a flag
    takes True (given) or False (left out); a choice of on/off takes a bool; a list or tuple becomes
    "a,b,c". An unknown name is passed on as --name, so that the command's own message refuses it."""
    opts = table(command)
    args = []
    for key, v in kwargs.items():
        if v is None:
            continue
        name = _name(key, opts)
        if name not in opts:
            args.append(f"--{name}")
            continue
        _, kind, choices = opts[name]
        if kind == "flag" and (isinstance(v, bool) or (isinstance(v, numbers.Integral) and v in (0, 1))):
            if v:
                args.append(f"--{name}")
            continue
        if isinstance(v, bool) and set(choices) == {"on", "off"}:
            v = "on" if v else "off"
        args.append(f"--{name}={_value(v)}")
    return args
