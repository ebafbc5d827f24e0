"""Mutants made by rule from the lines a change added (tools/mutate.py --from-diff).

No one chooses them: every line that `git diff BASE` adds to the C++ of src/,
cli/ or include/ is offered to each operator below, and every place an operator
applies is one mutant. The operators are the small mistakes a developer makes
at a rule's edge:

  relational   < <= > >= == != : the boundary moved or the test turned round
  logical      && || : the one for the other
  arithmetic   + - * / : the one for its opposite
  constant     an integer N as N+1 and N-1; 1024 as 1 and 1048576 (a unit lost)
  boolean      true and false exchanged
  negated      if (C) as if (!(C))
  deleted      a statement on its own line (a call, an early return, an
               assignment), or one field of a braced initialiser (a key, a
               hash's input, a JSON field) dropped
  swapped      f(a, b) as f(b, a)

Text in string literals and comments is never mutated. Each mutant is the
changed line (with the lines before it where that line is not unique in its
file) and its replacement, so it applies exactly as the hand-written list's do.
"""

import re
import subprocess
from pathlib import Path

SOURCES = ("src/", "cli/", "include/")
SUFFIXES = (".cpp", ".cc", ".h", ".hpp")

RELATIONAL = {"<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=", "!=": "=="}
LOGICAL = {"&&": "||", "||": "&&"}
ARITHMETIC = {"+": "-", "-": "+", "*": "/", "/": "*"}


def added_lines(root: Path, base: str) -> dict:
    """{file: [line numbers in the work tree]} of the lines added or changed since `base`."""
    out = subprocess.run(["git", "diff", "-U0", "--no-color", "--no-ext-diff", base, "--", *SOURCES],
                         cwd=root, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"git diff {base}: {out.stderr.strip()}")
    files, current = {}, None
    for line in out.stdout.splitlines():
        if line.startswith("+++ "):
            name = line[4:]
            current = name[2:] if name.startswith("b/") and name.endswith(SUFFIXES) else None
        elif line.startswith("@@") and current:
            m = re.match(r"@@ -\S+ \+(\d+)(?:,(\d+))? @@", line)
            start, count = int(m.group(1)), int(m.group(2) or "1")
            files.setdefault(current, []).extend(range(start, start + count))
    return files


def code_mask(line: str, in_block: bool):
    """Which characters are code (not a string, a character literal or a comment),
    and whether a block comment is still open at the end of the line."""
    mask = [False] * len(line)
    i, n = 0, len(line)
    while i < n:
        if in_block:
            end = line.find("*/", i)
            if end < 0:
                return mask, True
            i, in_block = end + 2, False
            continue
        c = line[i]
        if line.startswith("//", i):
            break
        if line.startswith("/*", i):
            in_block, i = True, i + 2
            continue
        if line.startswith('R"', i):
            m = re.match(r'R"([^(]*)\(', line[i:])
            if m:
                end = line.find(")" + m.group(1) + '"', i)
                i = n if end < 0 else end + len(m.group(1)) + 2
                continue
        if c in "\"'":
            j = i + 1
            while j < n and line[j] != c:
                j += 2 if line[j] == "\\" else 1
            i = j + 1
            continue
        mask[i] = True
        i += 1
    return mask, in_block


def is_code(mask, start, end):
    return all(mask[start:end]) if end <= len(mask) else False


def matching_paren(line: str, mask, open_at: int) -> int:
    depth = 0
    for k in range(open_at, len(line)):
        if not mask[k]:
            continue
        if line[k] == "(":
            depth += 1
        elif line[k] == ")":
            depth -= 1
            if depth == 0:
                return k
    return -1


