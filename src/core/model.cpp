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
  }
  return "?";
}

std::string model_id(const std::string& name, NumericForm form) {
  return form == NumericForm::kF32 ? name : name + "_" + numeric_form_name(form);
}

}  // namespace rung
