#include "rung/output_paths.h"

#include <fmt/format.h>

#include <optional>

#include "os/atomic_file.h"
#include "os/file_identity.h"
#include "os/this_process.h"
#include "rung/directory.h"
#include "rung/input_words.h"

namespace rung {
namespace fs = std::filesystem;
namespace {

// An input directory is searched this far for a file that is the output; a
// larger tree is not an input set rung reads anyway.
constexpr std::size_t kMaxEntriesSearched = 1'000'000;

// What a path names, links followed: its type, and the file's identity (device
// and inode, or volume and file id) where there is a file. `missing` when a
// component is not there (or is a file where a directory should be).
struct Seen {
  fs::file_type type = fs::file_type::not_found;
  std::error_code error;
  FileIdentity id;
  bool there() const { return !error && type != fs::file_type::not_found; }
  bool missing() const {
    return type == fs::file_type::not_found || error == std::errc::no_such_file_or_directory || error == std::errc::not_a_directory;
  }
};

Seen seen(const fs::path& path) {
  Seen s;
  s.type = fs::status(path, s.error).type();
  if (s.there() && s.type != fs::file_type::directory && !identity_of(path, s.id)) s.id = {};
  return s;
}

bool same_id(const Seen& a, const Seen& b) {
  return a.there() && b.there() && a.type != fs::file_type::directory && b.type != fs::file_type::directory &&
         a.id.device == b.id.device && a.id.inode == b.id.inode && (a.id.device != 0 || a.id.inode != 0);
}

// The file under `dir` that is `out`, if any: a hard link has another name.
std::optional<fs::path> file_under(const fs::path& dir, const Seen& out) {
  std::optional<fs::path> found;
  (void)visit_directory(dir, {.recursive = true, .skip_unreadable = true, .max_entries = kMaxEntriesSearched}, [&](const fs::path& e) {
    if (same_id(seen(e), out)) found = e;
    return !found;
  });
  return found;
}

std::string lexically(const fs::path& p) {
  std::error_code ec;
  fs::path full = fs::weakly_canonical(fs::absolute(p, ec), ec);
  return ec ? fs::absolute(p).lexically_normal().string() : full.string();
}

Error refused(const std::string& message) { return Error{ErrorCode::kInvalidArgument, message}; }

bool same_directory(const fs::path& a, const fs::path& b) {
  FileIdentity x, y;
  return identity_of(a, x) && identity_of(b, y) && x.device == y.device && x.inode == y.inode && (x.device != 0 || x.inode != 0);
}

// The input directory that `path` is in, or is, when `counting_itself`: one of
// the directories it would be written in, links and ".." followed (device and
// inode). A file written there is read by the next run that reads that
// directory (a calibration set, a suite, rung's cache), and one written into
// rung's own state corrupts it.
const NamedPath* input_directory_holding(const fs::path& path, const std::vector<NamedPath>& inputs, bool counting_itself) {
  std::vector<const NamedPath*> dirs;
  for (const auto& in : inputs) {
    if (!in.path.empty() && seen(in.path).type == fs::file_type::directory) dirs.push_back(&in);
  }
  if (dirs.empty()) return nullptr;
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::absolute(path, ec), ec);
  if (ec) p = fs::absolute(path).lexically_normal();
  if (!counting_itself) p = p.parent_path();
  for (;; p = p.parent_path()) {
    for (const NamedPath* in : dirs) {
      if (same_directory(p, in->path)) return in;
    }
    if (p == p.parent_path()) return nullptr;
  }
}

Status check_one_output(const NamedPath& out, const Seen& st) {
  const std::string name = fmt::format("{} {}", out.what, out.path.string());
  if (st.there()) {
    if (st.type == fs::file_type::directory) return refused(fmt::format("{} is a directory: name a file", name));
    if (st.type != fs::file_type::regular) return refused(fmt::format("{} is not a regular file (a device, a FIFO or a socket): name a file", name));
  } else if (!st.missing()) {
    return refused(fmt::format("{}: {}", name, st.error.message()));
  }
  fs::path dir = out.path.parent_path().empty() ? fs::path(".") : out.path.parent_path();
  Seen dir_st = seen(dir);
  // The nearest ancestor that is there: where the directories will be made, or the
  // file that stands where a directory should be (said as such, not as ENOTDIR).
  if (!dir_st.there() && (dir_st.error == std::errc::not_a_directory || (dir_st.missing() && out.parents_made))) {
    std::error_code ec;
    dir = fs::absolute(dir, ec);
    while (!dir_st.there() && dir_st.missing() && dir.has_relative_path()) {
      dir = dir.parent_path();
      dir_st = seen(dir);
    }
  }
  if (!dir_st.there()) return refused(fmt::format("{}: the directory {} does not exist", name, dir.string()));
  if (dir_st.type != fs::file_type::directory) return refused(fmt::format("{}: {} is not a directory", name, dir.string()));
  if (!may_create_files_in(dir)) return refused(fmt::format("{}: the directory {} is not writable by you", name, dir.string()));
  return {};
}

}  // namespace

bool same_file(const fs::path& a, const fs::path& b) { return same_id(seen(a), seen(b)); }

Status check_output_paths(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs) {
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const NamedPath& out = outputs[i];
    if (out.path.empty()) continue;
    const Seen st = seen(out.path);
    RUNG_RETURN_IF_ERROR(check_one_output(out, st));
    for (std::size_t k = 0; k < i; ++k) {
      const NamedPath& other = outputs[k];
      if (other.path.empty()) continue;
      if (same_id(seen(other.path), st) || lexically(other.path) == lexically(out.path)) {
        return refused(fmt::format("{} {} and {} {} name the same file", other.what, other.path.string(), out.what, out.path.string()));
      }
    }
    for (const auto& in : inputs) {
      if (!st.there()) break;  // a file that is not there yet is no input; it may still land in an input's directory (below)
      if (in.path.empty()) continue;
      const Seen in_st = seen(in.path);
      if (!in_st.there()) continue;
      if (in_st.type == fs::file_type::directory) {
        if (auto file = file_under(in.path, st)) {
          return refused(fmt::format("{} {} is {} in {} {} (the same file): it would be replaced", out.what, out.path.string(), file->string(),
                                     in.what, in.path.string()));
        }
      } else if (same_id(in_st, st)) {
        return refused(fmt::format("{} {} is {} {} (the same file): it would be replaced", out.what, out.path.string(), in.what, in.path.string()));
      }
    }
    if (const NamedPath* in = input_directory_holding(out.path, inputs, /*counting_itself=*/false)) {
      return refused(fmt::format("{} {} is inside {} {}: the file would be read as one of its own (write it elsewhere)", out.what, out.path.string(),
                                 in->what, in->path.string()));
    }
  }
  return {};
}

Status check_output_directory(const NamedPath& dir, const std::vector<NamedPath>& inputs) {
  if (dir.path.empty()) return {};
  const Seen st = seen(dir.path);
  if (st.there() && st.type != fs::file_type::directory) return wrong_kind(dir.path, st.type, WantedKind::kDirectory, dir.what + " " + dir.path.string());
  if (const NamedPath* in = input_directory_holding(dir.path, inputs, /*counting_itself=*/true)) {
    return refused(fmt::format("{} {} is inside {} {}: what rung writes there would be read as one of its own (name another directory)", dir.what,
                               dir.path.string(), in->what, in->path.string()));
  }
  return {};
}

Status write_output_file(const fs::path& path, std::string_view contents) { return write_file_atomically(path, contents); }

}  // namespace rung
