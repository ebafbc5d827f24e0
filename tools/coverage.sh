#!/usr/bin/env bash
# Line and branch coverage of rung's own code (src/ and cli/), on demand: never part of
# the README's test command (ctest runs it only as `ctest -C Coverage -L coverage`).
#
#   tools/coverage.sh               instrumented tree in build-coverage, the whole Linux
#                                   suite, then the report in build-coverage/coverage/
#   tools/coverage.sh REGEX         only the ctest tests matching REGEX
#   tools/coverage.sh --report      the report again from the counts already there
#
# What it leaves in build-coverage/coverage/: rung.info (lcov's tracefile), html/ (genhtml),
# uncovered-branches.txt (every line of src/ and cli/ with a branch no test took, per
# file, the files with most first) and summary.txt (the figures). Branches that only
# an exception's unwinding takes are left out (lcov's geninfo_no_exception_branch):
# they are the compiler's, not rung's rules. The Windows and aarch64 trees and the
# fuzzers are not part of it (their code runs elsewhere).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
tree="${RUNG_COVERAGE_DIR:-$root/build-coverage}"
out="$tree/coverage"
jobs="$(nproc 2>/dev/null || echo 2)"
python=/usr/bin/python3

for tool in lcov genhtml gcov; do
  command -v "$tool" >/dev/null || { echo "coverage: $tool is missing (apt-get install lcov)" >&2; exit 2; }
done

report_only=0
filter=""
case "${1:-}" in
  --report) report_only=1 ;;
  -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  "") ;;
  *) filter="$1" ;;
esac

failed_tests=0
if [ "$report_only" = 0 ]; then
  started=$SECONDS
  # -O0: a branch is one the source has, not one the optimiser made or folded away.
  # NDEBUG as in the shipped build, so the code measured is the code that ships.
  cmake -S . -B "$tree" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O0 -g1 -DNDEBUG" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O0 -g1 -DNDEBUG" \
        -DRUNG_COVERAGE=ON -DRUNG_BUILD_TESTS=ON -DRUNG_BUILD_BENCHMARKS=OFF -DRUNG_BUILD_FUZZERS=OFF \
        -DRUNG_AARCH64_BUILD_DIR= -DRUNG_WINDOWS_BUILD_DIR= >/dev/null
  cmake --build "$tree" -j"$jobs"
  lcov --quiet --zerocounters --directory "$tree"
  mkdir -p "$out"
  # A failing test still leaves its counts; the report says how many failed.
  set +e
  ctest --test-dir "$tree" -j"$jobs" -E '^coverage\.' ${filter:+-R "$filter"} >"$out/ctest.log" 2>&1
  ctest_rc=$?
  set -e
  failed_tests="$(grep -c '\*\*\*Failed\|\*\*\*Exception\|\*\*\*Timeout' "$out/ctest.log" || true)"
  echo "coverage: build and tests took $(( (SECONDS - started) / 60 )) min; ctest exit $ctest_rc, $failed_tests failed (see $out/ctest.log)" >&2
fi

mkdir -p "$out"
branch=(--rc lcov_branch_coverage=1 --rc geninfo_no_exception_branch=1)
lcov --quiet --capture --directory "$tree" "${branch[@]}" --output-file "$out/all.info"
lcov --quiet --extract "$out/all.info" "$root/src/*" "$root/cli/*" "${branch[@]}" --output-file "$out/rung.info"
genhtml --quiet --branch-coverage --output-directory "$out/html" "$out/rung.info" >/dev/null
"$python" tools/coverage_report.py "$out/rung.info" --root "$root" \
  --summary "$out/summary.txt" --failed-tests "$failed_tests" >"$out/uncovered-branches.txt"
cat "$out/summary.txt"
echo "coverage: uncovered branches per file in $out/uncovered-branches.txt, pages in $out/html/index.html" >&2
