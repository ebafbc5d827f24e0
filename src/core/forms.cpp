#include "core/forms.h"

namespace rung {

bool changes_arithmetic(const RungSpec& rung) { return rung.form != ModelForm::kF32; }

bool builds_fp16(const RungSpec& rung, Role role) { return rung.form == ModelForm::kF32ToF16Engine && role != Role::kEmbedder; }

const DerivedForm* quantised_form_for(const RungSpec& rung, const ModelRegistration& model) {
  if (rung.form != ModelForm::kQuantized || model.role == Role::kEmbedder) return nullptr;
  const DerivedForm* q = nullptr;
  for (const auto& d : model.derived) {
    if (d.form != NumericForm::kF16 && d.form != NumericForm::kF32) q = &d;
  }
  return q;
}

}  // namespace rung
