#include "session/tensor_file.h"

#include <fmt/format.h>
#include <onnx/onnx-data_pb.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <climits>
#include <cstring>

#include "core/onnx_types.h"
#include "os/atomic_file.h"
#include "os/read_file.h"

namespace rung {

namespace {
Status write_in(WriteMode mode, const std::filesystem::path& path, std::string_view bytes) {
  return mode == WriteMode::kScratch ? write_scratch_file(path, bytes) : write_file_atomically(path, bytes);
}
}  // namespace

namespace {

template <class T, class Field>
void copy_field(const Field& field, Tensor& t) {
  t.bytes.resize(static_cast<std::size_t>(field.size()) * sizeof(T));
  auto* out = reinterpret_cast<T*>(t.bytes.data());
  for (int i = 0; i < field.size(); ++i) out[i] = static_cast<T>(field.Get(i));
}

// A TensorProto's values: raw_data when it has them, else the typed field ONNX
// stores that type in (int32_data carries every type narrower than 32 bits,
// float16 and bfloat16 as their bit patterns; uint64_data carries uint32 and uint64).
Status take_values(const onnx::TensorProto& proto, Tensor& t, const std::string& where) {
  if (proto.data_location() == onnx::TensorProto::EXTERNAL) {
    return Error{ErrorCode::kUnsupported, fmt::format("{}: tensor '{}' keeps its data in an external file, which rung does not read", where, t.name)};
  }
  if (t.type == ElementType::kString) {
    t.strings.assign(proto.string_data().begin(), proto.string_data().end());
    return {};
  }
  if (proto.has_raw_data()) {
    const auto& raw = proto.raw_data();
    // Not memcpy: for an empty raw_data the empty vector's pointer is null.
    const auto* first = reinterpret_cast<const std::byte*>(raw.data());
    t.bytes.assign(first, first + raw.size());
    return {};
  }
  switch (t.type) {
    case ElementType::kFloat: copy_field<float>(proto.float_data(), t); break;
    case ElementType::kDouble: copy_field<double>(proto.double_data(), t); break;
    case ElementType::kInt64: copy_field<std::int64_t>(proto.int64_data(), t); break;
    case ElementType::kUint64: copy_field<std::uint64_t>(proto.uint64_data(), t); break;
    case ElementType::kUint32: copy_field<std::uint32_t>(proto.uint64_data(), t); break;
    case ElementType::kInt32: copy_field<std::int32_t>(proto.int32_data(), t); break;
    case ElementType::kInt16: copy_field<std::int16_t>(proto.int32_data(), t); break;
    case ElementType::kUint16: case ElementType::kFloat16: case ElementType::kBFloat16:
      copy_field<std::uint16_t>(proto.int32_data(), t);
      break;
    case ElementType::kInt8: copy_field<std::int8_t>(proto.int32_data(), t); break;
    default: copy_field<std::uint8_t>(proto.int32_data(), t); break;  // uint8, bool, the float8 formats
  }
  return {};
}

Result<Tensor> tensor_from_proto(const onnx::TensorProto& proto, const std::string& where, const std::string& fallback_name,
                                 std::uint64_t max_bytes) {
  Tensor t;
  t.name = proto.name().empty() ? fallback_name : proto.name();
  t.type = element_type_from_onnx(proto.data_type());
  if (t.type == ElementType::kUnsupported) {
    // A file the user gave: an input error (exit 2), whatever the type.
    return Error{ErrorCode::kInvalidArgument, fmt::format("{}: tensor '{}' holds {}, which rung does not read", where, t.name,
                                                      onnx_data_type_name(proto.data_type()))};
  }
  t.shape.assign(proto.dims().begin(), proto.dims().end());
  // Strings take no fixed room: the file's own size bounds them.
  auto need = tensor_bytes(where, t.type, t.shape, max_bytes);
  if (!need) return need.error();
  RUNG_RETURN_IF_ERROR(take_values(proto, t, where));
  if (!t.consistent()) {
    const std::size_t held = t.type == ElementType::kString ? t.strings.size() : t.bytes.size();
    return Error{ErrorCode::kInvalidArgument,
                 fmt::format("{}: tensor '{}' holds {} {}, shape {} of {} needs {}", where, t.name, held,
                             t.type == ElementType::kString ? "strings" : "bytes", shape_string(t.shape), element_type_name(t.type),
                             t.type == ElementType::kString ? *element_count(t.shape) : *need)};
  }
  return t;
}

onnx::TensorProto tensor_to_proto(const Tensor& tensor) {
  onnx::TensorProto proto;
  proto.set_name(tensor.name);
  proto.set_data_type(onnx_data_type(tensor.type));
  for (auto d : tensor.shape) proto.add_dims(d);
  if (tensor.type == ElementType::kString) {
    for (const auto& s : tensor.strings) proto.add_string_data(s);
  } else {
    proto.set_raw_data(std::string(reinterpret_cast<const char*>(tensor.bytes.data()), tensor.bytes.size()));
  }
  return proto;
}

Status check_writable(const Tensor& tensor, const std::string& where) {
  if (tensor.type == ElementType::kUnsupported) {
    return Error{ErrorCode::kUnsupported, fmt::format("{}: tensor '{}' has an element type rung cannot write", where, tensor.name)};
  }
  if (!tensor.consistent()) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("{}: tensor '{}' ({} {}) does not hold as many elements as its shape says",
                                                          where, tensor.name, element_type_name(tensor.type), shape_string(tensor.shape))};
  }
  return {};
}

