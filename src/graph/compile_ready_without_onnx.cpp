// graph/compile_ready.h where no ONNX protobuf library is built (Windows): the
// rewrite itself needs the library, so a model with control flow is refused an
// engine with that reason, and any other model needs no rewrite. The model's
// nodes are found by reading the wire format: ModelProto.graph (7) and each
// ModelProto.functions (25) hold nodes (GraphProto.node 1, FunctionProto.node 7)
// whose op_type is field 4 and domain field 7.
#include <fmt/format.h>

#include "graph/compile_ready.h"
#include "graph/protobuf_wire.h"
#include "os/read_file.h"

namespace rung {
namespace {

// The first control-flow op among a list of NodeProtos' bytes; empty when none.
std::string control_flow_in_node(std::string_view node) {
  std::string_view op, domain;
  wire::Reader r(node);
  while (auto f = r.next()) {
    if (f->type != wire::kBytes) continue;
    if (f->number == 4) op = f->bytes;
    if (f->number == 7) domain = f->bytes;
  }
  const bool onnx_domain = domain.empty() || domain == "ai.onnx";
  return onnx_domain && (op == "If" || op == "Loop" || op == "Scan") ? std::string(op) : "";
}

std::string control_flow_in(std::string_view message, std::uint32_t node_field) {
  wire::Reader r(message);
  while (auto f = r.next()) {
    if (f->type != wire::kBytes || f->number != node_field) continue;
    if (auto op = control_flow_in_node(f->bytes); !op.empty()) return op;
  }
  return "";
}

}  // namespace

bool compile_ready_rewrite_built() { return false; }

// Nothing is rewritten here.
std::string CompileReadyRewrite::describe() const { return "unchanged"; }

Result<CompileReadyRewrite> write_compile_ready(const std::filesystem::path& model, const std::filesystem::path&) {
  auto bytes = read_input_file(model, FileKind::kModel);
  if (!bytes) return bytes.error();
  wire::Reader r(*bytes);
  while (auto f = r.next()) {
    if (f->type != wire::kBytes || (f->number != 7 && f->number != 25)) continue;
    const std::string op = control_flow_in(f->bytes, f->number == 7 ? 1 : 7);
    if (!op.empty()) {
      return Error{ErrorCode::kUnsupported,
                   fmt::format("{}: has control flow ({}); the rewrite ONNX Runtime's compile needs for it reads ONNX protobuf, "
                               "which this build of rung has not (Windows): no engine is compiled for it",
                               model.string(), op)};
    }
  }
  if (r.broken()) return Error{ErrorCode::kInvalidArgument, fmt::format("{}: not an ONNX model", model.string())};
  return CompileReadyRewrite{};
}

}  // namespace rung
