#!/bin/bash
# The C example (examples/c/classify.c) against the C++ engine's reference: the
# same output bytes on the same crop, and each error a clear message with the
# CLI's exit code. Run by ctest with the abi_reference fixture's environment.
set -u
classify=$1
for v in RUNG_TEST_FAKE_RUNTIME RUNG_TEST_REFERENCE_DIR RUNG_TEST_MODEL RUNG_TEST_RUNTIME_DIR RUNG_TEST_WORKER RUNG_TEST_PLUGIN_DIR RUNG_TEST_HARDWARE_ROOT; do
  [ -n "${!v:-}" ] || { echo "FAIL: $v is not set (ctest sets it)"; exit 1; }
done
ref=$RUNG_TEST_REFERENCE_DIR
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
failures=0
check() {  # what, condition
  if eval "$2"; then echo "ok: $1"; else echo "FAIL: $1"; failures=$((failures + 1)); fi
}
options=(plugin_dir="$RUNG_TEST_PLUGIN_DIR" runtime_dir="$RUNG_TEST_RUNTIME_DIR" runtime_default_locations=false
         runtime_environment=false worker="$RUNG_TEST_WORKER" hardware_root="$RUNG_TEST_HARDWARE_ROOT" probe_runs=1
         inference_threads=1 acceptance_ratio=1000)
value() { sed -n "s/^$1=//p" "$ref/reference.txt"; }

"$classify" "$RUNG_TEST_MODEL" "$ref/input.bin" "$scratch/cache" "${options[@]}" >"$scratch/out" 2>"$scratch/err"
rc=$?
cat "$scratch/out"
check "the classifier runs (exit $rc: $(cat "$scratch/err"))" '[ $rc -eq 0 ]'
expected_hex=$(od -An -v -tx1 "$ref/output.bin" | tr -d ' \n')
shape=$(value output_shape | sed 's/,/, /g')
check "the output's bytes are the C++ engine's" 'grep -qx "output $(value output_name) $(value output_type) \[$shape\] $expected_hex" "$scratch/out"'
check "it ran on the reference's rung" 'grep -qx "rung: $(value rung)" "$scratch/out"'
check "its model id is the reference's" 'grep -qx "model id: $(value model_id)" "$scratch/out"'
check "the job's model ids name it" 'grep -qx "model ids: {\"ppocr_cls\":\"$(value model_id)\"}" "$scratch/out"'
check "the progress callback was called" 'grep -qx "progress reported: yes" "$scratch/out"'
check "the about line is printed" 'grep -q "^about: .*ONNX Runtime 1.30" "$scratch/out"'

"$classify" "$scratch/no-such-model.onnx" "$ref/input.bin" "$scratch/cache2" "${options[@]}" >/dev/null 2>"$scratch/err"
rc=$?
check "a missing model file exits 2 (got $rc)" '[ $rc -eq 2 ]'
check "and names the file: $(cat "$scratch/err")" 'grep -q "no-such-model.onnx" "$scratch/err"'

"$classify" "$RUNG_TEST_MODEL" "$ref/input.bin" "$scratch/cache3" "${options[@]}" cache_directory=/tmp >/dev/null 2>"$scratch/err"
rc=$?
check "an unknown option key exits 2 (got $rc)" '[ $rc -eq 2 ]'
check "and names the key: $(cat "$scratch/err")" 'grep -q "unknown option key .cache_directory." "$scratch/err"'

"$classify" "$RUNG_TEST_MODEL" "$ref/input.bin" "$scratch/cache4" "${options[@]}" inference_threads=nan >/dev/null 2>"$scratch/err"
rc=$?
check "a number that is not one exits 2 (got $rc)" '[ $rc -eq 2 ]'
check "and names the option: $(cat "$scratch/err")" 'grep -q "option inference_threads=nan" "$scratch/err"'

"$classify" "$RUNG_TEST_MODEL" "$ref/input.bin" "$scratch/cache5" "${options[@]}" runtime_dir="$RUNG_TEST_FAKE_RUNTIME" >/dev/null 2>"$scratch/err"
rc=$?
check "a named runtime build that does not load exits 1, load failed (got $rc): $(cat "$scratch/err")" '[ $rc -eq 1 ]'
check "and names the directory: $(cat "$scratch/err")" 'grep -q "the runtime directory .* cannot serve" "$scratch/err"'

[ $failures -eq 0 ] || { echo "$failures check(s) failed"; exit 1; }
echo "all checks passed"
