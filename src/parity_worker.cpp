#include "parity_worker.h"

namespace rung {
int parity_worker_main(int, char**) { return 2; }
}  // namespace rung
