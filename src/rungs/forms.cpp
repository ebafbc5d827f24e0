#include "rungs/forms.h"

#include <algorithm>

namespace rung {

bool changes_arithmetic(const RungSpec& rung) { return rung.form != ModelForm::kF32; }

bool builds_fp16(const RungSpec& rung, Role role) { return rung.form == ModelForm::kF32ToF16Engine && role != Role::kEmbedder; }

const DerivedForm* quantised_form_for(const RungSpec& rung, const ModelRegistration& model) {
  if (model.role == Role::kEmbedder) return nullptr;
  const bool cpu_variant = rung.append == AppendMethod::kNone &&
                           std::find(model.rungs.begin(), model.rungs.end(), rung.name) != model.rungs.end();
  if (rung.form != ModelForm::kQuantized && !cpu_variant) return nullptr;
  const DerivedForm* q = nullptr;
  for (const auto& d : model.derived) {
    // A w8 file computes in float: the CPU's form, not one an NPU runs quantised.
    if (d.form == NumericForm::kW8 && rung.form == ModelForm::kQuantized) continue;
    if (d.form != NumericForm::kF16 && d.form != NumericForm::kF32) q = &d;
  }
  return q;
}

}  // namespace rung
