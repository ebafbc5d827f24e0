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

namespace {

std::string shown_or(const std::filesystem::path& path, std::string_view shown) { return shown.empty() ? path.string() : std::string(shown); }

}  // namespace

Error missing_path(const std::filesystem::path& path, std::string_view shown) {
  return Error{ErrorCode::kNotFound, fmt::format("{}: does not exist", shown_or(path, shown))};
}

Error wrong_kind(std::string_view shown, std::string_view kind, WantedKind wanted) {
  return Error{ErrorCode::kInvalidArgument, fmt::format("{}: is {}, not a {}", shown, kind, wanted == WantedKind::kFile ? "file" : "directory")};
}

Error wrong_kind(const std::filesystem::path& path, std::filesystem::file_type type, WantedKind wanted, std::string_view shown) {
  return wrong_kind(shown_or(path, shown), file_kind(type), wanted);
}

Error malformed_input(std::string_view shown, std::string_view what, std::string_view why) {
  return Error{ErrorCode::kInvalidArgument, fmt::format("{}: not {}{}{}", shown, what, why.empty() ? "" : ": ", why)};
}

namespace {

// The standard library's stat: it follows links and never opens the file, so nothing blocks.
Status check_kind(const std::filesystem::path& path, std::string_view shown, WantedKind wanted) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (status.type() == std::filesystem::file_type::not_found) return missing_path(path, shown);
  if (ec) return Error{ErrorCode::kIo, fmt::format("{}: cannot be read: {}", shown_or(path, shown), ec.message())};
  const auto want = wanted == WantedKind::kFile ? std::filesystem::file_type::regular : std::filesystem::file_type::directory;
  if (status.type() != want) return wrong_kind(path, status.type(), wanted, shown);
  return {};
}

}  // namespace

Status check_input_directory(const std::filesystem::path& dir, std::string_view shown) { return check_kind(dir, shown, WantedKind::kDirectory); }

Status check_regular_file(const std::filesystem::path& path, std::string_view shown) { return check_kind(path, shown, WantedKind::kFile); }

Status check_model_file_kind(const std::string& name, const std::filesystem::path& path) {
  auto st = check_regular_file(path);
  if (st || st.error().code == ErrorCode::kNotFound) return {};
  return Error{st.error().code, fmt::format("model {}: {}", name, st.error().message)};
}

}  // namespace rung
