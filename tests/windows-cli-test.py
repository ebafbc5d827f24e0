#!/usr/bin/python3
"""rung.exe under wine, driven from outside as a user drives it, and held to the
Linux rung on the same scenarios.

  windows-cli-test.py SCENARIO --windows-build DIR --linux-rung FILE --model-writer FILE --linux-classify FILE
                      --source DIR --deps DIR

SCENARIO:
  doctor   `rung.exe doctor` names the build, the hardware and the ladder (text and JSON);
           every command of Linux's rung is known by name, the unported ones saying so (exit 2)
  probe    `rung.exe probe` on the sample models decides and caches; the second run
           decides again from the cache; --force measures again
  engine   rung_engine.dll exports the C ABI's functions and nothing else, and the C
           example (examples/c/classify.c) linked against it runs the classifier
           through the engine to the same bytes as on Linux
  rules    the simulated accelerator (plugins\\rung_sim_ep.dll) taken or refused by
           the same rules as on Linux: faster and the same outputs (taken), other
           outputs, a crash in its worker, a hang past the deadline; each verdict
           the one Linux's rung reaches on the same model
  paths    paths beyond ASCII and past MAX_PATH: a model, a cache and an --out-json
           under non-ASCII names, and a cache path over 300 characters, each used
           as named (no other
           directory made, the decision written, no probe work left behind)
Prints "PASS <scenario>" at the end; anything else is a failure.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile


def windows_path(path):
    # wine's Z: is this machine's root.
    return "Z:" + os.path.abspath(path).replace("/", "\\")


class Runner:
    def __init__(self, args, scratch):
        self.args = args
        self.scratch = scratch
        self.wine = os.path.join(args.source, "tools", "windows-run")
        self.exe = os.path.join(args.windows_build, "rung.exe")
        self.ort_dir = os.path.join(args.deps, "windows", "runtimes")

    def windows(self, argv, env=None, check=True):
        full = [self.wine, self.exe] + argv
        run_env = dict(os.environ, WINEPREFIX=os.environ.get("WINEPREFIX", os.path.join(self.args.windows_build, "wineprefix")))
        run_env.update(env or {})
        done = subprocess.run(full, capture_output=True, text=True, env=run_env, timeout=600)
        if check and done.returncode != 0:
            fail(f"rung.exe {' '.join(argv)} exited {done.returncode}\nstdout:\n{done.stdout}\nstderr:\n{done.stderr}")
        return done

    def linux(self, argv, env=None):
        run_env = dict(os.environ)
        run_env.pop("RUNG_ORT_DIR", None)
        run_env.update(env or {})
        done = subprocess.run([self.args.linux_rung] + argv, capture_output=True, text=True, env=run_env, timeout=600)
        if done.returncode != 0:
            fail(f"rung {' '.join(argv)} exited {done.returncode}\nstdout:\n{done.stdout}\nstderr:\n{done.stderr}")
        return done


def fail(message):
    print("FAIL:", message)
    sys.exit(1)


def expect(condition, message):
    if not condition:
        fail(message)


def doctor(r):
    commands(r)
    text = r.windows(["doctor", "--ort-dir", windows_path(r.ort_dir)]).stdout
    for needle in ["ONNX Runtime 1.30.0", "onnxruntime.dll (explicit)", "DmlExecutionProvider", "Hardware", "os: windows",
                   "inference pool:", "Ladder (", "DirectML", "WebGPU", "CPU"]:
        expect(needle in text, f"doctor's text has no '{needle}':\n{text}")
    d = json.loads(r.windows(["doctor", "--json", "--ort-dir", windows_path(r.ort_dir)]).stdout)
    expect(d["hardware"]["os"] == "windows", f"doctor --json: os is {d['hardware']['os']}")
    expect(d["hardware"]["cpu"]["logical_cpus"] == os.cpu_count(), f"doctor --json: {d['hardware']['cpu']['logical_cpus']} logical CPUs, this machine has {os.cpu_count()}")
    expect(d["chosen"]["version"] == "1.30.0", f"doctor --json: chosen {d['chosen']}")
    rungs = [rung["rung"] for rung in d["ladder"]]
    expect(rungs[-1] == "cpu" and "directml" in rungs and "webgpu" in rungs, f"doctor --json: ladder {rungs}")
    # wine has no Direct3D 12 GPU: the adapters are missing with the reason, not silently.
    expect(any("CreateDXGIFactory1" in u for u in d["hardware"]["unreadable"]), f"doctor --json: unreadable {d['hardware']['unreadable']}")
    # --version names the builds rung.exe finds and the one it would use: RUNG_ORT_DIR's, which
    # wins outright. (The copy beside rung.exe is listed too, loaded or refused: a build tree
    # under /tmp is writable by others, as wine has no sticky bit.)
    version = r.windows(["--version"], env={"RUNG_ORT_DIR": windows_path(r.ort_dir)}).stdout
    expect(version.startswith("rung ") and "ONNX Runtime API: compiled against" in version, f"--version:\n{version}")
    expect(any(line.startswith("  * 1.30.0") and line.rstrip().endswith("onnxruntime.dll (RUNG_ORT_DIR)") for line in version.splitlines()),
           f"--version does not name RUNG_ORT_DIR's build as chosen:\n{version}")
    expect("beside executable" in version and "chosen: RUNG_ORT_DIR wins outright" in version, f"--version:\n{version}")


def linux_commands(r):
    """The subcommands Linux's rung lists in its --help."""
    text = r.linux(["--help"]).stdout
    listed = text.split("Subcommands:", 1)[1] if "Subcommands:" in text else ""
    return [line.split()[0] for line in listed.splitlines() if line.startswith("  ") and line.split()]


