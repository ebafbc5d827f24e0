#include "graph/model_write.h"

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include "os/atomic_file.h"

namespace rung {

Status write_onnx_model(const onnx::ModelProto& model, const std::filesystem::path& path) {
  std::string bytes;
  if (!model.SerializeToString(&bytes)) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("{}: the model does not serialise (over 2 GiB?)", path.string())};
  }
  return write_file_atomically(path, bytes);
}

}  // namespace rung
