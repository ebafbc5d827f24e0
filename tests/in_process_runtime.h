// ONNX Runtime 1.30.0 installed in the test process, for tests that open
// sessions themselves (a process holds one build).
#pragma once

#include "rung/runtime.h"
#include "session/session.h"
#include "test_support.h"

namespace rung::test {

inline Result<OrtProcess*> install_runtime_1_30() {
  auto build = load_runtime_build(runtime_dir("1.30.0") / "libonnxruntime.so.1");
  if (!build) return build.error();
  return OrtProcess::install(*build);
}

}  // namespace rung::test
