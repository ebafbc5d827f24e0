// A job target on this process's ONNX Runtime: its build installed, the
// session settings it asks for. Apart from target.h, so that only the job
// kinds that open sessions parse ONNX Runtime's C++ header.
#pragma once

#include "jobs/target.h"
#include "rung/result.h"
#include "session/session.h"

namespace rung {

// Loads the target's build and installs it for this process.
inline Result<OrtProcess*> install_runtime(const JobTarget& target) {
  auto build = load_runtime_build(target.runtime_library, target.allow_writable_runtime);
  if (!build) return build.error();
  return OrtProcess::install(*build);
}

// The session settings the target asks for: its rung, threads and provider options.
inline SessionSettings session_settings(const JobTarget& target) {
  SessionSettings settings;
  settings.rung = target.rung;
  settings.intra_op_threads = target.threads;
  settings.provider.extra = target.provider_options;
  return settings;
}

}  // namespace rung
