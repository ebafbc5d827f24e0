"""The C ABI (include/rung/rung.h) through ctypes: finding and loading
librung_engine, the function declarations, and statuses turned into errors.

Nothing here is loaded on import: :func:`lib` loads the library on first use
and raises :class:`rung.Error` naming every place it looked when it cannot.
"""

import ctypes
import ctypes.util
import os
import sysconfig
import threading
from pathlib import Path

from .errors import ErrorCode, Failed, error_class_for_exit_code

# The ABI version this module is written against (RUNG_ABI_VERSION in rung.h).
ABI_VERSION = 3
LIBRARY_NAME = "librung_engine.so.1"

_lock = threading.Lock()
_lib = None


def _installed_prefixes():
    """Prefixes the package may be installed under: <prefix>/lib/python3*/site-packages/rung and the like."""
    here = Path(__file__).resolve().parent
    return [p for p in list(here.parents)[:4]]


def _lib_dirs_under(prefix):
    multiarch = sysconfig.get_config_var("MULTIARCH")
    dirs = [prefix / "lib"]
    if multiarch:
        dirs.append(prefix / "lib" / multiarch)
    dirs.append(prefix / "lib64")
    return dirs


def _candidates():
    """(description, path-or-name) pairs in the order they are tried."""
    env = os.environ.get("RUNG_LIB_DIR")
    if env:
        # RUNG_LIB_DIR is the whole answer when set: a wrong one is an error, never a fallback.
        d = Path(env)
        return [("RUNG_LIB_DIR", d / LIBRARY_NAME), ("RUNG_LIB_DIR", d / "librung_engine.so")], True
    out = []
    for prefix in _installed_prefixes():
        for d in _lib_dirs_under(prefix):
            out.append(("beside the package", d / LIBRARY_NAME))
    kit = kit_dirs()
    if kit is not None:
        out.append(("the kit the package was installed from", Path(kit[0]) / LIBRARY_NAME))
    return out, False


def kit_dirs():
    """(lib, bin) of the kit this package was installed from (_kit.py, written by rung's
    `cmake --install`), or None for a package that did not come from a kit."""
    try:
        from . import _kit
    except ImportError:
        return None
    return _kit.LIB_DIR, _kit.BIN_DIR


def _load():
    candidates, from_env = _candidates()
    absent, failed = [], []
    for what, path in candidates:
        if not path.is_file():
            absent.append(str(path))
            continue
        try:
            return ctypes.CDLL(str(path)), str(path)
        except OSError as e:
            failed.append(f"{path} ({e})")
    looked = []
    if from_env:
        looked.append(f"RUNG_LIB_DIR={os.environ['RUNG_LIB_DIR']}: " + ", ".join(absent) + (" (not there)" if absent else ""))
    else:
        looked.append("RUNG_LIB_DIR (not set)")
        if absent:
            looked.append("beside the package and its kit: " + ", ".join(absent) + " (not there)")
    looked += [f"{f} failed to load" for f in failed]
    if not from_env:
        name = ctypes.util.find_library("rung_engine")
        if name is None:
            looked.append("the system's library path (ctypes.util.find_library('rung_engine') found nothing)")
        else:
            try:
                return ctypes.CDLL(name), name
            except OSError as e:
                looked.append(f"{name} from the system's library path ({e})")
    raise Failed(
        "cannot load rung's engine library (librung_engine.so.1); looked at: " + "; ".join(looked)
        + ". Set RUNG_LIB_DIR to the directory that holds it",
        code=ErrorCode.load_failed, exit_code=1)


class Progress(ctypes.Structure):
    """rung_progress."""

    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("total", ctypes.c_size_t),
        ("landed", ctypes.c_size_t),
        ("building", ctypes.c_char_p),
        ("line", ctypes.c_char_p),
        ("done", ctypes.c_int32),
    ]


class IoInfo(ctypes.Structure):
    """rung_io_info."""

    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("name", ctypes.c_char_p),
        ("element_type", ctypes.c_int32),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("rank", ctypes.c_size_t),
        ("dim_names", ctypes.POINTER(ctypes.c_char_p)),
    ]


PROGRESS_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.POINTER(Progress))

RUNG_INPUTS = 0
RUNG_OUTPUTS = 1

_vp = ctypes.c_void_p
_cp = ctypes.c_char_p
_sz = ctypes.c_size_t
_i32 = ctypes.c_int32
_pvp = ctypes.POINTER(ctypes.c_void_p)

