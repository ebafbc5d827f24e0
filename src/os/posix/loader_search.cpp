#include "os/loader_search.h"

#include <fmt/format.h>
#include <link.h>
#include <sys/utsname.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <set>
#include <sstream>

#include "os/elf_dynamic.h"
#include "os/environment.h"
#include "os/read_file.h"
#include "rung/directory.h"

namespace rung {
namespace fs = std::filesystem;
namespace {

#if defined(__x86_64__)
constexpr const char* kMultiarch = "x86_64-linux-gnu";
#elif defined(__aarch64__)
constexpr const char* kMultiarch = "aarch64-linux-gnu";
#else
constexpr const char* kMultiarch = "";
#endif

std::vector<fs::path> split_dirs(const char* list) {
  std::vector<fs::path> out;
  if (list == nullptr) return out;
  std::stringstream in(list);
  for (std::string dir; std::getline(in, dir, ':');) {
    if (!dir.empty()) out.emplace_back(dir);
  }
  return out;
}

std::string replace_all(std::string s, std::string_view from, std::string_view to) {
  for (auto at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
  return s;
}

// $ORIGIN, $LIB and $PLATFORM in a DT_RUNPATH or DT_RPATH entry, as the loader expands them.
fs::path expand_tokens(const std::string& entry, const fs::path& origin) {
  static const std::string platform = [] {
    struct utsname u {};
    return ::uname(&u) == 0 ? std::string(u.machine) : std::string();
  }();
  const std::string lib = *kMultiarch ? fmt::format("lib/{}", kMultiarch) : "lib";
  std::string s = entry;
  for (const auto& [token, value] : {std::pair<std::string, std::string>{"ORIGIN", origin.string()}, {"LIB", lib}, {"PLATFORM", platform}}) {
    s = replace_all(replace_all(s, "${" + token + "}", value), "$" + token, value);
  }
  return s;
}

// "libcudart.so." for "libcudart.so.13"; empty for a name with no version after ".so".
std::string versionless_prefix(const std::string& name) {
  auto at = name.find(".so.");
  return at == std::string::npos ? std::string() : name.substr(0, at + 4);
}

struct Object {
  fs::path path;
  ElfDynamic elf;
  int requester = -1;  // index of the object that needed it: the DT_RPATH chain
};

class Resolver {
 public:
  Resolver(const LoaderPaths& paths, const std::vector<LoadedObject>& loaded) : paths_(paths), loaded_(loaded) {}

  Result<std::vector<ResolvedLibrary>> run(const fs::path& library) {
    auto root = read_elf_dynamic(library);
    if (!root) return root.error();
    class_ = root->elf_class;
    machine_ = root->machine;
    objects_.push_back({library, std::move(*root), -1});
    claim(library.filename().string(), objects_[0].elf.soname);
    std::vector<ResolvedLibrary> out;
    for (std::size_t i = 0; i < objects_.size(); ++i) {
      const std::vector<std::string> needed = objects_[i].elf.needed;  // objects_ grows below
      for (const auto& name : needed) resolve_one(static_cast<int>(i), name, out);
    }
    return out;
  }

 private:
  enum class Candidate { kUsable, kAbsent, kOtherArchitecture, kUnusable };

  void claim(const std::string& name, const std::string& soname) {
    seen_.insert(name);
    if (!soname.empty()) seen_.insert(soname);
  }

  void resolve_one(int requester, const std::string& name, std::vector<ResolvedLibrary>& out) {
    const Object& from = objects_[static_cast<std::size_t>(requester)];
    ResolvedLibrary r;
    r.name = name;
    r.needed_by = from.path.filename().string();
    if (seen_.count(name) != 0) {
      // Already resolved for an earlier requester; its symbol versions are still this requester's to check.
      auto it = std::find_if(objects_.begin(), objects_.end(), [&](const Object& o) {
        return o.path.filename() == name || o.elf.soname == name;
      });
      if (it == objects_.end()) return;
      r.path = it->path;
      r.missing_versions = missing_versions(from, name, it->elf);
      if (!r.missing_versions.empty()) out.push_back(std::move(r));
      return;
    }
    seen_.insert(name);
    for (const auto& l : loaded_) {
      if (l.name == name) {
        r.path = l.path;
        r.already_loaded = true;
        out.push_back(std::move(r));
        return;
      }
    }
    ElfDynamic found;
    for (const auto& file : candidates(requester, name)) {
      switch (check(file, found, r.unusable)) {
        case Candidate::kUsable: r.path = file; break;
        case Candidate::kOtherArchitecture: r.other_architecture.push_back(file); continue;
        case Candidate::kUnusable: r.path = file; break;  // the loader stops at it with an error
        case Candidate::kAbsent: continue;
      }
      break;
    }
    if (!r.found()) {
      r.other_versions = other_versions(requester, name);
    } else if (r.unusable.empty()) {
      r.missing_versions = missing_versions(from, name, found);
      claim(name, found.soname);
      objects_.push_back({r.path, std::move(found), requester});
    }
    out.push_back(std::move(r));
  }

  // The directories searched before ld.so.cache, in the loader's order.
  std::vector<fs::path> directories(int requester) const {
    std::vector<fs::path> dirs;
    const Object& from = objects_[static_cast<std::size_t>(requester)];
    if (from.elf.runpath.empty()) {
      for (int i = requester; i >= 0; i = objects_[static_cast<std::size_t>(i)].requester) {
        const Object& o = objects_[static_cast<std::size_t>(i)];
        for (const auto& e : o.elf.rpath) dirs.push_back(expand_tokens(e, o.path.parent_path()));
      }
    }
    dirs.insert(dirs.end(), paths_.library_path.begin(), paths_.library_path.end());
    for (const auto& e : from.elf.runpath) dirs.push_back(expand_tokens(e, from.path.parent_path()));
    return dirs;
  }

  std::vector<fs::path> candidates(int requester, const std::string& name) const {
    if (name.find('/') != std::string::npos) return {fs::path(name)};
    std::vector<fs::path> out;
    for (const auto& d : directories(requester)) out.push_back(d / name);
    if (objects_[static_cast<std::size_t>(requester)].elf.nodeflib) return out;
    for (const auto& [key, file] : paths_.cache) {
      if (key == name) out.push_back(file);
    }
    for (const auto& d : paths_.system_dirs) out.push_back(d / name);
    return out;
  }

  Candidate check(const fs::path& file, ElfDynamic& elf, std::string& unusable) const {
    std::error_code ec;
    if (!fs::is_regular_file(file, ec)) return Candidate::kAbsent;
    auto read = read_elf_dynamic(file);
    if (!read) {
      unusable = read.error().message.substr(read.error().message.find(": ") + 2);
      return Candidate::kUnusable;
    }
    if (read->elf_class != class_ || read->machine != machine_) return Candidate::kOtherArchitecture;
    elf = std::move(*read);
    return Candidate::kUsable;
  }

  // Versions of `name` the loader would not take: the same library with another
  // version number, on the path this requester searches.
  std::vector<std::string> other_versions(int requester, const std::string& name) const {
    std::string prefix = versionless_prefix(name);
    if (prefix.empty()) return {};
    std::set<std::string> out;
    auto consider = [&](const std::string& file) {
      if (file.rfind(prefix, 0) == 0 && file != name && file.size() > prefix.size()) out.insert(file);
    };
    std::vector<fs::path> dirs = directories(requester);
    dirs.insert(dirs.end(), paths_.system_dirs.begin(), paths_.system_dirs.end());
    for (const auto& d : dirs) {
      if (auto entries = list_directory(d)) {
        for (const auto& e : *entries) consider(e.filename().string());
      }
    }
    for (const auto& entry : paths_.cache) consider(entry.first);
    return {out.begin(), out.end()};
  }

  static std::vector<std::string> missing_versions(const Object& from, const std::string& name, const ElfDynamic& found) {
    std::vector<std::string> out;
    for (const auto& need : from.elf.version_needs) {
      if (need.file != name) continue;
      for (const auto& v : need.versions) {
        if (std::find(found.version_definitions.begin(), found.version_definitions.end(), v) == found.version_definitions.end()) {
          out.push_back(v);
        }
      }
    }
    return out;
  }

  const LoaderPaths& paths_;
  const std::vector<LoadedObject>& loaded_;
  std::vector<Object> objects_;
  std::set<std::string> seen_;
  int class_ = 0, machine_ = 0;
};

template <class T>
bool read_at(const std::string& bytes, std::size_t offset, T& out) {
  if (offset > bytes.size() || bytes.size() - offset < sizeof(T)) return false;
  std::memcpy(&out, bytes.data() + offset, sizeof(T));
  return true;
}

}  // namespace

std::vector<LoadedObject> objects_loaded_in_this_process() {
  std::vector<LoadedObject> out;
  ::dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) {
        if (info->dlpi_name != nullptr && *info->dlpi_name != '\0') {
          const fs::path path = info->dlpi_name;
          static_cast<std::vector<LoadedObject>*>(data)->push_back({path.filename().string(), path});
        }
        return 0;
      },
      &out);
  return out;
}

