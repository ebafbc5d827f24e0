#include "os/read_file.h"

#include <fmt/format.h>

#include <algorithm>
#include <system_error>

#include "os/regular_file.h"
#include "rung/setting_names.h"

namespace rung {

std::string byte_size_text(std::uint64_t bytes) {
  static const char* const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return fmt::format("{} bytes", bytes);
  double v = static_cast<double>(bytes);
  std::size_t u = 0;
  while (v >= 1024 && u + 1 < std::size(units)) {
    v /= 1024;
    ++u;
  }
  return fmt::format("{:.1f} {}", v, units[u]);
}

std::string non_regular_kind(const std::filesystem::path& path) {
  std::error_code ec;
  const auto type = std::filesystem::status(path, ec).type();
  if (ec || type == std::filesystem::file_type::regular || type == std::filesystem::file_type::not_found) return "";
  return fmt::format("is {}", file_kind(type));
}

namespace {

// "for a document", "for a tensor file (raise it with --max-tensor-mb)", or "here".
Error too_big(const std::string& where, std::uint64_t size, std::uint64_t max_bytes, const std::string& limit_words) {
  return Error{ErrorCode::kInvalidArgument,
               fmt::format("{}: is {}; rung reads at most {} {}", where, byte_size_text(size), byte_size_text(max_bytes), limit_words)};
}

// Reads up to `size` bytes from `from`; a file that shrank while read gives what is there.
Result<std::string> read_bytes(const OpenedFile& file, std::uint64_t size, std::uint64_t from = 0) {
  std::string out(size, '\0');
  std::size_t done = 0;
  while (done < out.size()) {
    auto n = file.read_at(out.data() + done, out.size() - done, from + done);
    if (!n) return n.error();
    if (*n == 0) break;
    done += *n;
  }
  out.resize(done);
  return out;
}

Result<std::string> read_limited(const std::filesystem::path& path, std::uint64_t max_bytes, const std::string& limit_words) {
  auto file = OpenedFile::open(path);
  if (!file) return file.error();
  if (file->size() > max_bytes) return too_big(file->where(), file->size(), max_bytes, limit_words);
  return read_bytes(*file, file->size());
}

std::string kind_words(const FileKindLimit& k) {
  const std::string raise = k.raised_by_tensor_limit ? setting_name(Setting::kMaxTensorMb) : std::string();
  return raise.empty() ? fmt::format("for {}", k.name) : fmt::format("for {} (raise it with {})", k.name, raise);
}

}  // namespace

Result<std::string> read_regular_file(const std::filesystem::path& path, std::uint64_t max_bytes, std::string_view limit_option) {
  return read_limited(path, max_bytes, limit_option.empty() ? "here" : fmt::format("here (raise it with {})", limit_option));
}

const FileKindLimit& file_kind_limit(FileKind kind) {
  for (const auto& k : kFileKinds) {
    if (k.kind == kind) return k;
  }
  return kFileKinds[0];  // unreachable: every kind has its row
}

Result<std::string> read_input_file(const std::filesystem::path& path, FileKind kind) {
  return read_input_file(path, kind, file_kind_limit(kind).max_bytes);
}

Result<std::string> read_input_file(const std::filesystem::path& path, FileKind kind, std::uint64_t max_bytes) {
  return read_limited(path, max_bytes, kind_words(file_kind_limit(kind)));
}

std::optional<std::string> read_input_file_if_usable(const std::filesystem::path& path, FileKind kind) {
  auto text = read_input_file(path, kind);
  if (!text) return std::nullopt;
  return std::move(*text);
}

std::string read_file_tail(const std::filesystem::path& path, std::uint64_t max_bytes) {
  auto file = OpenedFile::open(path);
  if (!file) return {};
  const std::uint64_t from = file->size() > max_bytes ? file->size() - max_bytes : 0;
  auto text = read_bytes(*file, file->size() - from, from);
  return text ? std::move(*text) : std::string();
}

Result<std::string> InputFile::read(std::uint64_t offset, std::uint64_t length) const {
  if (offset >= size()) return std::string();
  return read_bytes(file_, std::min(length, size() - offset), offset);
}

Result<InputFile> open_input_file(const std::filesystem::path& path, FileKind kind) {
  return open_input_file(path, kind, file_kind_limit(kind).max_bytes);
}

Result<InputFile> open_input_file(const std::filesystem::path& path, FileKind kind, std::uint64_t max_bytes) {
  auto file = OpenedFile::open(path);
  if (!file) return file.error();
  if (file->size() > max_bytes) return too_big(file->where(), file->size(), max_bytes, kind_words(file_kind_limit(kind)));
  return InputFile(std::move(*file));
}

std::optional<std::string> read_system_file(const std::filesystem::path& path, std::uint64_t max_bytes) {
  auto file = OpenedFile::open(path);
  if (!file) return std::nullopt;
  // Read to the end (a pseudo-file's stated size means nothing), stopping at the bound.
  std::string out;
  char buf[1 << 16];
  while (out.size() < max_bytes) {
    auto n = file->read_next(buf, std::min<std::uint64_t>(sizeof buf, max_bytes - out.size()));
    if (!n) return std::nullopt;
    if (*n == 0) break;
    out.append(buf, *n);
  }
  return out;
}

}  // namespace rung
