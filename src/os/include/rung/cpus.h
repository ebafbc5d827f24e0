// The logical CPUs this process may run on (its affinity mask), at least 1:
// the most threads a session is given (more only queue behind each other).
#pragma once

namespace rung {

int usable_cpus();

}  // namespace rung
