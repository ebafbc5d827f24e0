"""The engine through the Python binding, against what the C++ engine core gave
on the same crop (the abi_reference fixture): the same bytes, rung and model id;
inputs lent without a copy; each error the C status's message, class and exit code."""

import ctypes
import json
import os
import shutil
import subprocess
import sys
import threading

from pathlib import Path

import numpy as np
import pytest

import rung
from rung import _abi
from conftest import engine_options, need


@pytest.fixture(autouse=True)
def _library_from_the_build():
    # The library must be the build's, never one found elsewhere by the fallbacks.
    need("RUNG_LIB_DIR")


def start(cache_dir, reference, model=None, options=None, on_progress=None):
    opts = engine_options()
    opts.update(options or {})
    return rung.Engine.start(cache_dir=str(cache_dir), models=[(reference["model_name"], model or need("RUNG_TEST_MODEL"), "generic")],
                             options=opts, on_progress=on_progress)


class Counter:
    def __init__(self):
        self.calls = []
        self.threads = set()

    def __call__(self, progress):
        self.calls.append(progress)
        self.threads.add(threading.get_ident())


@pytest.fixture(scope="module")
def settled(tmp_path_factory, reference):
    """One engine for the module, settled, with its progress counter."""
    counter = Counter()
    engine = start(tmp_path_factory.mktemp("cache"), reference, on_progress=counter)
    assert engine.wait_until_settled(timeout=240), "the engine did not settle within 240 s"
    yield engine, counter
    engine.close()


def test_the_library_is_the_builds_and_serves_abi_2():
    assert rung.abi_version() >= 2
    assert rung.__version__ == rung.version()
    assert rung.__version__.count(".") == 2, rung.__version__
    assert _abi.lib().rung_path.startswith(os.environ["RUNG_LIB_DIR"])


def test_the_classifier_gives_the_cpp_engines_bytes(settled, reference):
    engine, counter = settled
    assert engine.probe_done()
    assert engine.chosen_rung() == reference["rung"], engine.about_line()
    assert "ONNX Runtime 1.30" in engine.about_line()
    assert isinstance(engine.chosen_reason(), str) and engine.chosen_reason()
    assert isinstance(engine.progress_line(), str)
    with engine.open_job() as job:
        assert job.rung == reference["rung"]
        assert job.engine is engine
        session = job.session(reference["model_name"])
        assert job.session(reference["model_name"]) is session
        assert session.model_name == reference["model_name"]
        assert session.model_id == reference["model_id"]
        assert session.rung == reference["rung"], session.placement_reason
        assert isinstance(session.placement_reason, str)
        outputs = session.run({reference["input_name"]: reference["input"]})
        assert list(outputs) == [reference["output_name"]]
        out = outputs[reference["output_name"]]
        assert isinstance(out, np.ndarray)
        assert str(out.dtype) == reference["output_type"]
        assert out.shape == reference["output_shape"]
        assert out.tobytes() == reference["output_bytes"], (out, np.frombuffer(reference["output_bytes"], "<f4"))
        assert job.model_ids() == {reference["model_name"]: reference["model_id"]}
    # Called, and on the engine's background thread (never this one).
    assert counter.calls, "the progress callback was never called"
    assert threading.get_ident() not in counter.threads
    assert counter.calls[-1].done
    assert engine.progress_calls == len(counter.calls)
    assert engine.progress_error is None


def test_a_list_of_pairs_feeds_as_a_dict_does(settled, reference):
    engine, _ = settled
    with engine.open_job() as job:
        out = job.session(reference["model_name"]).run([(reference["input_name"], reference["input"])])
        assert out[reference["output_name"]].tobytes() == reference["output_bytes"]


def test_the_session_describes_its_inputs_and_outputs(settled, reference):
    engine, _ = settled
    with engine.open_job() as job:
        s = job.session(reference["model_name"])
        (x,) = s.inputs
        assert isinstance(x, rung.IoInfo)
        assert x.name == reference["input_name"]
        assert x.dtype == np.float32
        assert len(x.shape) == len(reference["input_shape"]) == len(x.dim_names)
        for declared, fed, name in zip(x.shape, reference["input_shape"], x.dim_names):
            # A dynamic dimension is None and has a symbolic name; a fixed one is the crop's.
            assert (declared is None and name != "") or (declared == fed and name == ""), (x, reference["input_shape"])
        assert [o.name for o in s.outputs] == [reference["output_name"]]
        assert s.outputs[0].dtype == np.dtype(reference["output_type"])


