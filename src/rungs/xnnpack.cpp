// XNNPACK: Google's CPU kernels for Arm (NEON), which ONNX Runtime builds for
// phones and boards carry. A rung above the CPU floor on any platform whose CPU
// is Arm: it runs the f32 model on the same cores, faster where its kernels are.
#include "rungs/module.h"

namespace rung {
namespace {

bool arm_cpu_with_neon(const Hardware& hw) { return hw.cpu.has_flag("asimd") || hw.cpu.has_flag("neon"); }

std::map<std::string, std::string> xnnpack_options(const ProviderSettings& s) {
  // Its own pool gets the threads the session would have had (quirks.owns_thread_pool).
  if (s.threads > 0) return {{"intra_op_num_threads", std::to_string(s.threads)}};
  return {};
}

}  // namespace

RungModule rung_module_xnnpack() {
  RungModule m;
  m.spec = {"xnnpack", "XNNPACK", "XnnpackExecutionProvider", AppendMethod::kKeyValue, ModelForm::kF32, false, {}, {}};
  m.rank = 90;
  m.platforms = {kEveryPlatform};
  m.needs = arm_cpu_with_neon;
  m.needs_text = "an Arm CPU with NEON (asimd)";
  m.provider_options = xnnpack_options;
  m.quirks.owns_thread_pool = true;
  m.only_if_built = true;
  m.about = "Google's XNNPACK kernels on an Arm CPU, in f32";
  return m;
}

}  // namespace rung
