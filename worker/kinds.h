// The worker's job kinds and its body, shared by its POSIX main (worker/main.cpp)
// and its Windows wmain (worker/windows_main.cpp).
#pragma once

namespace rung {

// `rung-probe-worker KIND JOB.json [--channel=FD]`, with UTF-8 arguments.
int run_probe_worker(int argc, char** argv);

}  // namespace rung
