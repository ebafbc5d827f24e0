"""The engine an application embeds, over rung's C ABI (rung/rung.h) through ctypes.

    engine = rung.Engine.start(cache_dir="/tmp/rung", models=[("ppocr_cls", "cls.onnx", "generic")])
    with engine.open_job() as job:
        outputs = job.session("ppocr_cls").run({"x": crop})   # {name: numpy.ndarray}

Ownership follows the C ABI: a Job keeps its Engine alive and a Session its
Job, so a handle is never freed while something opened from it is still in
use; close() (or a with block) frees a handle now, and garbage collection
frees it otherwise. Inputs are not copied: a C-contiguous array of the right
dtype is lent to the engine for the run (see :func:`input_view`); outputs are
copied into numpy arrays that Python owns.
"""

import atexit
import collections
import ctypes
import itertools
import json
import math
import os
import sys
import threading
import time
import traceback
import weakref

import numpy as np

from . import _abi
from .errors import ErrorCode, Failed, InputError

__all__ = ["Engine", "Job", "Session", "Options", "IoInfo", "Progress", "input_view", "abi_version", "version"]

IoInfo = collections.namedtuple("IoInfo", ["name", "dtype", "shape", "dim_names"])
IoInfo.__doc__ = """One input or output as the model declares it.

name: its name. dtype: a numpy dtype, or the string 'string' for a string
tensor (or the type's name, e.g. 'bfloat16', for a type numpy has none of;
such values travel in uint16 or uint8 arrays). shape: a tuple with None for a
dynamic dimension. dim_names: a tuple of each dimension's symbolic name
('' for a fixed one)."""

Progress = collections.namedtuple("Progress", ["total", "landed", "building", "line", "done"])
Progress.__doc__ = """What the progress callback is told: total engines the chosen rung needs,
how many have landed (built or found in the cache), the model being built now
('' when idle), the progress line ('Preparing engines · 3 of 6'; '' when done
and clean), and done (True once every engine has landed or failed)."""

# ONNX's TensorProto numbers (rung_element_type) and the numpy dtypes that hold them.
_STRING = 8
_NUMPY_OF = {
    1: np.float32, 2: np.uint8, 3: np.int8, 4: np.uint16, 5: np.int16, 6: np.int32, 7: np.int64,
    9: np.bool_, 10: np.float16, 11: np.float64, 12: np.uint32, 13: np.uint64,
}
# Types numpy has no dtype for: their bits travel in an unsigned container of the same width.
_CONTAINER_OF = {16: np.uint16, 17: np.uint8, 18: np.uint8, 19: np.uint8, 20: np.uint8}
_TYPE_OF = {np.dtype(t).str[1:]: code for code, t in _NUMPY_OF.items()}
_LITTLE = sys.byteorder == "little"


def abi_version():
    """The C ABI version of the loaded library (rung_abi_version); at least 1."""
    return _abi.lib().rung_abi_version()


def version():
    """The loaded library's release, e.g. '0.1.0' (rung_version_string)."""
    return _abi.text(_abi.lib().rung_version_string())


def _invalid(message):
    return InputError(message, code=ErrorCode.invalid_argument, exit_code=2)


# ---- Handles ------------------------------------------------------------------------------------

# Set on a thread while it runs the progress callback: a handle freed there (by the garbage
# collector, say) is freed on a fresh thread instead, since rung_engine_free may not be called
# from the callback.
_in_callback = threading.local()
_native_lock = threading.RLock()
_live = weakref.WeakValueDictionary()  # every native handle not yet freed, by creation order
_counter = itertools.count()


