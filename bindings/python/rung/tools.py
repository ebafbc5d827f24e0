"""rung's release tools from Python: doctor, probe, bench, parity, quantise.

Each runs the very ``rung`` command as a child process with ``--json`` and
returns what it prints, parsed (the same document ``rung CMD --json`` gives).
A child process, not the library: a provider that crashes while it is probed
or measured takes down the command, never this interpreter.

The command is found through the environment variable RUNG_CLI, else as
``<prefix>/bin/rung`` beside the installed package, else on PATH.

Keyword arguments map one to one onto the command's options (``ort_dir`` is
``--ort-dir``, ``plugin_dir=[a, b]`` is ``--plugin-dir a --plugin-dir b``, a
True flag is the bare option); an unknown keyword is a TypeError naming it.
Every tool also takes ``timeout`` (seconds the command may run; on expiry it
is stopped and rung.Failed raised) and ``env`` (a dict of environment
variables for the command, merged over this process's; a value None removes
the variable).

A non-zero exit raises the rung.Error subclass of its exit code (InputError
for 2, NoRuntimeError for 3, Failed otherwise) whose message is the command's
error line (its stderr's last non-empty line, without the leading ``rung: ``);
when that line ends "(see above)", the message starts with what it points at:
each model error, each failed gate (one line each).
The error also carries ``command`` (the argv run), ``stderr`` (all of it) and
``result`` (the JSON document the command printed before failing, e.g. a
parity report whose gate failed, or None).
"""

import json
import os
import shutil
import signal
import subprocess
from pathlib import Path

from ._abi import kit_dirs
from .errors import Failed, error_class_for_exit_code

__all__ = ["doctor", "probe", "bench", "parity", "quantise", "find_cli"]

# Option kinds: a value (--opt VALUE), a flag (--opt when true), a list (--opt A --opt B),
# an assignment dict ({NAME: VALUE} -> --opt NAME=VALUE each; or a list of "NAME=VALUE" texts),
# a shape dict ({INPUT: (1, 3, 640, 640)} -> --opt INPUT=1x3x640x640).
VALUE, FLAG, LIST, ASSIGN, SHAPE = "value", "flag", "list", "assign", "shape"

_RUNTIME = {"ort_dir": ("--ort-dir", VALUE), "allow_writable_runtime": ("--allow-writable-runtime", FLAG)}
_PLUGINS = {"plugin_dir": ("--plugin-dir", LIST), "allow_writable_plugin": ("--allow-writable-plugin", FLAG)}
_SOFTWARE_GPU = {"software_gpu": ("--software-gpu", FLAG)}
_HARDWARE = {"hardware_root": ("--hardware-root", VALUE)}
_WORKERS = {"worker_memory_mb": ("--worker-memory-mb", VALUE)}
_OUT_JSON = {"out_json": ("--out-json", VALUE)}

DOCTOR_OPTIONS = {**_OUT_JSON, **_RUNTIME, **_PLUGINS, **_HARDWARE, **_SOFTWARE_GPU}

PROBE_OPTIONS = {
    "roles": ("--role", ASSIGN),
    "input_specs": ("--input-spec", ASSIGN),
    "max_tensor_mb": ("--max-tensor-mb", VALUE),
    "probe_model": ("--probe-model", LIST),
    "force": ("--force", FLAG),
    "in_process": ("--in-process", FLAG),
    "deadline": ("--deadline", VALUE),
    "runs": ("--runs", VALUE),
    "threads": ("--threads", VALUE),
    "accept_ratio": ("--accept-ratio", VALUE),
    "min_gain": ("--min-gain", VALUE),
    "time_budget": ("--time-budget", VALUE),
    "min_placed": ("--min-placed", VALUE),
    "use_rung": ("--use-rung", VALUE),
    "cache_dir": ("--cache-dir", VALUE),
    **_OUT_JSON, **_RUNTIME, **_PLUGINS, **_SOFTWARE_GPU, **_HARDWARE, **_WORKERS,
}