def test_onnxruntimes_own_api_answers_over_the_handed_session(settled, reference):
    # A hand-declared call through the OrtApi table: SessionGetInputCount is entry 30.
    engine, _ = settled
    with engine.open_job() as job:
        s = job.session(reference["model_name"])
        api, version, session = s.ort_handles
        assert api and session and version >= 17
        table = ctypes.cast(api, ctypes.POINTER(ctypes.c_void_p))
        get_input_count = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t))(table[30])
        count = ctypes.c_size_t(0)
        assert get_input_count(session, ctypes.byref(count)) is None, "an OrtStatus came back"
        assert count.value == 1


def test_a_contiguous_input_is_lent_not_copied(settled, reference, monkeypatch):
    engine, _ = settled
    x = np.ascontiguousarray(reference["input"], dtype=np.float32)
    assert rung.input_view(x) is x
    lent = []
    L = _abi.lib()
    real = L.rung_value_create_view

    def spy(name, element_type, shape, rank, data, size, out):
        lent.append((data.value if isinstance(data, ctypes.c_void_p) else data, size))
        return real(name, element_type, shape, rank, data, size, out)

    monkeypatch.setattr(L, "rung_value_create_view", spy)
    with engine.open_job() as job:
        out = job.session(reference["model_name"]).run({reference["input_name"]: x})
    assert lent == [(x.ctypes.data, x.nbytes)]
    assert out[reference["output_name"]].tobytes() == reference["output_bytes"]


def test_a_non_contiguous_input_is_copied_once_and_gives_the_same_bytes(settled, reference):
    engine, _ = settled
    fortran = np.asfortranarray(reference["input"])
    assert not fortran.flags.c_contiguous
    view = rung.input_view(fortran)
    assert view is not fortran and view.flags.c_contiguous and np.array_equal(view, fortran)
    big_endian = reference["input"].astype(">f4")
    assert rung.input_view(big_endian).dtype.str == "<f4"
    with engine.open_job() as job:
        s = job.session(reference["model_name"])
        for x in (fortran, big_endian):
            assert s.run({reference["input_name"]: x})[reference["output_name"]].tobytes() == reference["output_bytes"]


def test_one_session_runs_on_several_threads_at_once(settled, reference):
    engine, _ = settled
    with engine.open_job() as job:
        s = job.session(reference["model_name"])
        results, errors = [], []

        def work():
            try:
                for _ in range(5):
                    results.append(s.run({reference["input_name"]: reference["input"]})[reference["output_name"]].tobytes())
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(e)

        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert errors == []
    assert results == [reference["output_bytes"]] * 20


def test_input_view_copies_only_what_it_must():
    scalar = np.array(16000, dtype=np.int64)
    assert rung.input_view(scalar) is scalar
    strided = np.arange(10, dtype=np.float32)[::2]
    copy = rung.input_view(strided)
    assert copy is not strided and copy.flags.c_contiguous and copy.tolist() == strided.tolist()
    unaligned = np.frombuffer(b"\0" + np.arange(4, dtype="<f4").tobytes(), dtype="<f4", offset=1)
    assert not unaligned.flags.aligned and rung.input_view(unaligned).flags.aligned


def test_outputs_are_pythons_own(settled, reference):
    engine, _ = settled
    with engine.open_job() as job:
        out = job.session(reference["model_name"]).run({reference["input_name"]: reference["input"]})
    arr = out[reference["output_name"]]
    assert arr.flags.owndata and arr.flags.writeable
    arr[...] = 0  # the job is gone; the array is still Python's to use


def test_a_wrong_input_shape_names_the_input(settled, reference):
    engine, _ = settled
    with engine.open_job() as job:
        s = job.session(reference["model_name"])
        with pytest.raises(rung.InputError) as e:
            s.run({reference["input_name"]: reference["input"][0]})  # one rank short
    assert f"'{reference['input_name']}'" in str(e.value) or reference["input_name"] in str(e.value)
    assert e.value.exit_code == 2
    assert e.value.code == rung.ErrorCode.invalid_argument and e.value.code.name == "invalid_argument"
    assert str(e.value) == e.value.message


