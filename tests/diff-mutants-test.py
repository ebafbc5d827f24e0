#!/usr/bin/env python3
"""tools/diff_mutants.py: each operator on a line made for it, text in strings
and comments left alone, and mutants made only from the lines a commit added
(in a throwaway git repository). tools/test_selection.py: a build's records
followed from a source to the test that runs it (--build, the tree's build)."""
import argparse
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
from diff_mutants import code_mask, line_mutations, mutants_from_diff  # noqa: E402

BUILD = None


def mutations(line):
    mask, _ = code_mask(line, False)
    return line_mutations(line, mask)


def by(operator, line):
    return [m for op, m in mutations(line) if op == operator]


class Operators(unittest.TestCase):
    def test_each_relational_boundary_moves_and_turns(self):
        self.assertEqual(by("relational", "  if (a < b) x();"), ["  if (a <= b) x();"])
        self.assertEqual(by("relational", "  if (a <= b) x();"), ["  if (a < b) x();"])
        self.assertEqual(by("relational", "  if (a >= b) x();"), ["  if (a > b) x();"])
        self.assertEqual(by("relational", "  if (a == b) x();"), ["  if (a != b) x();"])

    def test_template_brackets_and_shifts_are_not_comparisons(self):
        self.assertEqual(by("relational", "  std::vector<int> v = f<2>(x);"), [])
        self.assertEqual(by("relational", "  const auto n = mib << 20;"), [])

    def test_logical_and_arithmetic_swap_with_their_opposite(self):
        self.assertEqual(by("logical", "  return a && b;"), ["  return a || b;"])
        self.assertEqual(by("arithmetic", "  return a * b;"), ["  return a / b;"])

    def test_a_constant_moves_by_one_and_a_unit_by_1024(self):
        self.assertEqual(by("constant", "  int n = 7;"), ["  int n = 8;", "  int n = 6;"])
        self.assertEqual(by("constant", "  int n = 0;"), ["  int n = 1;"])
        self.assertEqual(by("constant", "  const auto kib = bytes / 1024;"), ["  const auto kib = bytes / 1;", "  const auto kib = bytes / 1048576;"])
        self.assertEqual(by("constant", "  double x = 1.5;"), [])  # not an integer
        self.assertEqual(by("constant", "  f(x2, v8);"), [])  # digits in names

    def test_conditions_are_negated_whole_and_after_an_initialiser(self):
        self.assertEqual(by("negated", "  if (a && b) return;"), ["  if (!(a && b)) return;"])
        self.assertEqual(by("negated", "  if (auto s = f(); !s) return s;"), ["  if (auto s = f(); !(!s)) return s;"])

    def test_statements_early_returns_and_key_fields_are_deleted(self):
        self.assertEqual(by("deleted", "  out.push_back(x);"), [None])
        self.assertEqual(by("deleted", "  if (!ok) return Error{};"), [None])
        self.assertEqual(by("deleted", '      {"rung", plan.rung.name},'), [None])
        self.assertEqual(by("deleted", "  const int n = f(x);"), [])  # a declaration: deleting it does not compile
        self.assertEqual(by("deleted", "  return n;"), [])

    def test_two_arguments_are_swapped(self):
        self.assertEqual(by("swapped", "  g(lo, hi);"), ["  g(hi, lo);"])
        self.assertEqual(by("swapped", "  g(lo, lo);"), [])

    def test_strings_and_comments_are_never_mutated(self):
        self.assertEqual(mutations('  log("a < b && 3 + 4");'), [("deleted", None)])
        self.assertEqual(mutations("  // if (a < b) return 1;"), [])
        self.assertEqual(by("relational", "  x = a;  // a < b"), [])
        mask, open_block = code_mask("  /* a < b", False)
        self.assertTrue(open_block)
        self.assertEqual(line_mutations("  a < b */", code_mask("  a < b */", True)[0]), [])


class FromDiff(unittest.TestCase):
    def test_only_lines_a_commit_added_are_mutated_each_applying_once(self):
        with tempfile.TemporaryDirectory() as d:
            root = Path(d)
            git = lambda *a: subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *a], cwd=root, check=True,
                                             capture_output=True)
            git("init", "-q")
            (root / "src").mkdir()
            (root / "src" / "rule.cpp").write_text("int old_rule(int a) { return a < 3; }\n")
            git("add", ".")
            git("commit", "-qm", "base")
            (root / "src" / "rule.cpp").write_text("int old_rule(int a) { return a < 3; }\n"
                                                  "int new_rule(int a) { return a < 4; }\n"
                                                  "int same(int a) { return a < 4; }\n"
                                                  "int same(int a) { return a < 4; }\n")
            (root / "notes.txt").write_text("a < b\n")
            made = mutants_from_diff(root, "HEAD", lambda i, f, w, o, r: (i, f, w, o, r))
            self.assertTrue(made)
            self.assertTrue(all(f == "src/rule.cpp" for _, f, _, _, _ in made))
            text = (root / "src" / "rule.cpp").read_text()
            self.assertFalse(any("old_rule" in o for _, _, _, o, _ in made))
            for i, _, _, original, replacement in made:
                self.assertEqual(text.count(original), 1, i)  # applies exactly once
                self.assertNotEqual(original, replacement, i)
            ids = [i for i, *_ in made]
            self.assertEqual(len(ids), len(set(ids)))
            self.assertIn("return a <= 4;", "\n".join(r for *_, r in made if "new_rule" in r))


class SelectionFromTheBuild(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if BUILD is None:
            raise unittest.SkipTest("no --build given")
        from test_selection import TestMap
        cls.map = TestMap(BUILD)

    def test_a_source_reaches_the_tests_that_link_it_and_no_unrelated_check(self):
        source = Path(__file__).resolve().parent.parent / "src" / "quantise" / "speed.cpp"
        names = [n for _, n in self.map.tests_for(source)]
        self.assertIn("SpeedRefusalTest.AnUntimedFormIsNotRefused", names)
        self.assertNotIn("docs.links_resolve", names)  # a script over the docs runs no program

    def test_a_file_no_object_is_built_from_reaches_nothing(self):
        source = Path(__file__).resolve().parent.parent / "src" / "os" / "windows" / "directory.cpp"
        self.assertEqual(self.map.objects_for(source), set())
        self.assertEqual(self.map.tests_for(source), [])


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", type=Path)
    args, rest = ap.parse_known_args()
    BUILD = args.build
    unittest.main(argv=[sys.argv[0], *rest])
