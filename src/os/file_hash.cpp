#include "os/file_hash.h"

#include <fmt/format.h>

#include <climits>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "os/atomic_file.h"
#include "os/file_identity.h"
#include "os/file_lock.h"
#include "os/json_input.h"
#include "rung/json_text.h"
#include "os/opened_file.h"
#include "os/read_file.h"
#include "os/sha256.h"
#include "os/regular_file.h"

namespace rung {

bool stamp_of(const std::filesystem::path& file, FileStamp& s) {
  FileIdentity id;
  if (!identity_of(file, id)) return false;
  s.size = id.size;
  s.inode = id.inode;
  s.mtime_ns = id.mtime_ns;
  return true;
}

Result<std::string> sha256_of_file(const std::filesystem::path& file) {
  auto opened = OpenedFile::open(file);  // /dev/zero or a FIFO would be hashed forever
  if (!opened) return opened.error();
  std::optional<Sha256> digest;
  try {
    digest.emplace();
  } catch (const LibraryUnavailable& e) {  // a reason for this file, at a boundary that returns one
    return Error{ErrorCode::kLoadFailed, fmt::format("{}: {}", file.string(), e.what())};
  }
  std::vector<char> buf(1 << 20);
  for (;;) {
    auto n = opened->read_next(buf.data(), buf.size());
    if (!n) return n.error();
    if (*n == 0) break;
    digest->update(buf.data(), *n);
  }
  return digest->hex_digest();
}

namespace {

// The table: {absolute path: {"size", "inode", "mtime_ns", "sha256"}}.
Status check_entry(const std::string& path, const nlohmann::json& e) {
  JsonFields f(e, fmt::format("entry '{}'", path.substr(0, 200)));
  f.integer("size", 0, INT64_MAX);
  f.integer("inode", 0, INT64_MAX);
  f.integer("mtime_ns", INT64_MIN, INT64_MAX);
  const std::string sha = f.text("sha256");
  f.require(sha.size() == 64 && sha.find_first_not_of("0123456789abcdef") == std::string::npos, "'sha256' is not a SHA-256 in hex");
  return f.finish();
}

// Remembered files beyond this are not worth keeping: the table is rebuilt.
constexpr std::size_t kMaxEntries = 100'000;

Result<nlohmann::json> parse_table(const std::string& text) {
  auto j = parse_json(text);
  if (!j) return j.error();
  if (!j->is_object()) return Error{ErrorCode::kInvalidArgument, "is not a JSON object"};
  if (j->size() > kMaxEntries) return Error{ErrorCode::kInvalidArgument, fmt::format("holds {} entries, more than {}", j->size(), kMaxEntries)};
  for (auto it = j->begin(); it != j->end(); ++it) {
    RUNG_RETURN_IF_ERROR(check_entry(it.key(), *it));
  }
  return j;
}

}  // namespace

Status FileHashCache::check_table(const std::string& text) {
  auto t = parse_table(text);
  if (!t) return t.error();
  return {};
}

FileHashCache::FileHashCache(std::filesystem::path cache_dir) : file_(cache_dir / "model-hashes.json"), json_("{}") {
  if (!std::filesystem::exists(std::filesystem::symlink_status(file_))) return;
  auto text = read_regular_file(file_, kMaxJsonFileBytes);
  auto table = text ? parse_table(*text) : Result<nlohmann::json>(text.error());
  if (table) {
    json_ = json_text(*table);
    return;
  }
  const std::string& why = table.error().message;
  ignored_because_ = why.starts_with(file_.string()) ? why : fmt::format("{}: {}", file_.string(), why);
  dirty_ = true;  // rewritten on save()
}

Result<std::string> FileHashCache::hash(const std::filesystem::path& file) {
  FileStamp st;
  if (!stamp_of(file, st)) return missing_path(file);
  auto table = nlohmann::json::parse(json_);
  const std::string key = std::filesystem::absolute(file).string();
  // Every entry was checked when the table was read (check_entry).
  if (auto it = table.find(key); it != table.end()) {
    const auto& e = *it;
    if (e["size"].get<std::uint64_t>() == st.size && e["inode"].get<std::uint64_t>() == st.inode &&
        e["mtime_ns"].get<std::int64_t>() == st.mtime_ns) {
      return e["sha256"].get<std::string>();
    }
  }
  auto digest = sha256_of_file(file);
  if (!digest) return digest;
  ++hashed_;
  table[key] = {{"size", st.size}, {"inode", st.inode}, {"mtime_ns", st.mtime_ns}, {"sha256", *digest}};
  fresh_.insert(key);
  json_ = json_text(table);
  dirty_ = true;
  return digest;
}

void FileHashCache::save() {
  if (!dirty_) return;
  // Read, merge and write inside the lock: another probe may have saved since this one read.
  auto lock = CacheLock::acquire(file_.parent_path() / "model-hashes.lock", std::chrono::seconds(10));
  if (!lock) return;  // held that long by another: this cache's entries are only hashed again next time
  auto ours = nlohmann::json::parse(json_);
  nlohmann::json merged = nlohmann::json::object();
  if (auto text = read_regular_file(file_, kMaxJsonFileBytes)) {
    if (auto table = parse_table(*text)) merged = std::move(*table);
  }
  for (const auto& key : fresh_) merged[key] = ours[key];
  if (merged.size() > kMaxEntries) merged = std::move(ours);  // the table is rebuilt rather than grown past its bound
  if (write_file_atomically(file_, json_text(merged))) dirty_ = false;
}

}  // namespace rung
