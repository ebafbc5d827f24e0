// rung-probe-worker.exe's entry point: wmain (linked with -municode), so a job
// file's path beyond the ANSI code page arrives whole; the worker itself is
// worker/kinds.cpp.
#include "kinds.h"
#include "os/windows/text.h"

int wmain(int argc, wchar_t** wide_argv) {
  rung::Utf8Arguments args(argc, wide_argv);
  return rung::run_probe_worker(args.argc(), args.argv());
}