class _Native:
    """One C handle and the function that frees it.

    A child (a job of an engine) counts itself on its parent, and a parent asked to close
    while children live is freed when the last of them is: the C ABI's order (free the
    jobs, then the engine) holds however Python's garbage collector orders finalizers.
    """

    __slots__ = ("ptr", "free", "what", "parent", "keep", "children", "closing", "__weakref__")

    def __init__(self, ptr, free, what, parent=None, keep=None):
        self.ptr = ptr
        self.free = free
        self.what = what
        self.parent = parent
        self.keep = keep  # what the C side calls into (the progress callback) until the free
        self.children = 0
        self.closing = False
        if parent is not None:
            with _native_lock:
                parent.children += 1
        _live[next(_counter)] = self

    def get(self):
        """The pointer, or InputError when the handle is closed."""
        ptr = self.ptr
        if not ptr or self.closing:
            raise _invalid(f"the {self.what} is closed")
        return ptr

    def close(self):
        with _native_lock:
            if not self.ptr:
                return
            self.closing = True
            if self.children:
                return  # freed when its last child is
            ptr, self.ptr = self.ptr, None
            keep, self.keep = self.keep, None
            parent, self.parent = self.parent, None
        free = self.free

        def finish():
            free(ptr)
            del keep_alive[:]  # the callback may go only once the C side has let go of it
            if parent is not None:
                parent._child_closed()

        keep_alive = [keep]
        if getattr(_in_callback, "active", False):
            threading.Thread(target=finish, name=f"rung: free the {self.what}").start()
        else:
            finish()

    def _child_closed(self):
        with _native_lock:
            self.children -= 1
            ready = self.children == 0 and self.closing
        if ready:
            self.close()

    def force_free(self):
        """At interpreter exit: free now, whatever lives on (the C side must not call into a finalising interpreter)."""
        with _native_lock:
            ptr, self.ptr = self.ptr, None
            self.closing = True
        if ptr:
            self.free(ptr)

    def __del__(self):
        try:
            self.close()
        except Exception:  # at interpreter shutdown the module may be half gone
            pass


@atexit.register
def _free_everything_at_exit():
    # Newest first: every job before the engine it came from.
    for key in sorted(list(_live.keys()), reverse=True):
        native = _live.get(key)
        if native is not None:
            try:
                native.force_free()
            except Exception:
                pass


# ---- Options ------------------------------------------------------------------------------------


def _option_texts(key, value):
    """The text(s) rung_options_set takes for one Python value; a list or tuple sets the key once per item."""
    if isinstance(value, (list, tuple)):
        out = []
        for v in value:
            out.extend(_option_texts(key, v))
        return out
    if isinstance(value, bool):
        return ["true" if value else "false"]
    if isinstance(value, (int, float)):
        return [repr(value) if isinstance(value, float) else str(value)]
    if isinstance(value, (str, bytes, os.PathLike)):
        return [value]
    raise TypeError(f"option {key}: {type(value).__name__} is not a value rung takes (str, path, bool, int, float or a list of them)")


class _ProgressRelay:
    """The user's progress callback, reached from the C side through a weak reference (so that
    no reference cycle runs through a C handle)."""

    def __init__(self, callback):
        self.callback = callback
        self.calls = 0
        self.error = None


def _progress_from(p):
    size = p.struct_size

    def has(field):
        f = getattr(_abi.Progress, field)
        return size >= f.offset + f.size

    return Progress(
        total=p.total if has("total") else 0,
        landed=p.landed if has("landed") else 0,
        building=_abi.text(p.building) if has("building") else "",
        line=_abi.text(p.line) if has("line") else "",
        done=bool(p.done) if has("done") else False,
    )


def _c_callback(relay):
    ref = weakref.ref(relay)

    def on_progress(_user, progress):
        # Runs on the engine's background thread: nothing may escape into C.
        _in_callback.active = True
        try:
            r = ref()
            if r is None:
                return
            r.calls += 1
            r.callback(_progress_from(progress.contents))
        except BaseException as e:  # noqa: B902 - nothing may cross into C
            try:
                r = ref()
                if r is not None and r.error is None:
                    r.error = e
                    sys.stderr.write("rung: the progress callback raised (ignored; Engine.progress_error holds it):\n")
                    traceback.print_exception(type(e), e, e.__traceback__, file=sys.stderr)
            except BaseException:
                pass
        finally:
            _in_callback.active = False

    return _abi.PROGRESS_FN(on_progress)


