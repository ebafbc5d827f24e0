// Force-included into every source of rung's libraries and its worker (CMake's
// RUNG_ENVIRONMENT_GUARD): after it, naming getenv or secure_getenv is a compile
// error, so every read of the environment goes through os/environment.h, where
// the engine's hermetic rule is kept. The one macro defined before the poison
// is that file's way in (a macro defined before an identifier is poisoned may
// still expand to it).
#pragma once

#include <cstdlib>
#include <stdlib.h>

#define RUNG_ENVIRONMENT_READ(name) std::getenv(name)

#pragma GCC poison getenv secure_getenv