Result<Value> value_from_sequence(const onnx::SequenceProto& proto, const std::string& where, std::uint64_t max_bytes);
Result<Value> value_from_optional(const onnx::OptionalProto& proto, const std::string& where, std::uint64_t max_bytes);

Result<Value> value_from_sequence(const onnx::SequenceProto& proto, const std::string& where, std::uint64_t max_bytes) {
  std::vector<Value> items;
  switch (proto.elem_type()) {
    case onnx::SequenceProto::UNDEFINED:
    case onnx::SequenceProto::TENSOR:
      for (const auto& t : proto.tensor_values()) {
        auto tensor = tensor_from_proto(t, where, fmt::format("{}[{}]", proto.name(), items.size()), max_bytes);
        if (!tensor) return tensor.error();
        items.push_back(Value::of(std::move(*tensor)));
      }
      break;
    case onnx::SequenceProto::SEQUENCE:
      for (const auto& s : proto.sequence_values()) {
        auto inner = value_from_sequence(s, where, max_bytes);
        if (!inner) return inner.error();
        items.push_back(std::move(*inner));
      }
      break;
    case onnx::SequenceProto::OPTIONAL:
      for (const auto& o : proto.optional_values()) {
        auto inner = value_from_optional(o, where, max_bytes);
        if (!inner) return inner.error();
        items.push_back(std::move(*inner));
      }
      break;
    default:
      return Error{ErrorCode::kUnsupported, fmt::format("{}: sequence '{}' holds sparse tensors or maps, which rung does not read", where, proto.name())};
  }
  return Value::sequence(proto.name(), std::move(items));
}

Result<Value> value_from_optional(const onnx::OptionalProto& proto, const std::string& where, std::uint64_t max_bytes) {
  switch (proto.elem_type()) {
    case onnx::OptionalProto::UNDEFINED:
      return Value::optional(proto.name(), std::nullopt);  // None
    case onnx::OptionalProto::TENSOR: {
      auto tensor = tensor_from_proto(proto.tensor_value(), where, proto.name(), max_bytes);
      if (!tensor) return tensor.error();
      return Value::optional(proto.name(), Value::of(std::move(*tensor)));
    }
    case onnx::OptionalProto::SEQUENCE: {
      auto inner = value_from_sequence(proto.sequence_value(), where, max_bytes);
      if (!inner) return inner.error();
      return Value::optional(proto.name(), std::move(*inner));
    }
    case onnx::OptionalProto::OPTIONAL: {
      auto inner = value_from_optional(proto.optional_value(), where, max_bytes);
      if (!inner) return inner.error();
      return Value::optional(proto.name(), std::move(*inner));
    }
    default:
      return Error{ErrorCode::kUnsupported, fmt::format("{}: optional '{}' holds a sparse tensor or a map, which rung does not read", where, proto.name())};
  }
}

Status fill_sequence(const Value& v, onnx::SequenceProto& proto, const std::string& where);
Status fill_optional(const Value& v, onnx::OptionalProto& proto, const std::string& where);

Status fill_sequence(const Value& v, onnx::SequenceProto& proto, const std::string& where) {
  proto.set_name(v.name);
  const Value::Kind kind = v.items.empty() ? Value::Kind::kTensor : v.items.front().kind;
  proto.set_elem_type(kind == Value::Kind::kTensor     ? onnx::SequenceProto::TENSOR
                      : kind == Value::Kind::kSequence ? onnx::SequenceProto::SEQUENCE
                                                       : onnx::SequenceProto::OPTIONAL);
  for (const auto& item : v.items) {
    if (item.kind != kind) return Error{ErrorCode::kInvalidArgument, fmt::format("{}: sequence '{}' mixes kinds of value", where, v.name)};
    if (kind == Value::Kind::kTensor) {
      RUNG_RETURN_IF_ERROR(check_writable(item.tensor, where));
      *proto.add_tensor_values() = tensor_to_proto(item.tensor);
    } else if (kind == Value::Kind::kSequence) {
      RUNG_RETURN_IF_ERROR(fill_sequence(item, *proto.add_sequence_values(), where));
    } else if (auto s = fill_optional(item, *proto.add_optional_values(), where); !s) {
      return s;
    }
  }
  return {};
}

