#include "session/model_io.h"

#include <fmt/format.h>

namespace rung {

std::string TensorInfo::describe() const {
  if (!other.empty()) return other;
  std::string out;
  for (auto w : wrappers) out += w == Value::Kind::kSequence ? "sequence of " : "optional ";
  return out + fmt::format("{} {}", element_type_name(type), shape_string(shape));
}

}  // namespace rung
