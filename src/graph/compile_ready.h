// A model with control flow (If, Loop, Scan) rewritten so that ONNX Runtime's
// compile API writes an EPContext model that loads again. ONNX Runtime 1.30.0
// fails four ways on such models (the README's "Control flow and the compile
// API" gives each cause in its source, and tests/compile-ready-test.cc
// reproduces each):
//   - a constant a subgraph holds itself: from 128 bytes up the compile fails
//     ("in-memory address marker"); below that the compiled model holds it twice
//     and does not load ("initializer name is not unique");
//   - a main-graph value that only subgraphs read: an initializer is dropped
//     from the compiled model, and a node output a plugin EP compiled loses its type.
// So the rewrite lifts every subgraph constant into the main graph, and gives
// every main-graph value that only subgraphs read an outer reader: an Identity
// node whose output nothing uses. Neither changes what the model computes; the
// compile job still proves that on inputs before it uses the rewritten file.
#pragma once

#include <filesystem>
#include <string>

#include "rung/result.h"

namespace rung {

struct CompileReadyRewrite {
  int constants_lifted = 0;  // initializers and Constant nodes moved out of subgraphs
  int subgraphs = 0;         // the subgraphs they came from
  int readers = 0;           // main-graph values only subgraphs read, given an outer reader
  bool changed() const { return constants_lifted > 0 || readers > 0; }
  // "12 constants lifted out of 3 subgraphs; 4 values only subgraphs read given an outer reader"
  std::string describe() const;
};

// Rewrites `model` into `output` (written atomically) when the model needs it,
// and writes nothing when it does not (no subgraph, or nothing to move).
// kUnsupported for a model the rewrite cannot keep whole in another directory
// (tensors in external data files) or one older than IR version 4.
Result<CompileReadyRewrite> write_compile_ready(const std::filesystem::path& model, const std::filesystem::path& output);

// Whether this build can rewrite at all: not where ONNX's protobuf library is
// missing (Windows), where write_compile_ready refuses a model with control flow
// instead, and that model is refused an engine with the reason.
bool compile_ready_rewrite_built();

}  // namespace rung
