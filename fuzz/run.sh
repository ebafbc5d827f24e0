#!/bin/sh
# Runs one fuzzer for a while from its seed corpus (fuzz/corpus/NAME), keeping
# what it finds in BUILD/fuzz/corpus/NAME and any crash in BUILD/fuzz/artifacts/.
#   fuzz/run.sh BUILD NAME SECONDS      e.g. fuzz/run.sh build probe-cache 600
# Exit status: the fuzzer's (0: nothing found in that time).
set -eu
build=$1 name=$2 seconds=$3
here=$(cd "$(dirname "$0")" && pwd)
fuzzer="$build/fuzz/$name-fuzzer"
work="$build/fuzz/corpus/$name"
artifacts="$build/fuzz/artifacts/$name/"
mkdir -p "$work" "$artifacts"
# -rss_limit_mb: a parser that allocates beyond its stated limits is a finding.
exec "$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
  -print_final_stats=1 -artifact_prefix="$artifacts" "$work" "$here/corpus/$name"
