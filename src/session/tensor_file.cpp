#include "session/tensor_file.h"

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <climits>
#include <cstring>

#include "os/atomic_file.h"
#include "os/read_file.h"

namespace rung {
namespace {

int to_onnx(ElementType t) {
  switch (t) {
    case ElementType::kFloat: return onnx::TensorProto::FLOAT;
    case ElementType::kFloat16: return onnx::TensorProto::FLOAT16;
    case ElementType::kDouble: return onnx::TensorProto::DOUBLE;
    case ElementType::kInt8: return onnx::TensorProto::INT8;
    case ElementType::kUint8: return onnx::TensorProto::UINT8;
    case ElementType::kInt16: return onnx::TensorProto::INT16;
    case ElementType::kInt32: return onnx::TensorProto::INT32;
    case ElementType::kInt64: return onnx::TensorProto::INT64;
    case ElementType::kBool: return onnx::TensorProto::BOOL;
    case ElementType::kUnsupported: break;
  }
  return onnx::TensorProto::UNDEFINED;
}

ElementType from_onnx(int t) {
  switch (t) {
    case onnx::TensorProto::FLOAT: return ElementType::kFloat;
    case onnx::TensorProto::FLOAT16: return ElementType::kFloat16;
    case onnx::TensorProto::DOUBLE: return ElementType::kDouble;
    case onnx::TensorProto::INT8: return ElementType::kInt8;
    case onnx::TensorProto::UINT8: return ElementType::kUint8;
    case onnx::TensorProto::INT16: return ElementType::kInt16;
    case onnx::TensorProto::INT32: return ElementType::kInt32;
    case onnx::TensorProto::INT64: return ElementType::kInt64;
    case onnx::TensorProto::BOOL: return ElementType::kBool;
    default: return ElementType::kUnsupported;
  }
}

template <class T, class Field>
void copy_field(const Field& field, Tensor& t) {
  t.bytes.resize(static_cast<std::size_t>(field.size()) * sizeof(T));
  auto* out = reinterpret_cast<T*>(t.bytes.data());
  for (int i = 0; i < field.size(); ++i) out[i] = static_cast<T>(field.Get(i));
}

}  // namespace

Result<Tensor> parse_tensor_proto(std::string_view bytes, const std::string& where, const std::string& fallback_name,
                                  std::uint64_t max_bytes) {
  onnx::TensorProto proto;
  if (bytes.size() > static_cast<std::size_t>(INT_MAX) || !proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("{}: not an ONNX TensorProto", where)};
  }
  Tensor t;
  t.name = proto.name().empty() ? fallback_name : proto.name();
  t.type = from_onnx(proto.data_type());
  if (t.type == ElementType::kUnsupported) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("{}: element type {} is not supported", where, proto.data_type())};
  }
  t.shape.assign(proto.dims().begin(), proto.dims().end());
  auto need = tensor_bytes(where, t.type, t.shape, max_bytes);
  if (!need) return need.error();
  if (proto.has_raw_data()) {
    const auto& raw = proto.raw_data();
    t.bytes.resize(raw.size());
    std::memcpy(t.bytes.data(), raw.data(), raw.size());
  } else {
    switch (t.type) {
      case ElementType::kFloat: copy_field<float>(proto.float_data(), t); break;
      case ElementType::kDouble: copy_field<double>(proto.double_data(), t); break;
      case ElementType::kInt64: copy_field<std::int64_t>(proto.int64_data(), t); break;
      case ElementType::kInt32: copy_field<std::int32_t>(proto.int32_data(), t); break;
      case ElementType::kInt16: copy_field<std::int16_t>(proto.int32_data(), t); break;
      case ElementType::kInt8: copy_field<std::int8_t>(proto.int32_data(), t); break;
      case ElementType::kUint8: case ElementType::kBool: copy_field<std::uint8_t>(proto.int32_data(), t); break;
      case ElementType::kFloat16: copy_field<std::uint16_t>(proto.int32_data(), t); break;
      case ElementType::kUnsupported: break;
    }
  }
  if (t.bytes.size() != *need) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("{}: holds {} bytes, shape {} of {} needs {}", where, t.bytes.size(),
                                                          shape_string(t.shape), element_type_name(t.type), *need)};
  }
  return t;
}

Result<Tensor> read_tensor_file(const std::filesystem::path& path, std::uint64_t max_bytes) {
  // The name and dimensions take a few bytes beside the data.
  constexpr std::uint64_t kHeaderRoom = 64 << 10;
  auto bytes = read_regular_file(path, max_bytes > UINT64_MAX - kHeaderRoom ? UINT64_MAX : max_bytes + kHeaderRoom, "--max-tensor-mb");
  if (!bytes) return bytes.error();
  return parse_tensor_proto(*bytes, path.string(), path.stem().string(), max_bytes);
}

Status write_tensor_file(const Tensor& tensor, const std::filesystem::path& path) {
  onnx::TensorProto proto;
  proto.set_name(tensor.name);
  proto.set_data_type(to_onnx(tensor.type));
  for (auto d : tensor.shape) proto.add_dims(d);
  proto.set_raw_data(std::string(reinterpret_cast<const char*>(tensor.bytes.data()), tensor.bytes.size()));
  return write_file_atomically(path, proto.SerializeAsString());
}

Result<std::vector<Tensor>> read_tensor_directory(const std::filesystem::path& dir, std::uint64_t max_bytes) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return Error{ErrorCode::kNotFound, fmt::format("{}: not a directory", dir.string())};
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (e.path().extension() == ".pb") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) return Error{ErrorCode::kNotFound, fmt::format("{}: holds no .pb tensors", dir.string())};
  std::vector<Tensor> out;
  for (const auto& f : files) {
    auto t = read_tensor_file(f, max_bytes);
    if (!t) return t.error();
    out.push_back(std::move(*t));
  }
  return out;
}

Status write_output_directory(const std::vector<Tensor>& tensors, const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    if (auto s = write_tensor_file(tensors[i], dir / fmt::format("output_{}.pb", i)); !s) return s;
  }
  return {};
}

}  // namespace rung