def commands(r):
    # Every command Linux's rung has is one rung.exe knows by name: the engine's three run,
    # the rest say they are not ported (exit 2), with --help too, never the top-level help.
    names = linux_commands(r)
    expect({"doctor", "probe", "prepare", "bench"} <= set(names), f"Linux's --help lists {names}")
    for name in names:
        if name in ("doctor", "probe", "prepare"):
            done = r.windows([name, "--help"])
            expect(f"rung.exe {name}" in done.stdout or name in done.stdout.splitlines()[0], f"rung.exe {name} --help:\n{done.stdout}")
            continue
        for argv in ([name], [name, "--help"], [name, "m.onnx", "--runs", "3"]):
            done = r.windows(argv, check=False)
            expect(done.returncode == 2, f"rung.exe {' '.join(argv)} exited {done.returncode}:\n{done.stdout}{done.stderr}")
            expect(f"rung {name} is not ported to this system yet" in done.stderr, f"rung.exe {' '.join(argv)} said:\n{done.stdout}{done.stderr}")
            expect("Subcommands:" not in done.stdout, f"rung.exe {' '.join(argv)} printed the top-level help")


def probe(r):
    cache = os.path.join(r.scratch, "cache")
    base = ["probe", "--ort-dir", windows_path(r.ort_dir), "--cache-dir", windows_path(cache), "--json"]
    first = json.loads(r.windows(base).stdout)
    expect(not first["from_cache"], "the first probe says it came from the cache")
    expect(first["chosen"] == "cpu", f"the first probe chose {first['chosen']}: wine has no GPU")
    verdicts = {r["rung"]: r["verdict"] for r in first["rungs"]}
    expect(first["floor"]["rung"] == "cpu", f"first probe: the floor is {first['floor']['rung']}")
    # DirectML and WebGPU load, and fail with ONNX Runtime's words (no Direct3D 12 under wine).
    for rung in ("directml", "webgpu"):
        expect(verdicts.get(rung) == "failed", f"first probe: {rung} is {verdicts.get(rung)}")
    expect(os.path.isfile(os.path.join(cache, "probe.json")), f"no probe.json in {cache}: {os.listdir(cache) if os.path.isdir(cache) else 'missing'}")
    second = json.loads(r.windows(base).stdout)
    expect(second["from_cache"], "the second probe measured again instead of answering from its cache")
    expect(second["chosen"] == first["chosen"], f"warm: chose {second['chosen']}, cold chose {first['chosen']}")
    text = r.windows(base[:-1]).stdout
    expect("from the cache" in text, f"the warm probe's text does not say it came from the cache:\n{text}")
    forced = json.loads(r.windows(base + ["--force"]).stdout)
    expect(not forced["from_cache"], "--force answered from the cache")


def sim_verdict(outcome):
    for r in outcome["rungs"]:
        if r["rung"] == "rung_sim_ep":
            return r["verdict"], r["reason"]
    fail(f"no rung_sim_ep among the rungs probed: {[r['rung'] for r in outcome['rungs']]}")