class Options:
    """The engine's options, mirroring the C calls (rung_options_*): each setter checks its value at once.

    Options(cache_dir=..., models=[(name, path, role), ...], options={key: value}, on_progress=fn)
    is the same as calling set/add_model/set_progress in that order. Keys are those of
    rung_options_set (rung/option_table.h): cache_dir (required), plugin_dir (a list
    adds several), runtime_dir, runtime_default_locations, environment, runtime_environment,
    worker, isolate, forced_rung, inference_threads, probe_runs, acceptance_ratio,
    probe_deadline_ms, build_deadline_ms, worker_memory_mb, hardware_root,
    tensorrt_workspace_mb, variant_manifest, deployment, manifest_variable.NAME, and per
    model model.NAME.input_spec and model.NAME.form.FORM. Values may be str, paths, bool ("true"/"false"), int or float.
    """

    def __init__(self, cache_dir=None, models=(), options=None, on_progress=None):
        L = _abi.lib()
        out = ctypes.c_void_p()
        _abi.check(L.rung_options_create(ctypes.byref(out)))
        self._native = _Native(out.value, L.rung_options_free, "options")
        self._relay = None
        self._c_progress = None
        if cache_dir is not None:
            self.set("cache_dir", cache_dir)
        if isinstance(models, dict):
            models = list(models.items())
        for m in models:
            if isinstance(m, (str, bytes, os.PathLike)) or not 2 <= len(m) <= 3:
                raise TypeError(f"a model is (name, path) or (name, path, role), not {m!r}")
            self.add_model(*m)
        for key, value in (options or {}).items():
            self.set(key, value)
        if on_progress is not None:
            self.set_progress(on_progress)

    def set(self, key, value):
        """Sets one option (rung_options_set); a list or tuple value sets the key once per item.

        Raises InputError naming the key and the value when the key is unknown or cannot take it.
        Returns self.
        """
        L = _abi.lib()
        for text in _option_texts(key, value):
            _abi.check(L.rung_options_set(self._native.get(), _abi.encode(key), _abi.encode(text)))
        return self

    def add_model(self, name, path, role="generic"):
        """Registers a model: a unique name, its canonical f32 file, and its role
        ("detector", "embedder", "segmenter" or "generic"). Returns self."""
        _abi.check(_abi.lib().rung_options_add_model(self._native.get(), _abi.encode(name), _abi.encode(path), _abi.encode(role)))
        return self

    def set_progress(self, callback):
        """Calls callback(rung.Progress) on the engine's background thread each time the progress changes.

        It must return quickly. An exception it raises is printed once and kept in
        Engine.progress_error; it never reaches the engine. Returns self.
        """
        if not callable(callback):
            raise TypeError("the progress callback must be callable")
        relay = _ProgressRelay(callback)
        c_fn = _c_callback(relay)
        _abi.check(_abi.lib().rung_options_set_progress(self._native.get(), c_fn, None))
        self._relay, self._c_progress = relay, c_fn
        return self

    def close(self):
        """Frees the options (an engine started from them keeps what it needs)."""
        self._native.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


# ---- Engine -------------------------------------------------------------------------------------


