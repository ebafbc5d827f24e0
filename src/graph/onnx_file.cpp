#include "graph/onnx_file.h"

#include <fmt/format.h>

#include "os/read_file.h"
#include "os/regular_file.h"

namespace rung {
namespace fs = std::filesystem;

Result<onnx::ModelProto> read_onnx_model(const fs::path& file) {
  std::error_code ec;
  if (!fs::exists(file, ec)) return Error{ErrorCode::kNotFound, fmt::format("{} does not exist", file.string())};
  if (auto st = check_regular_file(file); !st) return st.error();  // a FIFO or a device would never end
  // A regular file of a model's size, parsed from its descriptor.
  auto in = open_input_file(file, FileKind::kModel);
  if (!in) return in.error();
  onnx::ModelProto model;
  // Protobuf accepts some garbage as a message; a model also needs an IR version and a graph with nodes.
  if (!model.ParseFromFileDescriptor(in->fd()) || model.ir_version() <= 0 || !model.has_graph() || model.graph().node_size() == 0) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("{} does not parse as an ONNX model", file.string())};
  }
  return model;
}

}  // namespace rung