# name: (restype, argtypes). Handles are void*; a char* the caller frees is void* too (read, then rung_string_free).
_DECLARATIONS = {
    "rung_abi_version": (_i32, []),
    "rung_version_string": (_cp, []),
    "rung_status_code": (_i32, [_vp]),
    "rung_status_message": (_cp, [_vp]),
    "rung_status_exit_code": (_i32, [_vp]),
    "rung_status_free": (None, [_vp]),
    "rung_string_free": (None, [_vp]),
    "rung_options_create": (_vp, [_pvp]),
    "rung_options_free": (None, [_vp]),
    "rung_options_set": (_vp, [_vp, _cp, _cp]),
    "rung_options_add_model": (_vp, [_vp, _cp, _cp, _cp]),
    "rung_options_set_progress": (_vp, [_vp, PROGRESS_FN, _vp]),
    "rung_engine_start": (_vp, [_vp, _pvp]),
    "rung_engine_free": (None, [_vp]),
    "rung_engine_about_line": (_vp, [_vp]),
    "rung_engine_chosen_rung": (_vp, [_vp]),
    "rung_engine_chosen_reason": (_vp, [_vp]),
    "rung_engine_decision_json": (_vp, [_vp]),
    "rung_engine_progress_line": (_vp, [_vp]),
    "rung_engine_probe_done": (_i32, [_vp]),
    "rung_engine_wait_until_settled": (_i32, [_vp, ctypes.c_int64]),
    "rung_engine_open_job": (_vp, [_vp, _pvp]),
    "rung_job_free": (None, [_vp]),
    "rung_job_rung": (_cp, [_vp]),
    "rung_job_model_ids_json": (_vp, [_vp]),
    "rung_job_session": (_vp, [_vp, _cp, _pvp]),
    "rung_session_model_name": (_cp, [_vp]),
    "rung_session_model_id": (_cp, [_vp]),
    "rung_session_rung": (_cp, [_vp]),
    "rung_session_placement_reason": (_cp, [_vp]),
    "rung_element_type_name": (_cp, [_i32]),
    "rung_session_describe": (_sz, [_vp, _i32]),
    "rung_session_io": (_vp, [_vp, _i32, _sz, ctypes.POINTER(IoInfo)]),
    "rung_value_create_view": (_vp, [_cp, _i32, ctypes.POINTER(ctypes.c_int64), _sz, _vp, _sz, _pvp]),
    "rung_value_create_strings": (_vp, [_cp, ctypes.POINTER(ctypes.c_int64), _sz, ctypes.POINTER(_cp), _sz, _pvp]),
    "rung_value_free": (None, [_vp]),
    "rung_value_name": (_cp, [_vp]),
    "rung_value_element_type": (_i32, [_vp]),
    "rung_value_shape": (ctypes.POINTER(ctypes.c_int64), [_vp, ctypes.POINTER(_sz)]),
    "rung_value_data": (_vp, [_vp, ctypes.POINTER(_sz)]),
    "rung_value_string_count": (_sz, [_vp]),
    "rung_value_string": (_cp, [_vp, _sz]),
    "rung_session_run": (_vp, [_vp, _pvp, _sz, ctypes.POINTER(_pvp), ctypes.POINTER(_sz)]),
    "rung_values_free": (None, [_pvp, _sz]),
    # Version 2: ONNX Runtime's own handles.
    "rung_session_ort_api": (_vp, [_vp]),
    "rung_session_ort_api_version": (ctypes.c_uint32, [_vp]),
    "rung_session_ort_session": (_vp, [_vp]),
}


def lib():
    """The loaded librung_engine (a ctypes.CDLL with every rung_ function declared); loads it on first use.

    Raises rung.Failed naming every place it looked, or the library's ABI
    version when it is older than this module needs.
    """
    global _lib
    if _lib is not None:
        return _lib
    with _lock:
        if _lib is not None:
            return _lib
        dll, where = _load()
        missing = [name for name in _DECLARATIONS if not hasattr(dll, name)]
        if missing:
            raise Failed(f"{where} is not rung's engine library: it lacks {', '.join(missing)}",
                         code=ErrorCode.load_failed, exit_code=1)
        for name, (restype, argtypes) in _DECLARATIONS.items():
            fn = getattr(dll, name)
            fn.restype = restype
            fn.argtypes = argtypes
        version = dll.rung_abi_version()
        if version < ABI_VERSION:
            raise Failed(f"{where} serves rung's C ABI version {version}; this module needs {ABI_VERSION} or newer",
                         code=ErrorCode.load_failed, exit_code=1)
        dll.rung_path = where
        _lib = dll
        return _lib


def text(value):
    """A const char* the library returned (bytes or None) as str."""
    return "" if value is None else value.decode("utf-8", "replace")


def owned_text(pointer, what):
    """A char* the caller owns: read it, free it. NULL (out of memory inside rung) is an error."""
    if not pointer:
        raise Failed(f"{what} returned nothing (out of memory?)", code=ErrorCode.runtime, exit_code=1)
    L = lib()
    try:
        return ctypes.string_at(pointer).decode("utf-8", "replace")
    finally:
        L.rung_string_free(pointer)


def encode(value):
    """A str or path for the C side: UTF-8 (bytes given are passed as they are)."""
    if isinstance(value, bytes):
        return value
    return os.fspath(value).encode("utf-8", "surrogateescape")


def error_from_status(status):
    """The rung.Error subclass for a non-NULL rung_status*, which this frees."""
    L = lib()
    try:
        code_number = L.rung_status_code(status)
        message = text(L.rung_status_message(status))
        exit_code = L.rung_status_exit_code(status)
    finally:
        L.rung_status_free(status)
    try:
        code = ErrorCode(code_number)
    except ValueError:
        code = code_number  # a code newer than this module: still its number
    return error_class_for_exit_code(exit_code)(message, code=code, exit_code=exit_code)


def check(status):
    """Raises the status's error when a call failed (status is not NULL)."""
    if status:
        raise error_from_status(status)