class _Closable:
    """What Engine and Job share: close() frees the native handle; `with` closes."""

    @property
    def closed(self):
        """Whether close() was called."""
        return self._native.closing

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Engine(_Closable):
    """rung's engine: finds and loads the runtime build, probes in the background, opens jobs.

    Start one with :meth:`Engine.start`. Every method is callable from any thread.
    close() (or leaving a with block) frees it once the jobs opened from it are closed.
    """

    def __init__(self, *_args, **_kwargs):
        raise TypeError("an Engine is made with rung.Engine.start(...)")

    @classmethod
    def start(cls, cache_dir=None, models=(), options=None, on_progress=None):
        """Starts the engine and returns it without waiting for the probe.

        Args:
            cache_dir: the probe's cache and the engine cache (required, here or in options).
            models: (name, path) or (name, path, role) tuples, or a dict {name: path}; role
                defaults to "generic".
            options: a dict {key: value} of rung_options_set keys (see :class:`Options`), or an
                Options object (then give none of the other arguments).
            on_progress: called with a rung.Progress on the engine's background thread.

        Raises:
            InputError: an unknown option key, a value it cannot take, a missing model file.
            NoRuntimeError: no usable ONNX Runtime build.
            Failed: anything else.
        """
        if isinstance(options, Options):
            if cache_dir is not None or models or on_progress is not None:
                raise TypeError("Engine.start: give either an Options object or cache_dir/models/on_progress, not both")
            opts, owned = options, False
        else:
            opts, owned = Options(cache_dir=cache_dir, models=models, options=options, on_progress=on_progress), True
        try:
            L = _abi.lib()
            out = ctypes.c_void_p()
            _abi.check(L.rung_engine_start(opts._native.get(), ctypes.byref(out)))
            engine = object.__new__(cls)
            engine._relay = opts._relay
            # The C callback must outlive the engine's background thread: the handle keeps it.
            engine._native = _Native(out.value, L.rung_engine_free, "engine", keep=opts._c_progress)
            return engine
        finally:
            if owned:
                opts.close()

    def _text(self, fn_name):
        L = _abi.lib()
        return _abi.owned_text(getattr(L, fn_name)(self._native.get()), fn_name)

    def about_line(self):
        """'CPU · ONNX Runtime 1.30.0 · probing', then the probe's own line."""
        return self._text("rung_engine_about_line")

    def chosen_rung(self):
        """The rung id jobs open on now: 'cpu' until the probe reports."""
        return self._text("rung_engine_chosen_rung")

    def chosen_reason(self):
        """Why the probe chose that rung."""
        return self._text("rung_engine_chosen_reason")

    def decision_json(self):
        """The whole decision as one JSON text, the C ABI's and every binding's
        (schemas/engine-decision.schema.json)."""
        return self._text("rung_engine_decision_json")

    def decision(self):
        """The same document as a dict: the state, the about line, the chosen rung and
        why, every rung the probe tried with its verdict, reason and figures, and what
        serves each model now."""
        return json.loads(self.decision_json())

    def progress_line(self):
        """The progress line as the callback gets it ('' when done and clean)."""
        return self._text("rung_engine_progress_line")

    def probe_done(self):
        """Whether the probe has reported."""
        return bool(_abi.lib().rung_engine_probe_done(self._native.get()))

    def wait_until_settled(self, timeout=None):
        """Waits until the probe has reported and every engine has landed or failed.

        timeout: seconds, or None to wait as long as it takes. Returns True when settled,
        False when the timeout passed first. Waits in short slices, so Ctrl-C interrupts it.
        """
        L = _abi.lib()
        ptr = self._native.get()
        slice_ms = 250
        if timeout is None:
            while not L.rung_engine_wait_until_settled(ptr, slice_ms):
                pass
            return True
        deadline = time.monotonic() + max(0.0, float(timeout))
        while True:
            left_ms = math.ceil((deadline - time.monotonic()) * 1000)
            if left_ms <= 0:
                return bool(L.rung_engine_wait_until_settled(ptr, 0))
            if L.rung_engine_wait_until_settled(ptr, min(slice_ms, left_ms)):
                return True

    def open_job(self):
        """A unit of work: every session it opens stays on the rung and form the engines had
        landed when it opened. Use it in a with block, or close() it."""
        L = _abi.lib()
        out = ctypes.c_void_p()
        _abi.check(L.rung_engine_open_job(self._native.get(), ctypes.byref(out)))
        return Job._made(self, _Native(out.value, L.rung_job_free, "job", parent=self._native))

    @property
    def progress_error(self):
        """The first exception the progress callback raised (kept from the engine), or None."""
        return None if self._relay is None else self._relay.error

    @property
    def progress_calls(self):
        """How many times the progress callback has been called."""
        return 0 if self._relay is None else self._relay.calls

    def close(self):
        """Frees the engine (stopping its background work) once every job opened from it is closed.

        Afterwards the Engine object refuses every call; its open jobs keep working."""
        self._native.close()

    def __repr__(self):
        if self.closed:
            return "<rung.Engine (closed)>"
        return f"<rung.Engine on {self.chosen_rung()}>"