def test_a_wrong_dtype_names_the_input_and_the_type(settled, reference):
    engine, _ = settled
    with engine.open_job() as job:
        s = job.session(reference["model_name"])
        with pytest.raises(rung.InputError) as e:
            s.run({reference["input_name"]: reference["input"].astype(np.float64)})
    assert reference["input_name"] in str(e.value) and "float64" in str(e.value), str(e.value)
    assert e.value.exit_code == 2
    with pytest.raises(rung.InputError, match="complex128 is not one rung feeds"):
        with engine.open_job() as job:
            job.session(reference["model_name"]).run({reference["input_name"]: reference["input"].astype(np.complex128)})


def test_an_unknown_model_name_is_named(settled):
    engine, _ = settled
    with engine.open_job() as job:
        with pytest.raises(rung.Error) as e:
            job.session("no_such_model")
    assert "no_such_model" in str(e.value)
    assert e.value.exit_code == 2 and isinstance(e.value, rung.InputError)


def test_a_missing_model_file_is_an_input_error_naming_the_file(tmp_path, reference):
    missing = tmp_path / "no-such-model.onnx"
    with pytest.raises(rung.InputError) as e:
        start(tmp_path / "cache", reference, model=str(missing))
    assert str(missing) in str(e.value) or "no-such-model.onnx" in str(e.value), str(e.value)
    assert e.value.exit_code == 2
    assert e.value.code in (rung.ErrorCode.not_found, rung.ErrorCode.invalid_argument)
    assert str(e.value) == e.value.message and e.value.args == (e.value.message,)


def test_an_unknown_option_key_is_named(tmp_path, reference):
    with pytest.raises(rung.InputError) as e:
        start(tmp_path / "cache", reference, options={"cache_directory": str(tmp_path)})
    assert "unknown option key 'cache_directory'" in str(e.value), str(e.value)
    assert e.value.exit_code == 2 and e.value.code == rung.ErrorCode.invalid_argument
    # The Options object checks each call at once.
    with rung.Options() as o:
        with pytest.raises(rung.InputError, match="option inference_threads=nan"):
            o.set("inference_threads", "nan")
        with pytest.raises(TypeError, match="option probe_runs"):
            o.set("probe_runs", object())


def test_no_runtime_build_is_exit_code_3(tmp_path, reference):
    # Nowhere to look: no runtime_dir, and neither the default locations nor RUNG_ORT_DIR.
    opts = engine_options()
    del opts["runtime_dir"]
    with pytest.raises(rung.NoRuntimeError) as e:
        rung.Engine.start(cache_dir=tmp_path / "cache", models=[(reference["model_name"], need("RUNG_TEST_MODEL"))], options=opts)
    assert e.value.exit_code == 3 and e.value.code == rung.ErrorCode.no_runtime
    assert "no usable ONNX Runtime build" in str(e.value)
    assert isinstance(e.value, rung.Error)


def test_a_named_runtime_build_that_does_not_load_is_load_failed_naming_it(tmp_path, reference):
    # The application named the directory: its build serves or the start says why, never another in its place.
    with pytest.raises(rung.Failed) as e:
        start(tmp_path / "cache", reference, options={"runtime_dir": need("RUNG_TEST_FAKE_RUNTIME")})
    assert e.value.exit_code == 1 and e.value.code == rung.ErrorCode.load_failed, str(e.value)
    assert "the runtime directory " + need("RUNG_TEST_FAKE_RUNTIME") + " cannot serve" in str(e.value)


def test_an_options_object_starts_an_engine_too(tmp_path, reference):
    with rung.Options(cache_dir=tmp_path / "cache", options=engine_options()) as o:
        o.add_model(reference["model_name"], need("RUNG_TEST_MODEL"))
        with rung.Engine.start(options=o) as engine:
            with engine.open_job() as job:
                assert job.session(reference["model_name"]).model_name == reference["model_name"]
    with pytest.raises(TypeError):
        rung.Engine.start(cache_dir=tmp_path, options=rung.Options())


