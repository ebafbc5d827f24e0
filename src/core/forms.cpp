#include "core/forms.h"

namespace rung {

bool changes_arithmetic(const RungSpec& rung) { return rung.form != ModelForm::kF32; }

bool builds_fp16(const RungSpec& rung, Role role) { return rung.form == ModelForm::kF32ToF16Engine && role != Role::kEmbedder; }

}  // namespace rung
