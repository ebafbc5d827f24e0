#include "rung/model.h"

namespace rung {

const char* role_name(Role r) {
  switch (r) {
    case Role::kDetector: return "detector";
    case Role::kEmbedder: return "embedder";
    case Role::kSegmenter: return "segmenter";
    case Role::kGeneric: return "generic";
  }
  return "?";
}

const char* numeric_form_name(NumericForm f) {
  switch (f) {
    case NumericForm::kF32: return "f32";
    case NumericForm::kF16: return "f16";
    case NumericForm::kInt8: return "i8";
    case NumericForm::kA16W8: return "a16w8";
    case NumericForm::kA16W16: return "a16w16";
    case NumericForm::kW8: return "w8";
  }
  return "?";
}

std::string model_id(const std::string& name, NumericForm form) {
  if (form == NumericForm::kF32) return name;
  const std::string suffix = std::string("_") + numeric_form_name(form);
  // A file rung quantise wrote is named by its model id already: its stem names the form once.
  if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) return name;
  return name + suffix;
}

}  // namespace rung
