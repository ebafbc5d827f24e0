// The CPU: ONNX Runtime's own provider, built into every build. The floor of
// every ladder: what every other rung must beat on the clock and match.
#include "rungs/module.h"

namespace rung {

RungModule rung_module_cpu() {
  RungModule m;
  m.spec = {"cpu", "CPU", "CPUExecutionProvider", AppendMethod::kNone, ModelForm::kF32, false, {}, {}};
  m.rank = 1000;  // last: the floor
  m.platforms = {kEveryPlatform};
  m.about = "ONNX Runtime's CPU provider: the floor of every ladder";
  return m;
}

}  // namespace rung