Status fill_optional(const Value& v, onnx::OptionalProto& proto, const std::string& where) {
  proto.set_name(v.name);
  if (v.items.empty()) return {};  // None: no element type
  const Value& held = v.items.front();
  switch (held.kind) {
    case Value::Kind::kTensor:
      RUNG_RETURN_IF_ERROR(check_writable(held.tensor, where));
      proto.set_elem_type(onnx::OptionalProto::TENSOR);
      *proto.mutable_tensor_value() = tensor_to_proto(held.tensor);
      return {};
    case Value::Kind::kSequence:
      proto.set_elem_type(onnx::OptionalProto::SEQUENCE);
      return fill_sequence(held, *proto.mutable_sequence_value(), where);
    case Value::Kind::kOptional:
      proto.set_elem_type(onnx::OptionalProto::OPTIONAL);
      return fill_optional(held, *proto.mutable_optional_value(), where);
  }
  return {};
}

template <class Proto>
Status parse_bytes(std::string_view bytes, const std::string& where, Proto& proto, const char* what) {
  if (bytes.size() > static_cast<std::size_t>(INT_MAX) || !proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("{}: not an ONNX {}", where, what)};
  }
  return {};
}

// A file larger than the tensor limit (plus a little for names and dimensions)
// is refused before it is read.
template <class Proto>
Status parse_file(const std::filesystem::path& path, Proto& proto, const char* what, std::uint64_t max_bytes) {
  auto bytes = read_input_file(path, FileKind::kTensor, tensor_file_limit(max_bytes));
  if (!bytes) return bytes.error();
  return parse_bytes(*bytes, path.string(), proto, what);
}

}  // namespace

Result<Tensor> parse_tensor_proto(std::string_view bytes, const std::string& where, const std::string& fallback_name,
                                  std::uint64_t max_bytes) {
  onnx::TensorProto proto;
  RUNG_RETURN_IF_ERROR(parse_bytes(bytes, where, proto, "TensorProto"));
  return tensor_from_proto(proto, where, fallback_name, max_bytes);
}

Result<Tensor> read_tensor_file(const std::filesystem::path& path, std::uint64_t max_bytes) {
  onnx::TensorProto proto;
  RUNG_RETURN_IF_ERROR(parse_file(path, proto, "TensorProto", max_bytes));
  return tensor_from_proto(proto, path.string(), path.stem().string(), max_bytes);
}

Status write_tensor_file(const Tensor& tensor, const std::filesystem::path& path, WriteMode mode) {
  RUNG_RETURN_IF_ERROR(check_writable(tensor, path.string()));
  return write_in(mode, path, tensor_to_proto(tensor).SerializeAsString());
}

Result<Value> read_value_file(const std::filesystem::path& path, Value::Kind kind, std::uint64_t max_bytes) {
  const std::string where = path.string();
  switch (kind) {
    case Value::Kind::kTensor: {
      auto t = read_tensor_file(path, max_bytes);
      if (!t) return t.error();
      return Value::of(std::move(*t));
    }
    case Value::Kind::kSequence: {
      onnx::SequenceProto proto;
      RUNG_RETURN_IF_ERROR(parse_file(path, proto, "SequenceProto", max_bytes));
      return value_from_sequence(proto, where, max_bytes);
    }
    case Value::Kind::kOptional: {
      onnx::OptionalProto proto;
      RUNG_RETURN_IF_ERROR(parse_file(path, proto, "OptionalProto", max_bytes));
      return value_from_optional(proto, where, max_bytes);
    }
  }
  return Error{ErrorCode::kInvalidArgument, fmt::format("{}: unknown kind of value", where)};
}

Status write_value_file(const Value& value, const std::filesystem::path& path, WriteMode mode) {
  const std::string where = path.string();
  switch (value.kind) {
    case Value::Kind::kTensor: {
      Tensor t = value.tensor;
      if (t.name.empty()) t.name = value.name;
      return write_tensor_file(t, path, mode);
    }
    case Value::Kind::kSequence: {
      onnx::SequenceProto proto;
      RUNG_RETURN_IF_ERROR(fill_sequence(value, proto, where));
      return write_in(mode, path, proto.SerializeAsString());
    }
    case Value::Kind::kOptional: {
      onnx::OptionalProto proto;
      RUNG_RETURN_IF_ERROR(fill_optional(value, proto, where));
      return write_in(mode, path, proto.SerializeAsString());
    }
  }
  return Error{ErrorCode::kInvalidArgument, fmt::format("{}: unknown kind of value", where)};
}

}  // namespace rung
