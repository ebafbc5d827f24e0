// ONNX Runtime's error messages reduced to their reason, for tables and records.
#pragma once

#include <string>

namespace rung {

// ONNX Runtime's messages carry a source location, a function signature and
// "[ONNXRuntimeError] : 1 : FAIL : " before the reason; a missing provider
// library is said at length. Keeps the reason.
std::string clean_error(std::string message);

// The reason in one bounded line, for an about line or a progress row.
std::string brief_reason(const std::string& message);

}  // namespace rung