def line_mutations(line: str, mask):
    """(operator, mutated line) for each place an operator applies."""
    out = []
    stripped = line.strip()
    if not stripped or stripped.startswith(("#", "//", "/*", "*")) or not any(mask):
        return out

    def replace(start, end, text):
        return line[:start] + text + line[end:]

    for m in re.finditer(r"(?<=\s)(<=|>=|==|!=|<|>)(?=\s)", line):
        if is_code(mask, m.start(), m.end()) and not re.search(r"\btemplate\s*$", line[:m.start()]):
            out.append(("relational", replace(m.start(), m.end(), RELATIONAL[m.group(1)])))
    for m in re.finditer(r"(?<=\s)(&&|\|\|)(?=\s)", line):
        if is_code(mask, m.start(), m.end()):
            out.append(("logical", replace(m.start(), m.end(), LOGICAL[m.group(1)])))
    for m in re.finditer(r"(?<=\s)([-+*/])(?=\s)", line):
        if is_code(mask, m.start(), m.end()):
            out.append(("arithmetic", replace(m.start(), m.end(), ARITHMETIC[m.group(1)])))
    for m in re.finditer(r"(?<![\w.])(\d+)([uUlL]*)(?![\w.'])", line):
        if not is_code(mask, m.start(), m.end()):
            continue
        n = int(m.group(1))
        if n in (1024, 1 << 20):
            choices = [n // 1024, n * 1024]
        else:
            choices = [n + 1] + ([n - 1] if n > 0 else [])
        for v in choices:
            out.append(("constant", replace(m.start(1), m.end(1), str(v))))
    for m in re.finditer(r"\b(true|false)\b", line):
        if is_code(mask, m.start(), m.end()):
            out.append(("boolean", replace(m.start(), m.end(), "false" if m.group(1) == "true" else "true")))
    for m in re.finditer(r"\b(if|while) \(", line):
        open_at = m.end() - 1
        if not is_code(mask, m.start(), m.end()):
            continue
        close = matching_paren(line, mask, open_at)
        if close > open_at + 1:
            cond = line[open_at + 1:close]
            if ";" in cond:  # an if with an initialiser: negate what it tests
                init, _, test = cond.rpartition(";")
                negated = f"{init}; !({test.strip()})"
            else:
                negated = f"!({cond})"
            out.append(("negated", line[:open_at + 1] + negated + line[close:]))
    for m in re.finditer(r"\b(\w+)\((\w[\w.]*), (\w[\w.]*)\)", line):
        if is_code(mask, m.start(), m.end()) and m.group(2) != m.group(3):
            out.append(("swapped", replace(m.start(2), m.end(3), f"{m.group(3)}, {m.group(2)}")))
    # A whole statement or one field of an initialiser, dropped.
    code_only = "".join(ch for ch, c in zip(line, mask) if c).strip()
    statement = code_only.endswith(";") and not re.match(r"^(return\b|case\b|default\b|break;|continue;|using\b|namespace\b|"
                                                          r"struct\b|class\b|enum\b|template\b|typedef\b|[}{])", code_only)
    declaration = re.match(r"^(const\s+|static\s+|constexpr\s+|inline\s+)*[\w:<>,*& ]+\s+[*&]?\w+(\s*[=({].*)?;$", code_only) \
        and not re.match(r"^[\w.\->\[\]]+\s*(=|\+=|-=|\*=|/=|\|=|&=)", code_only)
    early_return = re.match(r"^if \(.*\) (return|continue|break)\b.*;$", code_only)
    field = re.match(r'^\{".*\},?$', stripped) and "{" not in stripped[1:-2]
    if (statement and not declaration) or early_return or field:
        out.append(("deleted", None))
    return out


def unique_snippet(lines: list, index: int, text: str):
    """The shortest run of lines ending at `index` that occurs once in the file, or None."""
    for before in range(0, 4):
        if index - before < 0:
            return None
        snippet = "\n".join(lines[index - before:index + 1])
        if text.count(snippet) == 1:
            return before
    return None


def mutants_from_diff(root: Path, base: str, make):
    """Every mutant of the lines added since `base`, built by make(id, file, what, original, replacement)."""
    mutants = []
    for file, numbers in sorted(added_lines(root, base).items()):
        path = root / file
        try:
            text = path.read_text()
        except OSError:
            continue
        lines = text.split("\n")
        masks, in_block = [], False
        for line in lines:
            mask, in_block = code_mask(line, in_block)
            masks.append(mask)
        for number in sorted(set(numbers)):
            index = number - 1
            if index >= len(lines):
                continue
            before = unique_snippet(lines, index, text)
            if before is None:
                continue
            context = lines[index - before:index]
            original = "\n".join(context + [lines[index]])
            for k, (operator, mutated) in enumerate(line_mutations(lines[index], masks[index])):
                replacement = "\n".join(context) if mutated is None else "\n".join(context + [mutated])
                stem = Path(file).stem
                mutants.append(make(f"{stem}:{number}:{operator}:{k}", file,
                                    f"{operator} at {file}:{number}: {lines[index].strip()[:90]}",
                                    original, replacement))
    return mutants
