#include "graph/onnx_file.h"

#include <fmt/format.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include "os/read_file.h"
#include "os/regular_file.h"

namespace rung {
namespace fs = std::filesystem;

namespace {

// Protobuf reads the model through the one reader of files (os/read_file.h), in
// pieces: a model of up to 2 GiB is never held twice.
class InputFileStream : public google::protobuf::io::CopyingInputStream {
 public:
  explicit InputFileStream(const InputFile& file) : file_(file) {}
  int Read(void* buffer, int size) override {
    auto n = file_.read_into(buffer, static_cast<std::size_t>(size), at_);
    if (!n) return -1;
    at_ += *n;
    return static_cast<int>(*n);
  }

 private:
  const InputFile& file_;
  std::uint64_t at_ = 0;
};

}  // namespace

Result<onnx::ModelProto> read_onnx_model(const fs::path& file) {
  std::error_code ec;
  if (!fs::exists(file, ec)) return missing_path(file);
  RUNG_RETURN_IF_ERROR(check_regular_file(file));  // a FIFO or a device would never end
  // A regular file of a model's size, streamed to the parser.
  auto in = open_input_file(file, FileKind::kModel);
  if (!in) return in.error();
  InputFileStream source(*in);
  google::protobuf::io::CopyingInputStreamAdaptor stream(&source);
  onnx::ModelProto model;
  // "protobuf parsing failed": ONNX Runtime's words for the same file too (runtime/clean_error.cpp).
  if (!model.ParseFromZeroCopyStream(&stream)) return malformed_input(file.string(), "an ONNX model", "protobuf parsing failed");
  // Protobuf accepts some garbage as a message; a model also needs an IR version and a graph with nodes.
  if (model.ir_version() <= 0) return malformed_input(file.string(), "an ONNX model", "it has no IR version");
  if (!model.has_graph() || model.graph().node_size() == 0) return malformed_input(file.string(), "an ONNX model", "it has no graph of nodes");
  return model;
}

}  // namespace rung