def rules(r):
    model = os.path.join(r.scratch, "matmul_chain.onnx")
    subprocess.run([r.args.model_writer, "matmul_chain", model], check=True)
    plugins_windows = os.path.join(r.args.windows_build, "plugins")
    plugins_linux = os.path.join(os.path.dirname(r.args.linux_rung), "plugins")
    # Path trust has its own tests; here the plugin may lie in a build tree under /tmp.
    common = ["probe", "--json", "--force", "--allow-writable-plugin"]
    cases = [
        ("faster, same outputs", {"RUNG_SIM_EP_OPS": "MatMul", "RUNG_SIM_EP_MEMOISE": "1"}, "taken", ["--deadline", "60"]),
        ("other outputs", {"RUNG_SIM_EP_OPS": "MatMul", "RUNG_SIM_EP_PERTURB": "0.5"}, "unfaithful", ["--deadline", "60"]),
        ("crashes in its worker", {"RUNG_SIM_EP_OPS": "MatMul", "RUNG_SIM_EP_ABORT_AT": "compute"}, "crashed", ["--deadline", "60"]),
        ("hangs past its deadline", {"RUNG_SIM_EP_OPS": "MatMul", "RUNG_SIM_EP_HANG_AT": "compile"}, "timed out", ["--deadline", "4"]),
    ]
    for i, (name, env, expected, extra) in enumerate(cases):
        win_cache = os.path.join(r.scratch, f"cache-win-{i}")
        lin_cache = os.path.join(r.scratch, f"cache-linux-{i}")
        win = json.loads(r.windows(common + extra + ["--model", windows_path(model), "--ort-dir", windows_path(r.ort_dir),
                                                     "--plugin-dir", windows_path(plugins_windows), "--cache-dir", windows_path(win_cache)],
                                   env=env).stdout)
        lin = json.loads(r.linux(common + extra + ["--model", model, "--plugin-dir", plugins_linux, "--cache-dir", lin_cache], env=env).stdout)
        win_verdict, win_reason = sim_verdict(win)
        lin_verdict, lin_reason = sim_verdict(lin)
        expect(win_verdict == expected, f"{name}: Windows says {win_verdict} ({win_reason}), expected {expected}")
        expect(lin_verdict == win_verdict, f"{name}: Linux says {lin_verdict} ({lin_reason}), Windows {win_verdict} ({win_reason})")
        expect(win["chosen"] == lin["chosen"], f"{name}: Windows chose {win['chosen']}, Linux {lin['chosen']}")
        print(f"{name}: {win_verdict} on both; chosen {win['chosen']}")


def engine(r):
    # The exports: exactly the ABI's list (src/capi/abi-symbols.txt), as the version script holds on Linux.
    dump = subprocess.run(["x86_64-w64-mingw32-objdump", "-p", os.path.join(r.args.windows_build, "rung_engine.dll")],
                          capture_output=True, text=True, check=True).stdout
    table = dump[dump.index("[Ordinal/Name Pointer] Table"):].splitlines()[1:]
    exported = set()
    for line in table:
        if not line.strip():
            break
        exported.add(line.split()[-1])
    abi = set()
    for line in open(os.path.join(r.args.source, "src", "capi", "abi-symbols.txt")):
        if line.strip() and not line.startswith("#"):
            abi.add(line.split()[1])
    expect(exported == abi, f"rung_engine.dll exports {sorted(exported - abi)} beyond the ABI and lacks {sorted(abi - exported)}")

    import random, struct
    rng = random.Random(7)
    crop = os.path.join(r.scratch, "crop.bin")
    with open(crop, "wb") as f:
        f.write(struct.pack("<%df" % (3 * 48 * 192), *[rng.uniform(-1, 1) for _ in range(3 * 48 * 192)]))
    model = os.path.join(r.args.deps, "models", "ppocr", "ch_ppocr_mobile_v2.0_cls_infer.onnx")
    common = ["probe_runs=1", "inference_threads=1", "runtime_default_locations=false", "runtime_environment=false"]
    env = dict(os.environ, WINEPREFIX=os.environ.get("WINEPREFIX", os.path.join(r.args.windows_build, "wineprefix")))
    win = subprocess.run([r.wine, os.path.join(r.args.windows_build, "c-classify.exe"), windows_path(model), windows_path(crop),
                          windows_path(os.path.join(r.scratch, "cache-win")), "runtime_dir=" + windows_path(r.ort_dir)] + common,
                         capture_output=True, text=True, env=env, timeout=600)
    expect(win.returncode == 0, f"c-classify.exe exited {win.returncode}: {win.stdout}{win.stderr}")
    linux_dir = os.path.dirname(r.args.linux_rung)
    lin = subprocess.run([r.args.linux_classify, model, crop, os.path.join(r.scratch, "cache-linux"),
                          "runtime_dir=" + os.path.join(r.args.deps, "runtimes"), "worker=" + os.path.join(linux_dir, "rung-probe-worker")] + common,
                         capture_output=True, text=True, timeout=600)
    expect(lin.returncode == 0, f"c-classify exited {lin.returncode}: {lin.stdout}{lin.stderr}")
    def line(out, prefix):
        found = [l for l in out.splitlines() if l.startswith(prefix)]
        expect(len(found) == 1, f"no one '{prefix}' line in:\n{out}")
        return found[0]
    expect(line(win.stdout, "rung: ") == "rung: cpu", f"Windows ran on {line(win.stdout, 'rung: ')}: wine has no GPU")
    expect("ONNX Runtime 1.30.0" in line(win.stdout, "about: "), line(win.stdout, "about: "))
    expect(line(win.stdout, "output ") == line(lin.stdout, "output "),
           f"the engine's output differs:\n  Windows {line(win.stdout, 'output ')}\n  Linux   {line(lin.stdout, 'output ')}")
    print(line(win.stdout, "output "), "on both")


