#!/usr/bin/env bash
# A warm launch timed as a whole process: exec, dynamic loading, the runtime
# build opened, the probe cache checked, exit. Probes once into a fresh cache
# directory (cold), then times RUNS warm launches of each and prints the median:
#   1. `rung probe` on the sample models (the builds beside build/rung), and the
#      same answered by rung-full, which links the whole CLI (the front's gain);
#   2. bench/warm-launch-app, an application linking rung::engine alone that
#      calls Engine::start and waits for the probe's answer (from the cache).
# Also counts the libonnxruntime files a warm `rung probe` opens (LD_DEBUG=files).
#
#   tools/warm-launch.sh [BUILD_DIR]        (default: build; RUNS=20)
set -euo pipefail

build=$(cd "${1:-build}" && pwd)
runs=${RUNS:-20}
models=${RUNG_DEPS_DIR:-$HOME/.cache/rung}/models
app_model=$models/ppocr/ch_ppocr_mobile_v2.0_cls_infer.onnx
[[ -x $build/rung ]] || { echo "warm-launch: no $build/rung: build rung_cli first" >&2; exit 2; }

scratch=$(mktemp -d "${TMPDIR:-/tmp}/rung-warm-launch.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

# The median of the numbers on stdin (milliseconds), to two decimals.
median() { sort -n | awk '{ v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.2f", m }'; }

# Runs "$@" RUNS times, its output discarded; prints each wall time in ms, one a line.
time_runs() {
  local i t0 t1
  for ((i = 0; i < runs; i++)); do
    t0=$EPOCHREALTIME
    "$@" >/dev/null 2>&1
    t1=$EPOCHREALTIME
    echo "$(( (${t1/./} - ${t0/./}) ))" | awk '{ printf "%.3f\n", $1 / 1000 }'
  done
}

report() {  # name, then the times on stdin
  local times
  times=$(cat)
  printf '%-44s median %7s ms   (min %s, max %s, %d runs)\n' "$1" "$(median <<<"$times")" \
    "$(sort -n <<<"$times" | head -1)" "$(sort -n <<<"$times" | tail -1)" "$runs"
}

echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg)"

probe=("$build/rung" probe --cache-dir "$scratch/probe")
"${probe[@]}" >/dev/null  # cold: probes and writes the cache
opened=$(LD_DEBUG=files "${probe[@]}" 2>&1 >/dev/null | grep -c 'file=.*libonnxruntime\.so[.0-9]* .*generating link map' || true)
echo "a warm rung probe opened $opened libonnxruntime file(s) of $(ls -d "$build"/runtimes/*/ | wc -l) builds beside it"
time_runs "${probe[@]}" | report "rung probe (warm, whole process)"
# The same answer from rung-full, the whole CLI linked (libonnx, protobuf): what `rung` was before the front.
full_probe=("$build/rung-full" "${probe[@]:1}")
time_runs "${full_probe[@]}" | report "rung-full probe (warm; the CLI before the front)"
# Before: every build opened on every launch. A file that is no build, in --ort-dir, keeps the
# cache's record from vouching (a failed load never does), so each launch opens all three again.
mkdir -p "$scratch/junk/onnxruntime-0.0"
echo "not a build" >"$scratch/junk/onnxruntime-0.0/libonnxruntime.so"
"${probe[@]}" --ort-dir "$scratch/junk" >/dev/null
time_runs "${probe[@]}" --ort-dir "$scratch/junk" | report "rung probe, every build opened (as before)"
time_runs "$build/rung" --help | report "rung --help (the CLI's own start, for scale)"

if [[ -x $build/bench/warm-launch-app && -f $app_model ]]; then
  app=("$build/bench/warm-launch-app" "$scratch/app" "$app_model" "$build/runtimes" "$build/rung-probe-worker")
  "${app[@]}" >/dev/null  # cold
  "${app[@]}"             # warm, once, to show what it decided
  time_runs "${app[@]}" | report "warm-launch-app: Engine::start + decision"
fi

# CPU time per process (user + system), which another job on the machine disturbs less than wall time.
if command -v perf >/dev/null && perf stat -r 1 true >/dev/null 2>&1; then
  cpu() { perf stat -r "$runs" -x, -e task-clock "$@" 2>&1 >/dev/null | awk -F, '/task-clock/ { printf "%.2f", $1 }'; }
  echo "CPU time (perf stat task-clock, mean of $runs): rung probe warm $(cpu "${probe[@]}") ms, rung-full probe warm $(cpu "${full_probe[@]}") ms," \
    "every build opened $(cpu "${probe[@]}" --ort-dir "$scratch/junk") ms, rung --help $(cpu "$build/rung" --help) ms" \
    "${app:+, warm-launch-app $(cpu "${app[@]}") ms}"
else
  echo "(no $build/bench/warm-launch-app or $app_model: build warm-launch-app to time the embedded path)"
fi
