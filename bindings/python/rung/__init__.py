"""rung for Python: the engine over rung's C ABI (librung_engine, through ctypes), and the
release tools (doctor, probe, bench, parity, quantise) run as the ``rung`` command.

    import rung
    with rung.Engine.start(cache_dir="/tmp/rung-cache",
                           models=[("ppocr_cls", "ch_ppocr_mobile_v2.0_cls_infer.onnx", "generic")]) as engine:
        engine.wait_until_settled()
        print(engine.about_line())
        with engine.open_job() as job:
            outputs = job.session("ppocr_cls").run({"x": crop})   # {name: numpy.ndarray}
            print(job.rung, job.model_ids())

    rung.doctor(ort_dir="/opt/onnxruntime")   # the dict `rung doctor --json` prints

Importing rung loads nothing: the library is found on first use, through RUNG_LIB_DIR, else
beside the installed package (<prefix>/lib/librung_engine.so.1), else in the kit it was
installed from (rung's `cmake --install` writes its place into the package), else the
system's library path; rung.Error names every place it looked when it is not there. The
command is found through RUNG_CLI, else <prefix>/bin/rung, else the kit's bin/, else PATH.
"""

from .engine import Engine, IoInfo, Job, Options, Progress, Session, abi_version, input_view, version
from .errors import Error, ErrorCode, Failed, InputError, NoRuntimeError
from .tools import bench, doctor, find_cli, parity, probe, quantise

__all__ = [
    "Engine", "Job", "Session", "Options", "IoInfo", "Progress", "input_view", "abi_version", "version",
    "Error", "ErrorCode", "InputError", "NoRuntimeError", "Failed",
    "doctor", "probe", "bench", "parity", "quantise", "find_cli",
]


def __getattr__(name):
    # __version__ is the loaded library's (rung_version_string): reading it loads the library.
    if name == "__version__":
        return version()
    raise AttributeError(f"module 'rung' has no attribute '{name}'")
