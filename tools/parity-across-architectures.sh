#!/usr/bin/env bash
# Does ARM decide as x86-64 does? Each sample model (and each quantised form given) is
# recorded by the aarch64 build under qemu (tools/aarch64-run build-aarch64/rung parity
# --record), then held to that recording by the x86-64 build natively, with the model's
# decision gates at their strictest (every box, line and top-1 the same) and a tensor gate.
#
#   tools/parity-across-architectures.sh [--forms DIR] [--sets DIR] [--count N] [--out DIR]
#
# --forms DIR  quantised files written by rung quantise (ppocr_det_v4_i8.onnx, ...): each
#              NAME_FORM.onnx is compared as well, on its f32 model's inputs and gates
# --sets DIR   rung quantise's sets (default ~/.cache/rung/data/ocr, from
#              tools/make-quantise-sets.py): the first N holdout files of each model; without
#              them, scikit-image's sample photographs and scanned pages
# --count N    detector pages (default 40; 4 recogniser lines and 8 classifier crops per page)
# --out DIR    where recordings and reports go (default: a new temporary directory)
#
# Prints one verdict per model and form, the gates' lines and the largest
# difference under it, then exits 1 when ARM decided otherwise anywhere (a tensor
# gate beyond its bounds is reported, not a failure, beside decisions that agree). Timings under
# qemu mean nothing; it is the outputs and the decisions that are compared.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
deps="${RUNG_DEPS_DIR:-$HOME/.cache/rung}"
forms="" sets="$deps/data/ocr" count=40 out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --forms) forms="$2"; shift 2 ;;
    --sets) sets="$2"; shift 2 ;;
    --count) count="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    *) echo "parity-across-architectures: unknown argument $1" >&2; exit 2 ;;
  esac
done
case "$count" in ''|*[!0-9]*|0) echo "parity-across-architectures: --count takes a whole number above 0" >&2; exit 2 ;; esac
host="$root/build/rung" arm="$root/build-aarch64/rung"
for p in "$host" "$arm"; do
  [ -x "$p" ] || { echo "parity-across-architectures: $p is not built (tools/bootstrap.sh --tests builds both)" >&2; exit 2; }
done
out="${out:-$(mktemp -d)}"
mkdir -p "$out/gates" "$out/inputs"
models="$deps/models"

# The gates: rung quantise's decision gates made strict, and a tensor gate beside each.
/usr/bin/python3 - "$root/specs/quantise" "$out/gates" <<'PY'
import json, pathlib, sys
src, dst = map(pathlib.Path, sys.argv[1:])
tensor = {"decoder": "tensor", "atol": 1e-4, "rtol": 1e-3}
for f in sorted(src.glob("*.gate.json")):
    g = json.loads(f.read_text())
    g["model"] = g["model"].split(",")[0] + ": ARM (qemu) against x86-64, ONNX Runtime 1.30.0 on both"
    for gate in g["gates"]:
        for k in list(gate):
            if k.startswith("min_"): gate[k] = 1.0
            if k.startswith("max_"): gate[k] = 0.0
    g["gates"].append(tensor)
    (dst / f.name).write_text(json.dumps(g, indent=1) + "\n")
(dst / "silero_vad.gate.json").write_text(json.dumps({"gates": [tensor]}) + "\n")
PY
# The recogniser's gate names its character list beside it.
cp "$models/ppocr/ppocr_keys_v1.txt" "$out/gates/"

# The inputs: the first files of each holdout set, or the sample images.
take() {  # take KIND N
  mkdir -p "$out/inputs/$1"
  if [ -d "$sets/holdout/$1" ]; then
    find "$sets/holdout/$1" -maxdepth 1 -name '*.png' | sort | sed -n "1,${2}p" | xargs -r cp -t "$out/inputs/$1"
  else
    cp /usr/lib/python3/dist-packages/skimage/data/{page,text,camera,coffee,chelsea,astronaut,horse}.png "$out/inputs/$1"
  fi
}
take det "$count"; take rec $((count * 4)); take cls $((count * 8))

failed=0
summary=()
compare() {  # compare LABEL MODEL GATE_NAME INPUT_KIND [extra parity arguments for the recording]
  local label="$1" model="$2" gate="$out/gates/$3.gate.json" kind="$4"
  shift 4
  local rec="$out/recorded/$label" inputs=(--inputs "$out/inputs/$kind")
  [ "$kind" = random ] && inputs=("$@")
  rm -rf "$rec"
  mkdir -p "$out/recorded"
  "$here/aarch64-run" "$arm" parity --ref "$model,ort=1.30.0" --record "$rec" "${inputs[@]}" --gate "$gate" >"$out/$label.record.txt" 2>&1 ||
    { summary+=("$label: the aarch64 side did not record (see $out/$label.record.txt)"); failed=1; return; }
  env -u RUNG_ORT_DIR "$host" parity --ref "expected:$rec" --inputs "$rec" --cand "$model,ort=1.30.0" --gate "$gate" \
    >"$out/$label.txt" 2>&1 || true
  # The verdict is the decision gates' (the tensor gate alone where a model has no decoder):
  # a quantised form's kernels differ between the two CPUs, and what counts is what it decides.
  local decisions
  decisions="$(grep -E '^(PASS|FAIL) ' "$out/$label.txt" | grep -v '^[A-Z]*  tensor · ' || true)"
  [ -n "$decisions" ] || decisions="$(grep -E '^(PASS|FAIL) ' "$out/$label.txt" || true)"
  if [ -z "$decisions" ]; then
    summary+=("$label: no verdict (see $out/$label.txt)")
    failed=1
  elif grep -q '^FAIL' <<<"$decisions"; then
    summary+=("$label: ARM DECIDES OTHERWISE")
    failed=1
  else
    summary+=("$label: ARM decides as x86-64 does")
  fi
  summary+=("$(grep -E '^(PASS|FAIL) |abs error max' "$out/$label.txt" | sed 's/^ */    /')")
}

compare cls "$models/ppocr/ch_ppocr_mobile_v2.0_cls_infer.onnx" ppocr_cls cls
compare rec "$models/ppocr/ch_PP-OCRv4_rec_infer.onnx" ppocr_rec_v4 rec
compare det "$models/ppocr/ch_PP-OCRv4_det_infer.onnx" ppocr_det_v4 det
compare vad "$models/silero-vad/silero_vad.onnx" silero_vad random --random 16 --seed 5 --input-spec "$root/specs/silero_vad.json"
if [ -n "$forms" ]; then
  for f in "$forms"/ppocr_cls_*.onnx; do [ -e "$f" ] && compare "$(basename "$f" .onnx)" "$f" ppocr_cls cls; done
  for f in "$forms"/ppocr_rec_v4_*.onnx; do [ -e "$f" ] && compare "$(basename "$f" .onnx)" "$f" ppocr_rec_v4 rec; done
  for f in "$forms"/ppocr_det_v4_*.onnx; do [ -e "$f" ] && compare "$(basename "$f" .onnx)" "$f" ppocr_det_v4 det; done
fi
printf '%s\n' "${summary[@]}"
echo "reports: $out"
exit "$failed"