def paths(r):
    # wine turns its arguments and environment into UTF-16 by the Unix locale's charset.
    utf8 = {"LC_ALL": "C.UTF-8"}
    base = os.path.join(r.scratch, "données-中文")
    os.makedirs(base)
    model = os.path.join(base, "modèle-分类.onnx")
    shutil.copy(os.path.join(r.args.deps, "models", "ppocr", "ch_ppocr_mobile_v2.0_cls_infer.onnx"), model)
    cache = os.path.join(base, "cache-é")
    out_json = os.path.join(base, "décision.json")

    def decided(cache_dir, argv, env):
        done = r.windows(["probe", "--ort-dir", windows_path(r.ort_dir), "--model", "cls=" + windows_path(model), "--json"] + argv,
                         env=dict(utf8, **env))
        outcome = json.loads(done.stdout)
        expect(outcome["chosen"] == "cpu", f"probe chose {outcome['chosen']}")
        expect(os.path.isfile(os.path.join(cache_dir, "probe.json")), f"no probe.json in {cache_dir}")
        left = [f for f in os.listdir(cache_dir) if f.startswith("probe-work")]
        expect(not left, f"probe work left in {cache_dir}: {left}")
        return outcome, done

    outcome, _ = decided(cache, ["--cache-dir", windows_path(cache), "--out-json", windows_path(out_json)], {})
    expect(os.path.isfile(out_json), f"--out-json wrote no {out_json}: {os.listdir(base)}")
    with open(out_json, encoding="utf-8") as f:
        expect(json.load(f)["chosen"] == "cpu", f"{out_json} is not the decision")
    expect(sorted(os.listdir(base)) == sorted(["modèle-分类.onnx", "cache-é", "décision.json"]),
           f"{base} holds {os.listdir(base)}: a name was read in another code page")
    with open(os.path.join(cache, "model-hashes.json"), encoding="utf-8") as f:
        hashes = f.read()
    expect("modèle-分类.onnx" in hashes, f"the cache's model hashes do not name the model's file as given:\n{hashes}")

    # A cache path over 300 characters: once a hang (std::filesystem listed the current directory for it).
    long_cache = r.scratch
    while len(windows_path(long_cache)) < 300:
        long_cache = os.path.join(long_cache, "c" * 60)
    decided(long_cache, ["--cache-dir", windows_path(long_cache)], {})
    print("non-ASCII model, cache and --out-json, and a", len(windows_path(long_cache)), "character cache path: used as named")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("scenario", choices=["doctor", "probe", "engine", "rules", "paths"])
    p.add_argument("--windows-build", required=True)
    p.add_argument("--linux-rung", required=True)
    p.add_argument("--model-writer", required=True)
    p.add_argument("--linux-classify", required=True)
    p.add_argument("--source", required=True)
    p.add_argument("--deps", required=True)
    args = p.parse_args()
    scratch = tempfile.mkdtemp(prefix="rung-windows-cli.")
    try:
        {"doctor": doctor, "probe": probe, "engine": engine, "rules": rules, "paths": paths}[args.scenario](Runner(args, scratch))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print("PASS", args.scenario)


if __name__ == "__main__":
    main()
