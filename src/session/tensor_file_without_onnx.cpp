// session/tensor_file.h where no ONNX protobuf library is built (Windows): a
// TensorProto read and written through its wire format (graph/protobuf_wire.h).
// What rung writes (name, dims, data_type, raw_data; strings in string_data) is
// read back whole, as are recorded tensors kept that way (ONNX's own tools write
// raw_data). Values in the typed fields (float_data, ...), external data, and
// sequences and optionals are refused with the reason: they need the library.
#include <fmt/format.h>

#include <cstring>

#include "core/onnx_types.h"
#include "graph/protobuf_wire.h"
#include "os/atomic_file.h"
#include "os/read_file.h"
#include "session/tensor_file.h"

namespace rung {

namespace {
Status write_in(WriteMode mode, const std::filesystem::path& path, std::string_view bytes) {
  return mode == WriteMode::kScratch ? write_scratch_file(path, bytes) : write_file_atomically(path, bytes);
}
}  // namespace

namespace {

// TensorProto's fields.
enum : std::uint32_t { kDims = 1, kDataType = 2, kStringData = 6, kName = 8, kRawData = 9, kExternalData = 13, kDataLocation = 14 };

Error needs_the_library(const std::string& where, const std::string& what) {
  return Error{ErrorCode::kUnsupported, fmt::format("{}: {}, which this build of rung reads only with the ONNX protobuf library (not built for Windows)", where, what)};
}

}  // namespace

Result<Tensor> parse_tensor_proto(std::string_view bytes, const std::string& where, const std::string& fallback_name, std::uint64_t max_bytes) {
  Tensor t;
  int data_type = 0;
  bool has_raw = false, external = false;
  std::uint32_t typed_field = 0;  // the first field holding values the library reads; said once the name is known
  wire::Reader r(bytes);
  while (auto f = r.next()) {
    switch (f->number) {
      case kDims:
        if (f->type == wire::kVarint) {
          t.shape.push_back(static_cast<std::int64_t>(f->value));
        } else if (f->type == wire::kBytes) {  // packed
          wire::Reader packed(f->bytes);
          while (!packed.empty()) {
            auto v = packed.varint();
            if (!v) return Error{ErrorCode::kInvalidArgument, fmt::format("{}: not an ONNX TensorProto", where)};
            t.shape.push_back(static_cast<std::int64_t>(*v));
          }
        }
        break;
      case kDataType: data_type = static_cast<int>(f->value); break;
      case kName: t.name.assign(f->bytes); break;
      case kStringData: t.strings.emplace_back(f->bytes); break;
      case kRawData: {
        has_raw = true;
        const auto* first = reinterpret_cast<const std::byte*>(f->bytes.data());
        t.bytes.assign(first, first + f->bytes.size());
        break;
      }
      case kExternalData: case kDataLocation:
        external = external || f->type == wire::kBytes || f->value != 0;
        break;
      case 3: case 12: break;  // segment, doc_string: nothing to take
      default:
        if (typed_field == 0) typed_field = f->number;
    }
  }
  if (r.broken()) return Error{ErrorCode::kInvalidArgument, fmt::format("{}: not an ONNX TensorProto", where)};
  if (t.name.empty()) t.name = fallback_name;
  if (external) return needs_the_library(where, fmt::format("tensor '{}' keeps its data in an external file", t.name));
  if (typed_field != 0) return needs_the_library(where, fmt::format("tensor '{}' holds its values in a typed field (field {})", t.name, typed_field));
  t.type = element_type_from_onnx(data_type);
  if (t.type == ElementType::kUnsupported) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("{}: tensor '{}' holds {}, which rung does not read", where, t.name, onnx_data_type_name(data_type))};
  }
  auto need = tensor_bytes(fmt::format("{}: tensor '{}'", where, t.name), t.type, t.shape, max_bytes);
  if (!need) return need.error();
  if (t.type != ElementType::kString && !has_raw && *need > 0) return needs_the_library(where, fmt::format("tensor '{}' has no raw_data", t.name));
  if (!t.consistent()) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("{}: tensor '{}' ({} {}) does not hold as many elements as its shape says", where, t.name,
                                                          element_type_name(t.type), shape_string(t.shape))};
  }
  return t;
}

Result<Tensor> read_tensor_file(const std::filesystem::path& path, std::uint64_t max_bytes) {
  auto bytes = read_input_file(path, FileKind::kTensor, tensor_file_limit(max_bytes));
  if (!bytes) return bytes.error();
  return parse_tensor_proto(*bytes, path.string(), path.stem().string(), max_bytes);
}

Status write_tensor_file(const Tensor& tensor, const std::filesystem::path& path, WriteMode mode) {
  if (tensor.type == ElementType::kUnsupported) {
    return Error{ErrorCode::kUnsupported, fmt::format("{}: tensor '{}' has an element type rung cannot write", path.string(), tensor.name)};
  }
  if (!tensor.consistent()) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("{}: tensor '{}' ({} {}) does not hold as many elements as its shape says", path.string(),
                                                          tensor.name, element_type_name(tensor.type), shape_string(tensor.shape))};
  }
  std::string out;
  for (auto d : tensor.shape) {
    wire::put_tag(out, kDims, wire::kVarint);
    wire::put_varint(out, static_cast<std::uint64_t>(d));
  }
  wire::put_tag(out, kDataType, wire::kVarint);
  wire::put_varint(out, static_cast<std::uint64_t>(onnx_data_type(tensor.type)));
  if (tensor.type == ElementType::kString) {
    for (const auto& s : tensor.strings) wire::put_bytes(out, kStringData, s);
  }
  wire::put_bytes(out, kName, tensor.name);
  if (tensor.type != ElementType::kString) {
    wire::put_bytes(out, kRawData, std::string_view(reinterpret_cast<const char*>(tensor.bytes.data()), tensor.bytes.size()));
  }
  return write_in(mode, path, out);
}

Result<Value> read_value_file(const std::filesystem::path& path, Value::Kind kind, std::uint64_t max_bytes) {
  if (kind != Value::Kind::kTensor) return needs_the_library(path.string(), "a sequence or an optional value");
  auto t = read_tensor_file(path, max_bytes);
  if (!t) return t.error();
  return Value::of(std::move(*t));
}

Status write_value_file(const Value& value, const std::filesystem::path& path, WriteMode mode) {
  if (value.kind != Value::Kind::kTensor) return needs_the_library(path.string(), "a sequence or an optional value");
  Tensor t = value.tensor;
  if (t.name.empty()) t.name = value.name;
  return write_tensor_file(t, path, mode);
}

}  // namespace rung