class Job(_Closable):
    """A unit of work, pinned to one rung: open sessions with :meth:`session`.

    Keeps its Engine alive. close() (or leaving a with block) frees it and its sessions.
    """

    def __init__(self, *_args, **_kwargs):
        raise TypeError("a Job is made with Engine.open_job()")

    @classmethod
    def _made(cls, engine, native):
        job = object.__new__(cls)
        job._engine = engine
        job._native = native
        # Weak: a Session keeps its Job alive, so a strong cache would make a cycle that only the
        # garbage collector breaks, keeping the job's ONNX Runtime sessions past `del job`.
        job._sessions = weakref.WeakValueDictionary()
        job._lock = threading.Lock()
        return job

    @property
    def engine(self):
        """The Engine this job was opened from."""
        return self._engine

    @property
    def rung(self):
        """The rung id this job was pinned to ('cpu', 'rung_sim_ep', ...)."""
        return _abi.text(_abi.lib().rung_job_rung(self._native.get()))

    def model_ids(self):
        """{model name: model id} of every session opened so far: a job's results carry these."""
        L = _abi.lib()
        return json.loads(_abi.owned_text(L.rung_job_model_ids_json(self._native.get()), "rung_job_model_ids_json"))

    def session(self, model_name):
        """The registered model's session in this job, opened on first use (the rung below
        serves when a rung fails to open it). Raises an Error naming the model when it cannot."""
        with self._lock:
            found = self._sessions.get(model_name)
            if found is not None:
                return found
            out = ctypes.c_void_p()
            _abi.check(_abi.lib().rung_job_session(self._native.get(), _abi.encode(model_name), ctypes.byref(out)))
            s = Session._made(self, out.value)
            self._sessions[model_name] = s
            return s

    def close(self):
        """Frees the job and its sessions; its Session objects refuse every call afterwards."""
        self._native.close()

    def __repr__(self):
        return "<rung.Job (closed)>" if self.closed else f"<rung.Job on {self.rung}>"


def input_view(array):
    """The array Session.run lends the engine for `array`: `array` itself, not copied, when
    it is a C-contiguous, aligned, little-endian numpy array; else one C-contiguous
    little-endian copy of it."""
    a = array if isinstance(array, np.ndarray) else np.asarray(array)
    order = a.dtype.byteorder
    little = order in "<|" or (order == "=" and _LITTLE)
    if a.flags.c_contiguous and a.flags.aligned and little:
        return a
    return np.array(a, dtype=a.dtype.newbyteorder("<"), order="C", copy=True)


def _dtype_of(element_type):
    if element_type == _STRING:
        return "string"
    t = _NUMPY_OF.get(element_type)
    if t is not None:
        return np.dtype(t)
    return _abi.text(_abi.lib().rung_element_type_name(element_type))


