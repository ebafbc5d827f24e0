#!/usr/bin/env python3
"""Makes the calibration and holdout sets `rung quantise` uses for the PP-OCRv4
detector, recogniser and angle classifier, from real prose rendered by
tools/make-text-corpus.py (two sets of different names share no page). Only
the standard library and ImageMagick.

    tools/make-quantise-sets.py --out ~/.cache/rung/data/ocr [--pages 120]
        [--lines-per-page 4] [--charset ppocr_keys_v1.txt]

Writes, for SET in calibration and holdout:
  OUT/pages/SET/            the rendered pages and their truth (make-text-corpus.py)
  OUT/SET/det/              the pages (the detector's inputs); the holdout also
                            gets scikit-image's scanned page.png, a real scan
  OUT/SET/rec/              upright crops of text lines, cut by their truth boxes
  OUT/SET/cls/              the same crops upright (_0) and turned 180 degrees (_180)
  OUT/SET/lines.json        which crop is which line, with its text
  OUT/gates/                specs/quantise's gate files, beside the character
                            list (--charset) the recogniser's gate names
Each folder holds images only, so it is an input directory as it stands.
Everything is deterministic: the same command writes the same bytes. A set
already made with the same settings is left alone.
"""
import argparse
import json
import pathlib
import shutil
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
SKIMAGE_PAGE = pathlib.Path("/usr/lib/python3/dist-packages/skimage/data/page.png")
PNG_FLAGS = ["-define", "png:exclude-chunks=date,time", "-strip"]
PAD = 4  # pixels of page kept around a line's box, as a detector's box would leave


def make_pages(out, name, pages, charset):
    args = [sys.executable, str(HERE / "make-text-corpus.py"), "--out", str(out / "pages"), "--set", name, "--pages", str(pages)]
    if charset:
        args += ["--charset", str(charset)]
    subprocess.run(args, check=True)


def chosen_lines(lines, per_page):
    """Up to `per_page` lines spread over the page (first, last, between)."""
    if len(lines) <= per_page:
        return list(range(len(lines)))
    step = (len(lines) - 1) / (per_page - 1) if per_page > 1 else 0
    return sorted({round(i * step) for i in range(per_page)})


def crop_page(page_png, truth, per_page, rec_dir, cls_dir):
    """One ImageMagick process per page writes every crop of it."""
    width, height = truth["width"], truth["height"]
    rotated = truth["rotation"] == 180
    args = [str(page_png)]
    made = []
    for i in chosen_lines(truth["lines"], per_page):
        line = truth["lines"][i]
        x1, y1, x2, y2 = line["box"]
        x1, y1 = max(0, x1 - PAD), max(0, y1 - PAD)
        x2, y2 = min(width, x2 + PAD), min(height, y2 + PAD)
        stem = f"{page_png.stem}-{i:02d}"
        crop = ["+clone", "-crop", f"{x2 - x1}x{y2 - y1}+{x1}+{y1}", "+repage"]
        upright = crop + (["-rotate", "180"] if rotated else [])
        args += ["(", *upright, *PNG_FLAGS, "-write", str(rec_dir / f"{stem}.png"), "+delete", ")"]
        args += ["(", *upright, *PNG_FLAGS, "-write", str(cls_dir / f"{stem}_0.png"), "+delete", ")"]
        args += ["(", *upright, "-rotate", "180", *PNG_FLAGS, "-write", str(cls_dir / f"{stem}_180.png"), "+delete", ")"]
        made.append({"crop": f"{stem}.png", "page": page_png.name, "line": i, "text": line["text"]})
    subprocess.run(["convert", *args, "null:"], check=True, capture_output=True)
    return made


def make_set(out, name, pages, per_page, charset):
    settings = {"pages": pages, "lines_per_page": per_page, "charset": str(charset) if charset else None}
    root = out / name
    stamp = root / "settings.json"
    if stamp.is_file() and json.loads(stamp.read_text()) == settings:
        print(f"make-quantise-sets: {root} is already made")
        return
    manifest = out / "pages" / name / "manifest.json"
    if not manifest.is_file() or len(json.loads(manifest.read_text())["pages"]) != pages:
        make_pages(out, name, pages, charset)
    shutil.rmtree(root, ignore_errors=True)
    det, rec, cls = root / "det", root / "rec", root / "cls"
    for d in (det, rec, cls):
        d.mkdir(parents=True)
    lines = []
    for entry in json.loads(manifest.read_text())["pages"]:
        page = out / "pages" / name / entry["image"]
        truth = json.loads(page.with_suffix(".json").read_text())
        shutil.copyfile(page, det / page.name)
        lines += crop_page(page, truth, per_page, rec, cls)
    if name == "holdout" and SKIMAGE_PAGE.is_file():
        shutil.copyfile(SKIMAGE_PAGE, det / "skimage-page.png")
    (root / "lines.json").write_text(json.dumps(lines, indent=1) + "\n")
    stamp.write_text(json.dumps(settings) + "\n")
    print(f"make-quantise-sets: {root}: {len(list(det.iterdir()))} pages, {len(lines)} line crops, {2 * len(lines)} classifier crops")


def copy_gates(out, charset):
    """The gate files with the character list they name beside them (a path relative to the gate file)."""
    gates = out / "gates"
    gates.mkdir(parents=True, exist_ok=True)
    for f in sorted((HERE.parent / "specs" / "quantise").glob("*.gate.json")):
        shutil.copyfile(f, gates / f.name)
    if charset:
        shutil.copyfile(charset, gates / charset.name)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, type=pathlib.Path)
    ap.add_argument("--pages", type=int, default=120)
    ap.add_argument("--lines-per-page", type=int, default=4)
    ap.add_argument("--charset", type=pathlib.Path, help="render only words in this character list (the recogniser's)")
    ap.add_argument("--sets", default="calibration,holdout")
    a = ap.parse_args()
    for name in a.sets.split(","):
        make_set(a.out, name, a.pages, a.lines_per_page, a.charset)
    copy_gates(a.out, a.charset)


if __name__ == "__main__":
    main()
