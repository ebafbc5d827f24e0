"""What every test of the Python binding shares: the environment ctest sets
(tests/CMakeLists.txt, RUNG_ABI_TEST_ENV; a missing variable fails the test
naming it, never skips it), the C++ engine's reference, and the engine options
every binding's test uses."""

import os
from pathlib import Path

import numpy as np
import pytest

ENV = [
    "RUNG_LIB_DIR", "RUNG_CLI", "RUNG_TEST_RUNTIME_DIR", "RUNG_TEST_WORKER", "RUNG_TEST_PLUGIN_DIR",
    "RUNG_TEST_MODEL", "RUNG_TEST_HARDWARE_ROOT", "RUNG_TEST_REFERENCE_DIR", "RUNG_TEST_MODELS_DIR",
    "RUNG_TEST_FAKE_RUNTIME",
]


def need(name):
    """The environment variable's value; the test fails naming it when it is not set."""
    value = os.environ.get(name)
    if not value:
        pytest.fail(f"{name} is not set: ctest sets it (tests/CMakeLists.txt, RUNG_ABI_TEST_ENV)", pytrace=False)
    return value


@pytest.fixture(scope="session")
def reference():
    """reference.txt as a dict, with input.bin as the input array and output.bin's bytes."""
    d = Path(need("RUNG_TEST_REFERENCE_DIR"))
    ref = {}
    for line in (d / "reference.txt").read_text().splitlines():
        if "=" in line:
            key, value = line.split("=", 1)
            ref[key] = value
    for key in ("input_shape", "output_shape"):
        ref[key] = tuple(int(v) for v in ref[key].split(","))
    assert ref["input_type"] == "float32", ref
    ref["input"] = np.fromfile(d / "input.bin", dtype="<f4").reshape(ref["input_shape"])
    ref["output_bytes"] = (d / "output.bin").read_bytes()
    return ref


def engine_options():
    """The options every binding's test starts its engine with (the abi_reference fixture's)."""
    return {
        "plugin_dir": need("RUNG_TEST_PLUGIN_DIR"),
        "runtime_dir": need("RUNG_TEST_RUNTIME_DIR"),
        "runtime_default_locations": False,
        "runtime_environment": False,
        "worker": need("RUNG_TEST_WORKER"),
        "hardware_root": need("RUNG_TEST_HARDWARE_ROOT"),
        "probe_runs": 1,
        "inference_threads": 1,
        # Within a thousand times the floor's time and faithful: the simulated accelerator
        # (about twice the floor's time) is taken however loaded the machine is, so every
        # run computes on the reference's rung.
        "acceptance_ratio": 1000,
    }


# The variables that would steer the command away from the test's own arguments.
CLEAN_ENV = {"RUNG_ORT_DIR": None, "RUNG_FORCE_RUNG": None, "RUNG_PLUGIN_DIR": None, "RUNG_CACHE_DIR": None,
             "RUNG_SOFTWARE_GPU": None}