class Session:
    """One registered model in one job: its description, and :meth:`run`.

    Keeps its Job alive; run() is callable from any thread, concurrently on one session.
    """

    def __init__(self, *_args, **_kwargs):
        raise TypeError("a Session is made with Job.session(name)")

    @classmethod
    def _made(cls, job, ptr):
        s = object.__new__(cls)
        s._job = job
        s._ptr_value = ptr
        s._inputs = None
        s._outputs = None
        s._types = None
        return s

    def _ptr(self):
        self._job._native.get()  # raises when the job (which owns the session) is closed
        return self._ptr_value

    @property
    def job(self):
        """The Job this session belongs to."""
        return self._job

    @property
    def model_name(self):
        """The registered model's name ('ppocr_cls')."""
        return _abi.text(_abi.lib().rung_session_model_name(self._ptr()))

    @property
    def model_id(self):
        """The id of the model file the session runs ('ppocr_cls', 'ppocr_det_v4_i8')."""
        return _abi.text(_abi.lib().rung_session_model_id(self._ptr()))

    @property
    def rung(self):
        """The rung id the session runs on ('cpu', 'rung_sim_ep')."""
        return _abi.text(_abi.lib().rung_session_rung(self._ptr()))

    @property
    def placement_reason(self):
        """Why the session runs on that rung."""
        return _abi.text(_abi.lib().rung_session_placement_reason(self._ptr()))

    @property
    def ort_handles(self):
        """ONNX Runtime's own handles, for code written against it: (the OrtApi table's
        address, the API version it is held at, the OrtSession's address), as ints.
        rung's: valid while this session's job lives; never release the session."""
        L = _abi.lib()
        ptr = self._ptr()
        return (L.rung_session_ort_api(ptr) or 0, int(L.rung_session_ort_api_version(ptr)), L.rung_session_ort_session(ptr) or 0)

    def _describe(self, which):
        L = _abi.lib()
        ptr = self._ptr()
        out = []
        for i in range(L.rung_session_describe(ptr, which)):
            info = _abi.IoInfo()
            info.struct_size = ctypes.sizeof(_abi.IoInfo)
            _abi.check(L.rung_session_io(ptr, which, i, ctypes.byref(info)))
            shape = tuple(None if info.shape[d] < 0 else int(info.shape[d]) for d in range(info.rank))
            names = tuple(_abi.text(info.dim_names[d]) for d in range(info.rank)) if info.dim_names else ("",) * info.rank
            out.append(IoInfo(_abi.text(info.name), _dtype_of(info.element_type), shape, names))
        return out

    @property
    def inputs(self):
        """The model's inputs: a list of rung.IoInfo (name, dtype, shape with None for dynamic dims, dim_names)."""
        if self._inputs is None:
            self._inputs = self._describe(_abi.RUNG_INPUTS)
        return list(self._inputs)

    @property
    def outputs(self):
        """The model's outputs: a list of rung.IoInfo."""
        if self._outputs is None:
            self._outputs = self._describe(_abi.RUNG_OUTPUTS)
        return list(self._outputs)

    def _declared_types(self):
        if self._types is not None:
            return self._types
        L = _abi.lib()
        ptr = self._ptr()
        types = {}
        for i in range(L.rung_session_describe(ptr, _abi.RUNG_INPUTS)):
            info = _abi.IoInfo()
            info.struct_size = ctypes.sizeof(_abi.IoInfo)
            _abi.check(L.rung_session_io(ptr, _abi.RUNG_INPUTS, i, ctypes.byref(info)))
            types[_abi.text(info.name)] = info.element_type
        self._types = types
        return types

    def run(self, feeds):
        """Runs the model and returns {output name: numpy.ndarray}, in the model's output order.

        feeds: {input name: array} or a list of (name, array) pairs. An array is lent to the
        engine without a copy when it is C-contiguous, aligned and little-endian (see
        :func:`input_view`); any other array is copied once into that layout. A value that
        is not a numpy array is converted to the input's declared dtype. A string input takes
        an array of str (or bytes). Inputs are checked by name, dtype and shape before ONNX
        Runtime sees them: a wrong one raises InputError naming the model and the input.
        Outputs are copies Python owns (a string output is an object array of str).
        """
        L = _abi.lib()
        ptr = self._ptr()
        pairs = list(feeds.items()) if isinstance(feeds, dict) else list(feeds)
        declared = self._declared_types()
        held = []    # the arrays lent to the engine, alive until the run returns
        values = []  # the rung_value handles, freed after it
        try:
            for pair in pairs:
                if len(pair) != 2:
                    raise TypeError(f"an input is a (name, array) pair, not {pair!r}")
                name, value = pair
                values.append(self._value(L, name, value, declared.get(name), held))
            inputs = (ctypes.c_void_p * max(1, len(values)))(*values)
            outs = ctypes.POINTER(ctypes.c_void_p)()
            n_outs = ctypes.c_size_t()
            _abi.check(L.rung_session_run(ptr, inputs, len(values), ctypes.byref(outs), ctypes.byref(n_outs)))
        finally:
            for v in values:
                L.rung_value_free(v)
            del held
        try:
            result = {}
            for i in range(n_outs.value):
                name, arr = _output_array(L, outs[i])
                result[name] = arr
            return result
        finally:
            L.rung_values_free(outs, n_outs.value)

    @staticmethod
    def _value(L, name, value, declared, held):
        if not isinstance(value, np.ndarray):
            if declared == _STRING:
                value = np.asarray(value, dtype=object)
            elif declared in _NUMPY_OF:
                value = np.asarray(value, dtype=_NUMPY_OF[declared])
            else:
                value = np.asarray(value)
        elif value.dtype.kind == "O" and declared in _NUMPY_OF:
            value = value.astype(_NUMPY_OF[declared])  # numbers held as Python objects
        shape = (ctypes.c_int64 * max(1, value.ndim))(*value.shape)
        out = ctypes.c_void_p()
        if value.dtype.kind in "USO":
            texts = [v if isinstance(v, bytes) else str(v).encode("utf-8", "surrogateescape") for v in value.reshape(-1).tolist()]
            strings = (ctypes.c_char_p * max(1, len(texts)))(*texts)
            _abi.check(L.rung_value_create_strings(_abi.encode(name), shape, value.ndim, strings, len(texts), ctypes.byref(out)))
            return out.value
        key = value.dtype.str[1:]
        if declared in _CONTAINER_OF and value.dtype == np.dtype(_CONTAINER_OF[declared]):
            element_type = declared  # bfloat16 or float8 bits in their container
        elif key in _TYPE_OF:
            element_type = _TYPE_OF[key]
        else:
            raise _invalid(f"input '{name}': numpy dtype {value.dtype} is not one rung feeds")
        arr = input_view(value)
        held.append(arr)
        _abi.check(L.rung_value_create_view(_abi.encode(name), element_type, shape, arr.ndim, ctypes.c_void_p(arr.ctypes.data),
                                            arr.nbytes, ctypes.byref(out)))
        return out.value

    def __repr__(self):
        if self._job.closed:
            return "<rung.Session (job closed)>"
        return f"<rung.Session {self.model_name} ({self.model_id}) on {self.rung}>"


