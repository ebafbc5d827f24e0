#include "commands.h"

namespace rung::cli {

// One mapping for the command line and the C ABI (rung/result.h).
int exit_code_for(ErrorCode code) { return exit_code_of(code); }

static_assert(exit_code_of(ErrorCode::kInvalidArgument) == kExitUsage && exit_code_of(ErrorCode::kNoRuntime) == kExitNoRuntime &&
              exit_code_of(ErrorCode::kRuntime) == kExitFailed);

}  // namespace rung::cli