LoaderPaths LoaderPaths::of_this_process() {
  LoaderPaths p;
  const auto library_path = system_variable("LD_LIBRARY_PATH");
  p.library_path = split_dirs(library_path ? library_path->c_str() : nullptr);
  if (auto cache = read_ld_cache("/etc/ld.so.cache")) p.cache = std::move(*cache);
  for (const char* dir : {"/lib", "/usr/lib"}) {
    if (*kMultiarch) p.system_dirs.push_back(fs::path(dir) / kMultiarch);
  }
  p.system_dirs.emplace_back("/lib");
  p.system_dirs.emplace_back("/usr/lib");
  return p;
}

Result<std::vector<std::pair<std::string, fs::path>>> read_ld_cache(const fs::path& file) {
  constexpr std::string_view kOldMagic = "ld.so-1.7.0";
  constexpr std::string_view kNewMagic = "glibc-ld.so.cache1.1";
  constexpr std::size_t kOldHeader = 16, kOldEntry = 12, kNewHeader = 48, kNewEntry = 24;
  // Read whole and at once (a warm launch checks a build's dependencies against it: probe/launch.h).
  auto read = read_system_file(file);
  if (!read) return Error{ErrorCode::kNotFound, fmt::format("{}: cannot be read", file.string())};
  const std::string& bytes = *read;
  std::size_t base = 0;
  if (bytes.compare(0, kOldMagic.size(), kOldMagic) == 0) {
    std::uint32_t old_count = 0;
    if (!read_at(bytes, 12, old_count)) return Error{ErrorCode::kIo, fmt::format("{}: truncated", file.string())};
    base = (kOldHeader + std::size_t{old_count} * kOldEntry + 7) & ~std::size_t{7};
  }
  if (bytes.compare(base, kNewMagic.size(), kNewMagic) != 0) {
    return Error{ErrorCode::kUnsupported, fmt::format("{}: not an ld.so.cache this reader knows", file.string())};
  }
  std::uint32_t count = 0;
  if (!read_at(bytes, base + 20, count)) return Error{ErrorCode::kIo, fmt::format("{}: truncated", file.string())};
  auto string_at = [&](std::uint32_t offset) -> std::string {
    std::size_t at = base + offset;
    if (at >= bytes.size()) return {};
    return std::string(bytes.c_str() + at, strnlen(bytes.c_str() + at, bytes.size() - at));
  };
  std::vector<std::pair<std::string, fs::path>> out;
  for (std::uint32_t i = 0; i < count; ++i) {
    std::uint32_t key = 0, value = 0;
    std::size_t entry = base + kNewHeader + std::size_t{i} * kNewEntry;
    if (!read_at(bytes, entry + 4, key) || !read_at(bytes, entry + 8, value)) {
      return Error{ErrorCode::kIo, fmt::format("{}: truncated", file.string())};
    }
    out.emplace_back(string_at(key), string_at(value));
  }
  return out;
}

Result<std::vector<ResolvedLibrary>> resolve_dependencies(const fs::path& library, const LoaderPaths& paths,
                                                          const std::vector<LoadedObject>& loaded) {
  return Resolver(paths, loaded).run(library);
}

}  // namespace rung
