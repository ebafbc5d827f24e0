#!/usr/bin/env python3
"""Renders pages of real prose into PNG images with their ground truth, for
OCR accuracy runs (examples/ocr-lines --truth), calibration and holdout sets
(rung quantise) and the pipeline benchmark.

The prose is the licence texts Debian installs on every machine
(/usr/share/common-licenses); ImageMagick renders each line in one of several
fonts and sizes; some pages are dense (tight line spacing) and some are turned
180 degrees. Everything is chosen by a seeded generator from the set's name and
the seed, so the same command writes the same pages, and two sets of different
names share no page (their source passages differ; callers can check content
hashes too). PNG date chunks are excluded so the bytes repeat.

    tools/make-text-corpus.py --out DIR --set holdout --pages 100 [--seed 7]
        [--rotated 0.2] [--dense 0.2] [--charset ppocr_keys_v1.txt]

Writes DIR/SET/page-NNNN.png and page-NNNN.json, whose "lines" list each line's
text and its box [x1, y1, x2, y2] in the image as written (after any rotation),
in reading order of the upright page; and DIR/SET/manifest.json.
"""
import argparse
import hashlib
import json
import pathlib
import random
import subprocess
import sys

LICENCES = pathlib.Path("/usr/share/common-licenses")
# Fonts from Debian packages (fonts-dejavu-core, fonts-liberation2, fonts-freefont-ttf).
FONTS = [
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf",
    "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf",
    "/usr/share/fonts/truetype/liberation2/LiberationSans-Regular.ttf",
    "/usr/share/fonts/truetype/liberation2/LiberationSerif-Regular.ttf",
    "/usr/share/fonts/truetype/liberation2/LiberationMono-Regular.ttf",
    "/usr/share/fonts/truetype/freefont/FreeSans.ttf",
    "/usr/share/fonts/truetype/freefont/FreeSerif.ttf",
]
# Characters ImageMagick's label: would interpret (file inclusion, escapes) are never rendered.
UNSAFE = set("%@\\")


def prose_words(charset):
    words = []
    for path in sorted(LICENCES.iterdir()):
        if not path.is_file():
            continue
        for word in path.read_text(encoding="utf-8", errors="replace").split():
            if any(c in UNSAFE or not c.isprintable() or ord(c) > 126 for c in word):
                continue
            if charset is not None and any(c not in charset for c in word):
                continue
            words.append(word)
    return words


def wrap(words, start, chars, count):
    """`count` lines of about `chars` characters from the word stream at `start`."""
    lines, line, i = [], [], start
    while len(lines) < count:
        word = words[i % len(words)]
        i += 1
        if line and len(" ".join(line + [word])) > chars:
            lines.append(" ".join(line))
            line = []
        line.append(word)
    return lines, i


def magick(args):
    return subprocess.run(["convert", *args], check=True, capture_output=True, text=True).stdout


def label_sizes(font, size, lines):
    args = ["-font", font, "-pointsize", str(size)]
    for text in lines:
        args += ["label:" + text]
    args += ["-format", "%w %h\n", "info:"]
    return [tuple(int(v) for v in row.split()) for row in magick(args).split("\n") if row.strip()]


def render_page(path, rng, words, cursor, rotated, dense):
    font = rng.choice(FONTS)
    size = rng.choice([16, 18, 20, 22, 24, 28])
    chars = rng.randint(28, 56)
    count = rng.randint(6, 14)
    lines, cursor = wrap(words, cursor, chars, count)
    sizes = label_sizes(font, size, lines)
    margin = rng.randint(12, 40)
    spacing = int(size * (0.05 if dense else rng.uniform(0.4, 0.9)))
    width = max(w for w, _ in sizes) + 2 * margin
    y = margin
    boxes = []
    layers = []
    for text, (w, h) in zip(lines, sizes):
        x = margin + rng.randint(0, 12)
        boxes.append([x, y, x + w, y + h])
        layers += ["(", "-background", "none", "-fill", "black", "-font", font, "-pointsize", str(size),
                   "label:" + text, "-repage", f"+{x}+{y}", ")"]
        y += h + spacing
    height = y - spacing + margin
    width += 12
    args = ["-size", f"{width}x{height}", "xc:white", *layers, "-background", "white", "-layers", "flatten"]
    if rotated:
        args += ["-rotate", "180"]
        boxes = [[width - x2, height - y2, width - x1, height - y1] for x1, y1, x2, y2 in boxes]
    args += ["-define", "png:exclude-chunks=date,time", "-strip", str(path)]
    magick(args)
    truth = {
        "lines": [{"text": t, "box": b} for t, b in zip(lines, boxes)],
        "rotation": 180 if rotated else 0,
        "dense": dense,
        "font": pathlib.Path(font).stem,
        "pointsize": size,
        "width": width,
        "height": height,
    }
    return truth, cursor


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, type=pathlib.Path)
    ap.add_argument("--set", required=True, help="the set's name (calibration, holdout, pages, ...)")
    ap.add_argument("--pages", type=int, default=100)
    ap.add_argument("--seed", type=int, default=20261130)
    ap.add_argument("--rotated", type=float, default=0.2, help="share of pages turned 180 degrees")
    ap.add_argument("--dense", type=float, default=0.2, help="share of pages with tight line spacing")
    ap.add_argument("--charset", type=pathlib.Path, help="a character list (one per line): render only words within it")
    a = ap.parse_args()
    if a.pages < 1:
        sys.exit("make-text-corpus: --pages must be at least 1")
    missing = [f for f in FONTS if not pathlib.Path(f).is_file()]
    if missing:
        sys.exit(f"make-text-corpus: fonts missing (tools/bootstrap.sh installs them): {', '.join(missing)}")
    charset = None
    if a.charset:
        charset = {line.rstrip("\n") for line in a.charset.read_text(encoding="utf-8").splitlines()} | {" "}
    words = prose_words(charset)
    # The set's name picks its own generator and its own passage of the prose.
    rng = random.Random(f"{a.seed}/{a.set}")
    cursor = int(hashlib.sha256(a.set.encode()).hexdigest(), 16) % len(words)
    out = a.out / a.set
    out.mkdir(parents=True, exist_ok=True)
    manifest = []
    for n in range(1, a.pages + 1):
        png = out / f"page-{n:04d}.png"
        truth, cursor = render_page(png, rng, words, cursor, rng.random() < a.rotated, rng.random() < a.dense)
        (out / f"page-{n:04d}.json").write_text(json.dumps(truth, indent=1) + "\n")
        manifest.append({"image": png.name, "sha256": hashlib.sha256(png.read_bytes()).hexdigest(),
                         "lines": len(truth["lines"]), "rotation": truth["rotation"], "dense": truth["dense"]})
    (out / "manifest.json").write_text(json.dumps({"set": a.set, "seed": a.seed, "pages": manifest}, indent=1) + "\n")
    print(f"make-text-corpus: {a.pages} pages in {out}")


if __name__ == "__main__":
    main()