def test_a_progress_callback_that_raises_never_reaches_the_engine(tmp_path, reference, capfd):
    def broken(progress):
        raise RuntimeError("the callback broke")

    with start(tmp_path / "cache", reference, on_progress=broken) as engine:
        assert engine.wait_until_settled(timeout=240)
        assert isinstance(engine.progress_error, RuntimeError)
        assert engine.progress_calls >= 1
        with engine.open_job() as job:
            out = job.session(reference["model_name"]).run({reference["input_name"]: reference["input"]})
            assert out[reference["output_name"]].shape == reference["output_shape"]
    assert "the callback broke" in capfd.readouterr().err


def test_a_job_keeps_its_engine_and_a_session_its_job(tmp_path, reference):
    engine = start(tmp_path / "cache", reference)
    job = engine.open_job()
    session = job.session(reference["model_name"])
    del job
    engine.close()  # freed once its job is
    assert engine.closed
    with pytest.raises(rung.InputError, match="the engine is closed"):
        engine.about_line()
    # The session's job, and the engine under it, still serve.
    out = session.run({reference["input_name"]: reference["input"]})
    assert out[reference["output_name"]].shape == reference["output_shape"]
    session.job.close()
    with pytest.raises(rung.InputError, match="the job is closed"):
        session.run({reference["input_name"]: reference["input"]})
    with pytest.raises(rung.InputError, match="the job is closed"):
        session.model_id


def test_a_job_is_freed_when_its_last_reference_goes(settled, reference, monkeypatch):
    # No cycle through the session cache: plain reference counting frees the job, the garbage collector off.
    import gc
    engine, _ = settled
    freed = []
    L = _abi.lib()
    real = L.rung_job_free
    monkeypatch.setattr(L, "rung_job_free", lambda ptr: (freed.append(ptr), real(ptr)))
    gc.disable()
    try:
        job = engine.open_job()
        session = job.session(reference["model_name"])
        session.run({reference["input_name"]: reference["input"]})
        del job
        assert freed == []  # the session still holds it
        del session
        assert len(freed) == 1
    finally:
        gc.enable()


def test_handles_freed_by_the_garbage_collector(tmp_path, reference, monkeypatch):
    # No close(): the engine sits in a cycle through its progress callback, so only the
    # garbage collector frees it, after its job (freed by reference counting).
    import gc
    freed = []
    L = _abi.lib()
    for fn in ("rung_engine_free", "rung_job_free"):
        real = getattr(L, fn)
        monkeypatch.setattr(L, fn, lambda ptr, fn=fn, real=real: (freed.append(fn), real(ptr)))

    def leave_behind(cache):
        box = {}
        engine = start(cache, reference, on_progress=lambda p: box.get("engine"))
        box["engine"] = engine
        job = engine.open_job()
        job.session(reference["model_name"])

    for i in range(2):
        leave_behind(tmp_path / f"cache{i}")
        gc.collect()
    assert freed == ["rung_job_free", "rung_engine_free"] * 2


def test_a_missing_library_is_an_error_naming_where_rung_looked(tmp_path):
    code = ("import rung\n"
            "try:\n"
            "    rung.abi_version()\n"
            "except rung.Failed as e:\n"
            "    print('ERROR', e.exit_code, e.code.name, e)\n")
    env = dict(os.environ, RUNG_LIB_DIR=str(tmp_path))
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("ERROR 1 load_failed cannot load rung's engine library"), r.stdout
    assert str(tmp_path / "librung_engine.so.1") in r.stdout and "RUNG_LIB_DIR" in r.stdout


