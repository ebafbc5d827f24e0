// rung-probe-worker's entry point where arguments are bytes (POSIX); the worker
// itself is worker/kinds.cpp.
#include "kinds.h"

int main(int argc, char** argv) { return rung::run_probe_worker(argc, argv); }
