#include "bench_job.h"

namespace rung {
int bench_worker_main(int, char**) { return 2; }
}  // namespace rung