def test_the_example_runs_the_classifier(tmp_path, reference):
    example = os.path.join(os.path.dirname(__file__), "..", "examples", "launch.py")
    args = [f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in engine_options().items()]
    r = subprocess.run([sys.executable, example, need("RUNG_TEST_MODEL"), str(tmp_path / "cache"), *args],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert f"rung: {reference['rung']}" in lines, r.stdout
    assert f"model id: {reference['model_id']}" in lines
    assert any(line.startswith(f"output {reference['output_name']} {reference['output_type']}") for line in lines)
    r = subprocess.run([sys.executable, example, str(tmp_path / "gone.onnx"), str(tmp_path / "cache2"), *args],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and "gone.onnx" in r.stderr, r.stderr


@pytest.mark.parametrize("array", [
    np.arange(6, dtype=np.float16).reshape(2, 3), np.array([True, False, True]), np.array(16000, dtype=np.int64),
    np.arange(24, dtype=np.uint8).reshape(2, 3, 4), np.zeros((0, 3), dtype=np.float64), np.arange(4, dtype=">i4"),
])
def test_values_carry_each_dtype_and_shape_both_ways(array):
    # The value layer alone, no model: what a run is fed is what an output of the same bytes reads back as.
    from rung.engine import Session, _output_array
    L = _abi.lib()
    held = []
    value = Session._value(L, "t", array, None, held)
    try:
        name, back = _output_array(L, value)
    finally:
        L.rung_value_free(value)
    assert name == "t" and back.shape == array.shape and back.dtype == array.dtype.newbyteorder("=")
    assert np.array_equal(back, array)


def test_a_string_tensor_is_copied_in():
    from rung.engine import Session, _output_array
    L = _abi.lib()
    words = np.array([["ab", "ç"], ["", "d"]])
    value = Session._value(L, "s", words, None, [])
    try:
        assert L.rung_value_string_count(value) == 4
        name, back = _output_array(L, value)
    finally:
        L.rung_value_free(value)
    assert back.dtype == object and back.shape == (2, 2) and back.tolist() == words.tolist()


def test_the_interpreter_exits_cleanly_with_an_engine_still_probing(tmp_path, reference):
    # Never closed, its probe in flight and its callback live: freed at exit, before Python finalises.
    code = ("import sys, rung\n"
            "sys.path.insert(0, sys.argv[1])\n"
            "from conftest import engine_options\n"
            "calls = []\n"
            "engine = rung.Engine.start(cache_dir=sys.argv[2], models=[(sys.argv[3], sys.argv[4])], options=engine_options(),\n"
            "                           on_progress=calls.append)\n"
            "job = engine.open_job()\n"
            "print('started', flush=True)\n")
    r = subprocess.run([sys.executable, "-c", code, os.path.dirname(__file__), str(tmp_path / "cache"), reference["model_name"],
                        need("RUNG_TEST_MODEL")], capture_output=True, text=True, timeout=120)
    assert (r.returncode, r.stdout) == (0, "started\n"), r.stderr


def _without_cache_file(doc):
    """The document without its one line naming where the cache lies (a copy's differs)."""
    return "\n".join(line for line in doc.splitlines() if not line.lstrip().startswith('"cache_file":'))


def test_the_decision_document_is_the_cpp_engines_and_keeps_its_schema(tmp_path, reference):
    reference_dir = Path(need("RUNG_TEST_REFERENCE_DIR"))
    shutil.copytree(reference_dir / "decision-cache", tmp_path / "cache")
    with start(tmp_path / "cache", reference) as engine:
        assert engine.wait_until_settled()
        text = engine.decision_json()
        doc = engine.decision()
    assert _without_cache_file(text) == _without_cache_file((reference_dir / "decision.json").read_text().rstrip("\n"))
    assert doc["state"] == "decided" and doc["chosen"]["rung"] == reference["rung"]
    assert [m["serves"]["model_id"] for m in doc["models"]] == [reference["model_id"]]
    import jsonschema
    schema = json.loads((Path(__file__).resolve().parents[3] / "schemas" / "engine-decision.schema.json").read_text())
    jsonschema.validate(doc, schema)


def test_the_decision_document_says_probing_until_the_probe_reports(tmp_path, reference):
    with start(tmp_path / "cache", reference) as engine:
        doc = engine.decision()
        assert doc["schema"] == "rung-engine-decision" and doc["schema_version"] == 1
        if doc["state"] == "probing":
            assert doc["probe"] is None and doc["chosen"]["rung"] == "cpu"
            assert doc["models"][0]["serves"]["rung"] == "cpu"
        assert engine.wait_until_settled()
        doc = engine.decision()
    assert doc["state"] == "decided" and doc["settled"] is True
    rungs = {r["rung"]: r for r in doc["probe"]["rungs"]}
    assert rungs[reference["rung"]]["verdict"] == "taken"
    measured = rungs[reference["rung"]]["models"][0]
    assert measured["median_ms"] > 0 and measured["max_abs_diff"] is not None
