"""The release tools through the Python binding: each returns what `rung CMD --json`
prints, raises the CLI's error with its exit code, and takes exactly the command's options."""

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

import rung
from rung import tools
from conftest import CLEAN_ENV, need


def cli_env():
    env = dict(os.environ)
    for k in CLEAN_ENV:
        env.pop(k, None)
    return env


def run_cli(*args):
    """The command run here directly, as a person would: (exit code, stdout, stderr)."""
    r = subprocess.run([need("RUNG_CLI"), *args], capture_output=True, text=True, env=cli_env(), stdin=subprocess.DEVNULL, timeout=300)
    return r.returncode, r.stdout, r.stderr


def where():
    """The runtime, the fixture device and the simulated accelerator: the options that keep each command quick and local."""
    return {"ort_dir": need("RUNG_TEST_RUNTIME_DIR"), "hardware_root": need("RUNG_TEST_HARDWARE_ROOT"),
            "plugin_dir": need("RUNG_TEST_PLUGIN_DIR"), "env": CLEAN_ENV}


@pytest.fixture(autouse=True)
def _the_builds_cli():
    need("RUNG_CLI")


def test_the_cli_is_found_through_rung_cli(monkeypatch, tmp_path):
    assert tools.find_cli() == os.environ["RUNG_CLI"]
    monkeypatch.setenv("RUNG_CLI", str(tmp_path / "no-rung"))
    with pytest.raises(rung.Failed, match="RUNG_CLI is .*no-rung, which is not an executable file"):
        rung.doctor()


def test_doctor_returns_what_the_command_prints():
    got = rung.doctor(**where())
    code, out, err = run_cli("doctor", "--json", "--ort-dir", need("RUNG_TEST_RUNTIME_DIR"), "--hardware-root",
                             need("RUNG_TEST_HARDWARE_ROOT"), "--plugin-dir", need("RUNG_TEST_PLUGIN_DIR"))
    assert code == 0, err
    expected = json.loads(out)
    assert isinstance(got, dict)
    assert sorted(got) == sorted(expected)
    assert got == expected
    assert "ONNX Runtime 1.30" in got["about"]
    assert any(r["rung"] == "rung_sim_ep" for r in got["ladder"]), got["ladder"]


def test_probe_chooses_a_rung_for_the_classifier(tmp_path):
    got = rung.probe([("ppocr_cls", need("RUNG_TEST_MODEL"))], cache_dir=tmp_path / "cache", runs=1, **where())
    assert isinstance(got, dict)
    ladder = {r["rung"] for r in got["rungs"]} | {got["floor"]["rung"]}
    assert got["chosen"] in ladder, got["about"]
    assert "rung_sim_ep" in ladder
    assert [m["model"] for m in got["floor"]["models"]] == ["ppocr_cls"]
    assert got["model_errors"] == []
    assert Path(got["cache_file"]).is_file()
    # Asked again, the cache answers.
    again = rung.probe([("ppocr_cls", need("RUNG_TEST_MODEL"))], cache_dir=tmp_path / "cache", runs=1, **where())
    assert again["from_cache"] and again["chosen"] == got["chosen"]


def test_probing_a_missing_model_is_the_clis_input_error(tmp_path):
    missing = tmp_path / "gone.onnx"
    with pytest.raises(rung.InputError) as e:
        rung.probe([("gone", missing)], cache_dir=tmp_path / "cache", **where())
    assert e.value.exit_code == 2 and e.value.code is None
    code, _, err = run_cli("probe", "--json", "--model", f"gone={missing}", "--cache-dir", str(tmp_path / "cache"))
    assert code == 2
    assert f"rung: {e.value}" == err.strip().splitlines()[-1]
    assert str(missing) in str(e.value)
    assert e.value.stderr == err and e.value.result is None
    assert e.value.command[:3] == [need("RUNG_CLI"), "probe", "--json"]


def test_a_usage_error_is_the_error_not_clis_hint(tmp_path):
    with pytest.raises(rung.InputError) as e:
        rung.probe([("ppocr_cls", need("RUNG_TEST_MODEL"))], cache_dir=tmp_path / "cache", runs=0, **where())
    assert str(e.value) == "--runs: 0 is out of range; expected a whole number of runs from 1 to 1000"
    assert e.value.exit_code == 2


def test_a_model_that_cannot_be_probed_is_named_in_the_message(tmp_path):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model")
    # A file the CPU cannot load is an input error (exit 2), in probe as in bench.
    with pytest.raises(rung.InputError) as e:
        rung.probe([("ppocr_cls", need("RUNG_TEST_MODEL")), ("bad", bad)], cache_dir=tmp_path / "cache", runs=1, **where())
    assert e.value.exit_code == 2
    lines = str(e.value).splitlines()
    assert lines[-1] == "some models could not be probed (see above)"
    assert lines[0].startswith("model bad: ") and str(bad) in lines[0]
    assert e.value.result["model_errors"] == lines[:-1]


