// The parts of session/tensor_file.h that hold for any reader of the messages:
// directories of numbered files, and bfloat16 told apart from uint16.
#include <fmt/format.h>

#include <algorithm>

#include "rung/directory.h"
#include "session/tensor_file.h"
#include "rung/path_text.h"
#include "os/regular_file.h"

namespace rung {

void adopt_bfloat16(Value& value, ElementType declared) {
  if (declared != ElementType::kBFloat16) return;
  if (value.kind == Value::Kind::kTensor && value.tensor.type == ElementType::kUint16) value.tensor.type = ElementType::kBFloat16;
  for (auto& item : value.items) adopt_bfloat16(item, declared);
}

Result<std::vector<Tensor>> read_tensor_directory(const std::filesystem::path& dir, std::uint64_t max_bytes) {
  RUNG_RETURN_IF_ERROR(check_input_directory(dir));
  std::vector<std::filesystem::path> files;
  auto entries = list_directory(dir);
  if (!entries) return entries.error();
  for (const auto& e : *entries) {
    if (e.extension() == ".pb") files.push_back(e);
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

namespace {

template <class T>
Status write_numbered(const std::vector<T>& items, const std::filesystem::path& dir, Status (*write)(const T&, const std::filesystem::path&, WriteMode)) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  for (std::size_t i = 0; i < items.size(); ++i) {
    RUNG_RETURN_IF_ERROR(write(items[i], dir / path_from_utf8(fmt::format("output_{}.pb", i)), WriteMode::kScratch));
  }
  return {};
}

}  // namespace

Status write_output_directory(const std::vector<Tensor>& tensors, const std::filesystem::path& dir) {
  return write_numbered(tensors, dir, write_tensor_file);
}

Status write_output_directory(const std::vector<Value>& values, const std::filesystem::path& dir) {
  return write_numbered(values, dir, write_value_file);
}

}  // namespace rung
