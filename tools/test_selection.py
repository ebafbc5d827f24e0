"""Which ctest tests can see a change to one file, from the build's own records
(tools/mutate.py --from-diff): no hand-kept map.

  1. the objects compiled from it: the compiler's dependency files (*.o.d) name
     every source and header an object was built from;
  2. the programs and libraries holding those objects: each target's link.txt
     names the objects and libraries it is linked from, followed to the end;
  3. the programs those start: a program's bytes that hold another's absolute
     path (a test's RUNG_TEST_CLI) or its file name where it is distinctive
     (the engine finds rung-probe-worker beside itself);
  4. the tests whose command, or whose properties (an ENVIRONMENT naming a
     library), name one of them.
"""

import json
import re
import shlex
import subprocess
import tempfile
from pathlib import Path


class TestMap:
    def __init__(self, build: Path):
        self.build = build.resolve()
        self.depends = self._dependency_files()
        self.inputs = self._link_inputs()
        self.tests = self._tests()
        self._bytes = {}

    def _dependency_files(self) -> dict:
        """{object path: set of the files it was compiled from}."""
        out = {}
        for d in self.build.rglob("*.o.d"):
            try:
                text = d.read_text(errors="replace")
            except OSError:
                continue
            files = set()
            for token in re.split(r"\s+", text.replace("\\\n", " ")):
                token = token.rstrip(":")
                if token and not token.endswith(".o") and ("/" in token):
                    files.add(str((d.parent / token).resolve()) if not token.startswith("/") else str(Path(token).resolve()))
            out[str(d.with_suffix(""))] = files
        return out

    def _link_inputs(self) -> dict:
        """{artefact path: set of object and library paths it is made from}."""
        out = {}
        for link in self.build.rglob("CMakeFiles/*.dir/link.txt"):
            where = link.parent.parent.parent  # the directory the link command runs in
            try:
                words = shlex.split(link.read_text().replace("\n", " "))
            except (OSError, ValueError):
                continue
            target, inputs = None, set()
            if words and words[0].endswith(("ar", "ar\"")) and len(words) > 2:  # ar qc libX.a objects...
                target, rest = words[2], words[3:]
            else:
                rest = []
                for i, w in enumerate(words):
                    if w == "-o" and i + 1 < len(words):
                        target = words[i + 1]
                    else:
                        rest.append(w)
            if target is None:
                continue
            for w in rest:
                if re.search(r"\.(o|a|so(\.\d+)*)$", w) and not w.startswith("-"):
                    inputs.add(str((where / w).resolve()))
            out[str((where / target).resolve())] = inputs
        return out

    def _tests(self) -> list:
        out = subprocess.run(["ctest", "--test-dir", str(self.build), "--show-only=json-v1"], capture_output=True, text=True)
        if out.returncode != 0:
            raise SystemExit(f"ctest --show-only in {self.build}: {out.stderr.strip()}")
        tests = []
        for i, t in enumerate(json.loads(out.stdout).get("tests", []), start=1):
            words = " ".join(t.get("command", []) or [])
            props = " ".join(json.dumps(p.get("value")) for p in t.get("properties", []))
            tests.append((i, t["name"], words + " " + props))
        return tests

    def _holds(self, artefact: str, objects: set, seen=None) -> bool:
        seen = seen or set()
        if artefact in seen:
            return False
        seen.add(artefact)
        for i in self.inputs.get(artefact, ()):
            if i in objects or (i in self.inputs and self._holds(i, objects, seen)):
                return True
        return False

    def _strings(self, artefact: str) -> set:
        """The text constants of a program or shared library (its .rodata, through objcopy), where
        a path or a program's name it starts would be; none for an archive or an object."""
        if artefact not in self._bytes:
            found = set()
            if not artefact.endswith((".a", ".o")) and Path(artefact).is_file():
                with tempfile.NamedTemporaryFile() as rodata:
                    done = subprocess.run(["objcopy", "-O", "binary", "--only-section=.rodata", artefact, rodata.name],
                                          capture_output=True)
                    if done.returncode == 0:
                        found = {m.decode() for m in re.findall(rb"[\x20-\x7e]{4,}", Path(rodata.name).read_bytes())}
            self._bytes[artefact] = found
        return self._bytes[artefact]

    @staticmethod
    def _names(strings: set, artefact: str) -> bool:
        name = Path(artefact).name
        return artefact in strings or (len(name) >= 8 and any(s == name or s.endswith("/" + name) for s in strings))

    def objects_for(self, file: Path) -> set:
        """The objects compiled from `file` (none: this build does not compile it, a Windows source on Linux)."""
        wanted = str(file.resolve())
        return {o for o, files in self.depends.items() if wanted in files}

    def artefacts_for(self, file: Path) -> set:
        """The programs and libraries that hold code from `file`, and the programs they start."""
        objects = self.objects_for(file)
        holding = {a for a in self.inputs if self._holds(a, objects)}
        # Programs that start or load another by its path or its distinctive name.
        grew = True
        while grew:
            grew = False
            for a in self.inputs:
                if a not in holding and any(self._names(self._strings(a), h) for h in holding):
                    holding.add(a)
                    grew = True
        return holding

    def tests_for(self, file: Path) -> list:
        """(ctest number, name) of each test that can see `file`."""
        holding = self.artefacts_for(file)
        names = {Path(h).name for h in holding}
        out = []
        for number, name, text in self.tests:
            if any(h in text for h in holding) or any(re.search(r"[/\s\"]" + re.escape(n) + r"[\s\"]", text) for n in names if len(n) >= 8):
                out.append((number, name))
        return out
