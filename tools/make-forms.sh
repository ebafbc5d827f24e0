#!/usr/bin/env bash
# Makes, on this machine, the quantised forms the bundled variant manifest
# declares "made_by" (manifests/bundled.variants.json): each with `rung quantise`
# from the fetched f32 model and the rendered calibration and holdout sets, and
# the report that pins the form's bytes beside it. A form is made where it runs
# because its calibration and its timing are this CPU's; where the gates or the
# timing refuse it, the report says why and the engine passes the form over.
#
#   tools/make-forms.sh [RUNG]     RUNG: the rung binary (default build/rung)
#
# tools/bootstrap.sh --tests runs it. A form whose report is already there, made
# from the f32 file as it is now, is left alone: delete the report to make it again.
set -euo pipefail
cd "$(dirname "$0")/.."

rung="${1:-build/rung}"
DEPS="${RUNG_DEPS_DIR:-$HOME/.cache/rung}"
models="$DEPS/models/ppocr"
data="$DEPS/data/ocr"
forms="$DEPS/forms"

[ -x "$rung" ] || { echo "make-forms: $rung is not built (cmake --build build --target rung_cli)" >&2; exit 2; }
# The sets: deterministic, skipped when already made.
/usr/bin/python3 tools/make-quantise-sets.py --out "$data" --charset "$models/ppocr_keys_v1.txt" >&2
mkdir -p "$forms"

# NAME MODEL SET FORM [ARGS...]: one form for the CPU, int8 (integer kernels) or
# w8 (int8 weights, float arithmetic: for a model whose integer kernels would be
# slower than its float ones), named as the engine names it (_i8, _w8).
make_form() {
  local name="$1" model="$2" set="$3" form="$4"
  shift 4
  local suffix="${form/int8/i8}"
  local out="$forms/${name}_${suffix}.onnx" report="$forms/${name}_${suffix}.report.json" log="$forms/${name}_${suffix}.log"
  # Made before from these very bytes: left alone (a new f32 file is made again).
  if [ -f "$report" ] && [ "$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["source"]["sha256"])' "$report" 2>/dev/null)" = \
                          "$(sha256sum "$models/$model" | cut -d' ' -f1)" ]; then
    echo "make-forms: ${name}_${suffix}: $report is there, made from this $model (delete it to make the form again)" >&2
    return 0
  fi
  rm -f "$report" "$out"
  local started=$SECONDS status=0
  echo "make-forms: ${name}_${suffix}: rung quantise --form $form${*:+ $*} (an island search takes longest: docs/quantise.md)" >&2
  "$rung" quantise "$models/$model" --name "$name" --form "$form" --target cpu \
      --calibration "$data/calibration/$set" --holdout "$data/holdout/$set" --gate "$data/gates/$name.gate.json" \
      --out "$out" --out-json "$report" "$@" >"$log" 2>&1 || status=$?
  case "$status" in
    0) echo "make-forms: ${name}_${suffix}: written in $((SECONDS - started)) s: $out" >&2 ;;
    # Refused by a gate or by its timing on this CPU: the report says which, and the engine passes the form over.
    1) echo "make-forms: ${name}_${suffix}: refused on this machine (see $report): the f32 file serves" >&2 ;;
    *) echo "make-forms: ${name}_${suffix}: rung quantise failed (exit $status):" >&2
       tail -5 "$log" >&2
       rm -f "$report"
       return "$status" ;;
  esac
}

make_form ppocr_det_v4 ch_PP-OCRv4_det_infer.onnx det int8
make_form ppocr_rec_v4 ch_PP-OCRv4_rec_infer.onnx rec int8 --search
# The classifier's integer kernels are slower than its float ones on x86 without VNNI (docs/quantise.md): its int8 weights, float arithmetic.
# A 0.7 ms model: 40 timed pairs (a tenth of a second) keep a busy machine from leaving its verdict open.
make_form ppocr_cls ch_ppocr_mobile_v2.0_cls_infer.onnx cls w8 --speed-runs 40
