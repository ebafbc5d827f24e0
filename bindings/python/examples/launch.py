#!/usr/bin/env python3
"""An application in Python: starts rung's engine on the PP-OCR angle classifier,
runs it on one crop and prints what it gave, through the rung package alone.

    launch.py CLASSIFIER.onnx [CACHE_DIR] [KEY=VALUE...]

The crop is RUNG_TEST_REFERENCE_DIR/input.bin when that is set (the tests'
reference crop, 1 x 3 x 48 x 192 float32), else zeros. Each KEY=VALUE is an
engine option (rung.Options lists them). Exits with the code rung's CLI gives
for the failure: 2 bad input, 3 no runtime, 1 otherwise.
"""

import os
import sys
import tempfile

import numpy as np

import rung


def main(argv):
    if len(argv) < 2:
        print("usage: launch.py CLASSIFIER.onnx [CACHE_DIR] [KEY=VALUE...]", file=sys.stderr)
        return 2
    model = argv[1]
    rest = argv[2:]
    cache_dir = rest.pop(0) if rest and "=" not in rest[0] else tempfile.mkdtemp(prefix="rung-launch-")
    options = {}
    for arg in rest:
        key, _, value = arg.partition("=")
        options.setdefault(key, []).append(value)  # plugin_dir may be given more than once

    reference = os.environ.get("RUNG_TEST_REFERENCE_DIR")
    if reference:
        crop = np.fromfile(os.path.join(reference, "input.bin"), dtype="<f4").reshape(1, 3, 48, 192)
    else:
        crop = np.zeros((1, 3, 48, 192), dtype=np.float32)

    try:
        with rung.Engine.start(cache_dir=cache_dir, models=[("ppocr_cls", model, "generic")], options=options,
                               on_progress=lambda p: p.line and print(f"progress: {p.line}", file=sys.stderr)) as engine:
            print(f"about: {engine.about_line()}")
            engine.wait_until_settled()
            print(f"about: {engine.about_line()}")
            with engine.open_job() as job:
                session = job.session("ppocr_cls")
                outputs = session.run({session.inputs[0].name: crop})
                print(f"rung: {session.rung}")
                print(f"model id: {session.model_id}")
                print(f"model ids: {job.model_ids()}")
                for name, value in outputs.items():
                    print(f"output {name} {value.dtype} {list(value.shape)} {value.ravel().tolist()}")
    except rung.Error as e:
        print(f"launch: {e}", file=sys.stderr)
        return e.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