def test_bench_measures_each_model(tmp_path):
    models = [("ppocr_cls", need("RUNG_TEST_MODEL")), Path(need("RUNG_TEST_MODELS_DIR")) / "silero-vad" / "silero_vad.onnx"]
    got = rung.bench(models, rung="cpu", runs=2, warmup=0, csv=tmp_path / "bench.csv", **where())
    assert isinstance(got, list) and [r["model"]["name"] for r in got] == ["ppocr_cls", "silero_vad"]
    for record in got:
        assert record["schema"] == "rung-bench-record"
        rows = record["measurements"][0]["rows"]
        assert [(r["rung"], r["ok"]) for r in rows] == [("cpu", True)], rows
        assert record["measurements"][0]["settings"]["runs"] == 2
    assert (tmp_path / "bench.csv").read_text().startswith("model,")


def test_parity_passes_on_the_same_side_and_a_failed_gate_carries_the_report():
    model = need("RUNG_TEST_MODEL")
    opts = {"ort_dir": need("RUNG_TEST_RUNTIME_DIR"), "random": 1}
    report = rung.parity(model, f"{model},rung=cpu", env=CLEAN_ENV, **opts)
    assert report["passed"] is True
    # The simulated accelerator, told to add 0.5 to what it computes, fails the tensor gate.
    plugin = Path(need("RUNG_TEST_PLUGIN_DIR")) / "librung_sim_ep.so"
    with pytest.raises(rung.Failed) as e:
        rung.parity(model, f"{model},rung={plugin}", env={**CLEAN_ENV, "RUNG_SIM_EP_PERTURB": "0.5"}, **opts)
    assert e.value.exit_code == 1
    assert str(e.value).splitlines()[-1] == "parity: a gate failed (see above)"
    assert str(e.value).startswith("gate failed: tensor")
    assert e.value.result["passed"] is False


def test_quantise_of_a_missing_model_is_an_input_error(tmp_path):
    missing = tmp_path / "gone.onnx"
    with pytest.raises(rung.InputError) as e:
        rung.quantise(missing, calibration=tmp_path, holdout=tmp_path, gate=tmp_path / "gate.json", env=CLEAN_ENV)
    assert str(missing) in str(e.value) and e.value.exit_code == 2


@pytest.mark.parametrize("tool,args", [
    (rung.doctor, ()), (rung.probe, ()), (rung.bench, (["m.onnx"],)), (rung.parity, ("a.onnx", "b.onnx")),
    (rung.quantise, ("m.onnx",)),
])
def test_an_unknown_keyword_is_a_type_error_naming_it(tool, args, monkeypatch):
    monkeypatch.setenv("RUNG_CLI", "/nonexistent/rung")  # refused before any command is looked for
    with pytest.raises(TypeError, match=f"rung.{tool.__name__}\\(\\) got an unexpected keyword argument 'ort_directory'"):
        tool(*args, ort_directory="/x")
    with pytest.raises(TypeError, match="allow_writable_runtime is a flag"):
        tool(*args, allow_writable_runtime="yes")


HIDDEN = {"doctor": ["--hardware-root"], "probe": ["--hardware-root"], "bench": ["--hardware-root"],
          "parity": ["--work-dir"], "quantise": ["--work-dir"]}
POSITIONAL = {"probe": {"--model"}, "parity": {"--ref", "--cand"}}


@pytest.mark.parametrize("command,table", [
    ("doctor", tools.DOCTOR_OPTIONS), ("probe", tools.PROBE_OPTIONS), ("bench", tools.BENCH_OPTIONS),
    ("parity", tools.PARITY_OPTIONS), ("quantise", tools.QUANTISE_OPTIONS),
])
def test_every_option_of_the_command_has_a_keyword(command, table):
    code, out, err = run_cli(command, "--help")
    assert code == 0, err
    listed = set(re.findall(r"^\s+(?:-\w,)?(--[a-z][a-z-]*)", out, re.M)) - {"--help", "--json"} - POSITIONAL.get(command, set())
    mapped = {flag for flag, _ in table.values()}
    assert listed - mapped == set(), f"rung {command} options with no keyword"
    assert mapped - listed - set(HIDDEN[command]) == set(), f"keywords rung {command} does not take"


def test_a_command_past_its_timeout_is_stopped(tmp_path):
    with pytest.raises(rung.Failed, match="did not finish within 0.01 s"):
        rung.probe([("ppocr_cls", need("RUNG_TEST_MODEL"))], cache_dir=tmp_path / "cache", runs=1000, timeout=0.01, **where())