BENCH_OPTIONS = {
    "rung": ("--rung", LIST),
    "warmup": ("--warmup", VALUE),
    "runs": ("--runs", VALUE),
    "duration": ("--duration", VALUE),
    "rounds": ("--rounds", VALUE),
    "threads": ("--threads", VALUE),
    "input": ("--input", VALUE),
    "input_specs": ("--input-spec", ASSIGN),
    "shapes": ("--shape", SHAPE),
    "max_tensor_mb": ("--max-tensor-mb", VALUE),
    "out_json": ("--out-json", VALUE),
    "csv": ("--csv", VALUE),
    "html": ("--html", VALUE),
    "compare_bare": ("--compare-bare", FLAG),
    "deadline": ("--deadline", VALUE),
    **_RUNTIME, **_PLUGINS, **_SOFTWARE_GPU, **_HARDWARE, **_WORKERS,
}

PARITY_OPTIONS = {
    "record": ("--record", VALUE),
    "inputs": ("--inputs", VALUE),
    "random": ("--random", VALUE),
    "seed": ("--seed", VALUE),
    "gate": ("--gate", VALUE),
    "preprocess": ("--preprocess", VALUE),
    "input_spec": ("--input-spec", VALUE),
    "show": ("--show", FLAG),
    "deadline": ("--deadline", VALUE),
    "max_tensor_mb": ("--max-tensor-mb", VALUE),
    "allow_writable_plugin": ("--allow-writable-plugin", FLAG),
    "work_dir": ("--work-dir", VALUE),
    **_OUT_JSON, **_RUNTIME, **_SOFTWARE_GPU, **_WORKERS,
}

QUANTISE_OPTIONS = {
    "form": ("--form", VALUE),
    "target": ("--target", VALUE),
    "calibration": ("--calibration", VALUE),
    "holdout": ("--holdout", VALUE),
    "gate": ("--gate", VALUE),
    "calibrator": ("--calibrator", VALUE),
    "signed_activations": ("--signed-activations", FLAG),
    "per_tensor": ("--per-tensor", FLAG),
    "reduce_range": ("--reduce-range", FLAG),
    "keep_float": ("--keep-float", LIST),
    "float_from": ("--float-from", LIST),
    "opset": ("--opset", VALUE),
    "name": ("--name", VALUE),
    "out": ("--out", VALUE),
    "force": ("--force", FLAG),
    "search": ("--search", FLAG),
    "speed_runs": ("--speed-runs", VALUE),
    "allow_slower": ("--allow-slower", FLAG),
    "threads": ("--threads", VALUE),
    "ort": ("--ort", VALUE),
    "deadline": ("--deadline", VALUE),
    "work_dir": ("--work-dir", VALUE),
    **_OUT_JSON, **_RUNTIME,
}


def _installed_cli():
    here = Path(__file__).resolve().parent
    places = [prefix / "bin" / "rung" for prefix in list(here.parents)[:4]]
    kit = kit_dirs()
    if kit is not None:
        places.append(Path(kit[1]) / "rung")
    for candidate in places:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate, []
    return None, [str(p) for p in places]


def find_cli():
    """The path of the ``rung`` command the tools run: RUNG_CLI, else <prefix>/bin/rung beside
    the package, else ``rung`` on PATH. Raises rung.Failed naming where it looked."""
    env = os.environ.get("RUNG_CLI")
    if env:
        if os.path.isfile(env) and os.access(env, os.X_OK):
            return env
        raise Failed(f"RUNG_CLI is {env}, which is not an executable file", exit_code=1)
    found, looked = _installed_cli()
    if found is not None:
        return str(found)
    on_path = shutil.which("rung")
    if on_path:
        return on_path
    raise Failed("cannot find the rung command; looked at RUNG_CLI (not set), " + ", ".join(looked)
                 + " and PATH. Set RUNG_CLI to the rung executable", exit_code=1)


def _text(value):
    return os.fspath(value) if isinstance(value, os.PathLike) else str(value)


def _number(value):
    if isinstance(value, bool):
        raise TypeError("a number, not a bool")
    return repr(value) if isinstance(value, float) else str(value)


def _items(value):
    if isinstance(value, (str, bytes, os.PathLike)):
        return [value]
    return list(value)