def _output_array(L, value):
    """(name, a numpy array Python owns) for one output rung_value."""
    name = _abi.text(L.rung_value_name(value))
    element_type = L.rung_value_element_type(value)
    rank = ctypes.c_size_t()
    dims = L.rung_value_shape(value, ctypes.byref(rank))
    shape = tuple(int(dims[d]) for d in range(rank.value))
    if element_type == _STRING:
        count = L.rung_value_string_count(value)
        arr = np.empty(count, dtype=object)
        for i in range(count):
            arr[i] = _abi.text(L.rung_value_string(value, i))
        return name, arr.reshape(shape)
    size = ctypes.c_size_t()
    data = L.rung_value_data(value, ctypes.byref(size))
    t = _NUMPY_OF.get(element_type) or _CONTAINER_OF.get(element_type)
    if t is None:  # a type newer than this module: its bytes
        arr = np.empty(size.value, dtype=np.uint8)
    else:
        arr = np.empty(shape, dtype=np.dtype(t).newbyteorder("<"))
        if arr.nbytes != size.value:
            raise Failed(f"output '{name}' holds {size.value} bytes, its shape {list(shape)} needs {arr.nbytes}",
                              code=ErrorCode.runtime, exit_code=1)
    if size.value:
        ctypes.memmove(arr.ctypes.data, data, size.value)
    return name, arr
