#include "os/regular_file.h"

#include <fmt/format.h>

#include <system_error>

namespace rung {

std::string file_kind(std::filesystem::file_type type) {
  using T = std::filesystem::file_type;
  switch (type) {
    case T::regular: return "a regular file";
    case T::directory: return "a directory";
    case T::fifo: return "a FIFO";
    case T::character: return "a character device";
    case T::block: return "a block device";
    case T::socket: return "a socket";
    case T::symlink: return "a symbolic link";
    default: break;
  }
  return "not a file";
}

Error missing_path(const std::filesystem::path& path) {
  return Error{ErrorCode::kNotFound, fmt::format("{}: does not exist", path.string())};
}

Status check_input_directory(const std::filesystem::path& dir) {
  std::error_code ec;
  const auto status = std::filesystem::status(dir, ec);
  if (status.type() == std::filesystem::file_type::not_found) return missing_path(dir);
  if (ec) return Error{ErrorCode::kIo, fmt::format("{}: {}", dir.string(), ec.message())};
  if (status.type() != std::filesystem::file_type::directory) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("{}: is {}, not a directory", dir.string(), file_kind(status.type()))};
  }
  return {};
}

Status check_regular_file(const std::filesystem::path& path) {
  // The standard library's stat: it follows links and never opens the file, so nothing blocks.
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (status.type() == std::filesystem::file_type::not_found) return missing_path(path);
  if (ec) return Error{ErrorCode::kIo, fmt::format("{}: {}", path.string(), ec.message())};
  if (status.type() != std::filesystem::file_type::regular) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("{} is {}, not a regular file", path.string(), file_kind(status.type()))};
  }
  return {};
}

Status check_model_file_kind(const std::string& name, const std::filesystem::path& path) {
  auto st = check_regular_file(path);
  if (st || st.error().code == ErrorCode::kNotFound) return {};
  return Error{st.error().code, fmt::format("model {}: {}", name, st.error().message)};
}

}  // namespace rung