def _arguments(command, table, options):
    """The command-line options for `options` (a dict of keyword arguments) per `table`."""
    args = []
    for key, value in options.items():
        if key not in table:
            raise TypeError(f"rung.{command}() got an unexpected keyword argument '{key}'")
        flag, kind = table[key]
        if value is None:
            continue
        if kind == FLAG:
            if not isinstance(value, bool):
                raise TypeError(f"rung.{command}(): {key} is a flag: True or False, not {value!r}")
            if value:
                args.append(flag)
        elif kind == VALUE:
            if isinstance(value, bool):
                raise TypeError(f"rung.{command}(): {key} takes a value, not {value!r}")
            args += [flag, _number(value) if isinstance(value, (int, float)) else _text(value)]
        elif kind == LIST:
            for v in _items(value):
                args += [flag, _text(v)]
        elif kind == ASSIGN:
            pairs = value.items() if isinstance(value, dict) else None
            if pairs is None:
                for v in _items(value):
                    args += [flag, _text(v)]
            else:
                for name, v in pairs:
                    args += [flag, f"{name}={_text(v)}"]
        elif kind == SHAPE:
            if not isinstance(value, dict):
                for v in _items(value):
                    args += [flag, _text(v)]
            else:
                for name, dims in value.items():
                    dims = dims if isinstance(dims, str) else "x".join(str(int(d)) for d in dims)
                    args += [flag, f"{name}={dims}"]
    return args


def _common(options):
    timeout = options.pop("timeout", None)
    env = options.pop("env", None)
    return timeout, env


def _model_texts(command, models, allow_role):
    """NAME=PATH (or PATH) texts for the models, and --role arguments for (name, path, role) ones."""
    if isinstance(models, (str, bytes, os.PathLike)):
        models = [models]
    elif isinstance(models, dict):
        models = list(models.items())
    texts, roles = [], []
    for m in models:
        if isinstance(m, (str, bytes, os.PathLike)):
            texts.append(_text(m))
            continue
        m = tuple(m)
        if len(m) == 2 or (allow_role and len(m) == 3):
            texts.append(f"{m[0]}={_text(m[1])}")
            if len(m) == 3:
                roles += ["--role", f"{m[0]}={m[2]}"]
            continue
        shape = "(name, path) or (name, path, role)" if allow_role else "(name, path)"
        raise TypeError(f"rung.{command}(): a model is a path or {shape}, not {m!r}")
    return texts, roles


def _error_message(stderr, command, returncode, document):
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    # CLI11's hint after a usage error says nothing about the error itself.
    lines = [line for line in lines if line != "Run with --help for more information."]
    if not lines:
        return f"rung {command} exited with {returncode} and printed no error"
    message = lines[-1]
    message = message[len("rung: "):] if message.startswith("rung: ") else message
    # "... (see above)" points at lines a person reads; a program gets them in the message.
    if message.endswith("(see above)") and isinstance(document, dict):
        details = [str(e) for e in document.get("model_errors") or []]
        details += [f"gate failed: {g.get('title', '')}: {g.get('summary', '')}" for g in document.get("gates") or []
                    if isinstance(g, dict) and g.get("passed") is False]
        if details:
            message = "\n".join(details + [message])
    return message


def _run(command, args, timeout, env):
    cli = find_cli()
    argv = [cli, command, "--json"] + args
    child_env = dict(os.environ)
    for k, v in (env or {}).items():
        if v is None:
            child_env.pop(k, None)
        else:
            child_env[k] = _text(v)
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=child_env)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _stop(proc)
        raise Failed(f"rung {command} did not finish within {timeout} s (stopped)", exit_code=1) from None
    except BaseException:
        _stop(proc)
        raise
    stdout = out.decode("utf-8", "replace")
    stderr = err.decode("utf-8", "replace")
    document = None
    if stdout.strip():
        try:
            document = json.loads(stdout)
        except ValueError:
            document = None
    code = proc.returncode
    if code != 0:
        if code < 0:  # killed by a signal: the shell's number for it
            try:
                signame = signal.Signals(-code).name
            except ValueError:
                signame = f"signal {-code}"
            message = f"rung {command} was killed by {signame}"
            tail = _error_message(stderr, command, code, document)
            if stderr.strip():
                message += f": {tail}"
            exit_code = 128 - code
        else:
            message = _error_message(stderr, command, code, document)
            exit_code = code
        e = error_class_for_exit_code(exit_code)(message, code=None, exit_code=exit_code)
        e.command, e.stderr, e.result = argv, stderr, document
        raise e
    if document is None:
        e = Failed(f"rung {command} --json printed no JSON document on stdout", exit_code=1)
        e.command, e.stderr, e.result = argv, stderr, None
        raise e
    return document


