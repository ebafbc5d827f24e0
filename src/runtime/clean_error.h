// ONNX Runtime's error messages reduced to their reason, for tables and records.
#pragma once

#include <string>

namespace rung {

// ONNX Runtime's messages carry a source location, a function signature and
// "[ONNXRuntimeError] : 1 : FAIL : " before the reason; a missing provider
// library is said at length (it becomes what is really missing, in the
// words of the library table: rungs/libraries.h). Keeps the reason.
std::string clean_error(std::string message);

// Whether a reason, as clean_error() or the dependency check (runtime/dependencies.h)
// words it, says the provider could not load because a library it needs is absent
// or of another version: the provider never got to try.
bool reason_is_missing_library(const std::string& reason);

// The reason in one bounded line, for an about line or a progress row.
std::string brief_reason(const std::string& message);

}  // namespace rung
