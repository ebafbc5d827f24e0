// Placeholder: one side of a parity comparison run in a child process (issue: rung parity).
#pragma once

namespace rung {
int parity_worker_main(int argc, char** argv);
}  // namespace rung