def _stop(proc):
    """Asks the command to end (it ends its own workers on SIGTERM), then kills it."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def doctor(**options):
    """``rung doctor --json``: the runtime builds found, the hardware and this device's ladder, as a dict.

    Options: ort_dir, allow_writable_runtime, plugin_dir (a path or a list), allow_writable_plugin,
    hardware_root, software_gpu, out_json; timeout, env.
    """
    timeout, env = _common(options)
    return _run("doctor", _arguments("doctor", DOCTOR_OPTIONS, options), timeout, env)


def probe(models=None, **options):
    """``rung probe --json``: choose this device's rung by building, timing and checking each one;
    returns the outcome as a dict (the chosen rung among it) and writes the cache.

    models: None (the bundled sample models), a path, or a list of paths, (name, path) or
    (name, path, role) tuples, or a dict {name: path}.
    Options: roles ({name: role}), input_specs ({name: file}), max_tensor_mb, probe_model (a
    name or a list), force, in_process, deadline (s), runs, threads, accept_ratio, min_gain,
    time_budget (s), min_placed, use_rung, cache_dir, ort_dir, allow_writable_runtime,
    plugin_dir, allow_writable_plugin, software_gpu, hardware_root, out_json; timeout, env.
    """
    timeout, env = _common(options)
    args = _arguments("probe", PROBE_OPTIONS, options)
    if models is not None:
        texts, roles = _model_texts("probe", models, allow_role=True)
        args = [a for t in texts for a in ("--model", t)] + roles + args
    return _run("probe", args, timeout, env)


def bench(models, **options):
    """``rung bench --json``: each model on each rung of this device, each rung in its own
    process; returns the records (a list, one dict per model).

    models: a path, or a list of paths, NAME=PATH texts or (name, path) tuples (a name
    NAME:FORM makes the file a form of NAME), or a dict {name: path}.
    Options: rung (a rung id or a list), warmup, runs, duration (s), rounds, threads, input
    ("random", "zeros" or a directory), input_specs ({name: file}), shapes ({input: (1, 3, 640,
    640)}), max_tensor_mb, out_json, csv, html, compare_bare, deadline (s), ort_dir,
    allow_writable_runtime, plugin_dir, allow_writable_plugin, software_gpu, hardware_root;
    timeout, env.
    """
    timeout, env = _common(options)
    args = _arguments("bench", BENCH_OPTIONS, options)
    texts, _ = _model_texts("bench", models, allow_role=False)
    if not texts:
        raise TypeError("rung.bench(): at least one model is required")
    return _run("bench", args + ["--"] + texts, timeout, env)["records"]


def parity(ref, cand=None, **options):
    """``rung parity --json``: one model on two sides over the same inputs, gated on the decisions
    made with its outputs; returns the report as a dict.

    ref, cand: SPEC texts, MODEL[,rung=cpu|...|PLUGIN.so][,ort=VERSION|DIR][,threads=N][,option.KEY=VALUE]
    or expected:DIR (a path alone is a model on the CPU). With record=DIR and no cand, the ref
    side runs alone and is stored in DIR for another machine; returns its description.
    Options: record, inputs, random, seed, gate, preprocess, input_spec, show, deadline (s),
    max_tensor_mb, allow_writable_plugin, work_dir, out_json, ort_dir, allow_writable_runtime,
    software_gpu; timeout, env. A failed gate raises rung.Failed whose .result is the report.
    """
    timeout, env = _common(options)
    args = ["--ref", _text(ref)] + ([] if cand is None else ["--cand", _text(cand)])
    args += _arguments("parity", PARITY_OPTIONS, options)
    return _run("parity", args, timeout, env)


def quantise(model, **options):
    """``rung quantise --json``: make a quantised form (int8, a16w8, a16w16 QDQ; w8 weights) calibrated on real inputs,
    written only when the model's gates pass; returns the report as a dict.

    model: the f32 model file. Options: form, calibration (required), holdout (required), gate
    (required), calibrator, signed_activations, per_tensor, reduce_range, keep_float (a name or
    a list), float_from (a tensor or a list), opset, name, out, out_json, force, search,
    speed_runs, allow_slower (an int8 CPU form timed slower than f32 is written all the same),
    threads, ort, deadline (s), work_dir, ort_dir, allow_writable_runtime; timeout, env. A
    failed gate (speed included) raises rung.Failed whose .result is the report.
    """
    timeout, env = _common(options)
    args = _arguments("quantise", QUANTISE_OPTIONS, options) + ["--", _text(model)]
    return _run("quantise", args, timeout, env)
