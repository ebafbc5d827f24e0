// Placeholder: the benchmark job run in a child process (issue: rung bench).
#pragma once

namespace rung {
int bench_worker_main(int argc, char** argv);
}  // namespace rung
