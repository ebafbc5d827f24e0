// Whether progress may be drawn: only on a terminal, never into a log or a pipe.
#pragma once

namespace rung {

bool stderr_is_terminal();

}  // namespace rung
