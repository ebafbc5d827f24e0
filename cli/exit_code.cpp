#include "commands.h"

namespace rung::cli {

int exit_code_for(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
    case ErrorCode::kNotFound: return kExitUsage;
    case ErrorCode::kNoRuntime: return kExitNoRuntime;
    // The command ran and could not do it: a provider, a file system or a worker said no.
    case ErrorCode::kPermission:
    case ErrorCode::kLoadFailed:
    case ErrorCode::kUnsupported:
    case ErrorCode::kRuntime:
    case ErrorCode::kIo: return kExitFailed;
  }
  return kExitFailed;
}

}  // namespace rung::cli
