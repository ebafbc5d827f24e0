#include "runtime/search.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "os/environment.h"
#include "os/library_files.h"
#include "os/worker_location.h"
#include "rung/directory.h"
#include "rung/input_words.h"
#include "rung/path_text.h"

namespace rung {
namespace fs = std::filesystem;
namespace {

// "onnxruntime-1.30.0" after "onnxruntime-1.9.1": digit runs compare as numbers.
bool natural_less(const std::string& a, const std::string& b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i])) && std::isdigit(static_cast<unsigned char>(b[j]))) {
      std::size_t i2 = i, j2 = j;
      while (i2 < a.size() && std::isdigit(static_cast<unsigned char>(a[i2]))) ++i2;
      while (j2 < b.size() && std::isdigit(static_cast<unsigned char>(b[j2]))) ++j2;
      auto na = a.substr(i, i2 - i), nb = b.substr(j, j2 - j);
      na.erase(0, std::min(na.find_first_not_of('0'), na.size()));
      nb.erase(0, std::min(nb.find_first_not_of('0'), nb.size()));
      if (na.size() != nb.size()) return na.size() < nb.size();
      if (na != nb) return na < nb;
      i = i2;
      j = j2;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

bool is_library_name(const std::string& name) { return is_library_file_of(name, "onnxruntime"); }

// Subdirectories newest-named first, so that among equally fitting builds the newest wins.
std::vector<fs::path> subdirectories_newest_first(const fs::path& dir) {
  std::vector<fs::path> out;
  auto entries = list_directory(dir);
  if (!entries) return out;
  for (const auto& e : *entries) {
    std::error_code ec;
    if (fs::is_directory(e, ec)) out.push_back(e);
  }
  std::sort(out.begin(), out.end(), [](const fs::path& a, const fs::path& b) {
    return natural_less(b.filename().string(), a.filename().string());
  });
  return out;
}

// The builds in a `runtimes/` directory: one per subdirectory that holds a library, newest-named first.
std::vector<fs::path> builds_in(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& sub : subdirectories_newest_first(dir)) {
    if (auto lib = library_in(sub)) out.push_back(*lib);
  }
  return out;
}

// A directory named by the caller or the environment: the library itself, or builds in subdirectories.
std::vector<fs::path> libraries_under(const fs::path& dir) {
  if (auto lib = library_in(dir)) return {*lib};
  return builds_in(dir);
}

Status check_named_directory(const fs::path& dir, const std::string& what) {
  if (dir.empty()) return Error{ErrorCode::kInvalidArgument, fmt::format("{} is set but empty: give an absolute directory holding {}", what, library_file_name("onnxruntime"))};
  if (!dir.is_absolute()) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("{}={} is a relative path: give an absolute directory (rung never loads a runtime relative to the current directory)", what, dir.string())};
  }
  RUNG_RETURN_IF_ERROR(check_input_directory(dir, fmt::format("{}={}", what, dir.string())));
  if (libraries_under(dir).empty()) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("{}={} holds no {} (nor subdirectories that do)", what, dir.string(), library_file_name("onnxruntime"))};
  }
  return {};
}

}  // namespace

std::optional<fs::path> library_in(const fs::path& dir) {
  std::vector<fs::path> found;
  auto entries = list_directory(dir);
  if (!entries) return std::nullopt;
  for (const auto& e : *entries) {
    std::error_code ec;
    if (is_library_name(e.filename().string()) && fs::is_regular_file(e, ec)) found.push_back(e);
  }
  if (found.empty()) return std::nullopt;
  std::sort(found.begin(), found.end(), [](const fs::path& a, const fs::path& b) {
    return a.filename().string().size() < b.filename().string().size();
  });
  return found.front();
}

Result<RuntimeSearch> search_runtimes(const RuntimeSearchOptions& options) {
  RuntimeSearch search;
  auto add = [&](const fs::path& dir, SearchOrigin origin, const std::vector<fs::path>& libs) {
    std::error_code ec;
    search.searched.push_back({dir, origin, fs::is_directory(dir, ec)});
    for (const auto& lib : libs) {
      auto canonical = fs::weakly_canonical(lib, ec);
      auto dup = std::find_if(search.candidates.begin(), search.candidates.end(), [&](const RuntimeCandidate& c) {
        std::error_code e2;
        return fs::weakly_canonical(c.library, e2) == canonical;
      });
      if (dup == search.candidates.end()) {
        search.candidates.push_back({lib, origin});
      } else if (origin == SearchOrigin::kEnvironment) {
        dup->origin = origin;  // named by RUNG_ORT_DIR too: it wins outright
      }
    }
  };

  if (options.explicit_dir) {
    RUNG_RETURN_IF_ERROR(check_named_directory(*options.explicit_dir, "the runtime directory"));
    add(*options.explicit_dir, SearchOrigin::kExplicit, libraries_under(*options.explicit_dir));
  }
  if (auto env = rung_variable("RUNG_ORT_DIR", options.read_environment, /*empty_counts=*/true)) {
    // A setting that names no usable build is "no runtime" (exit 3) in every command, never another build in its place.
    const fs::path dir = path_from_utf8(*env);
    if (auto s = check_named_directory(dir, "RUNG_ORT_DIR"); !s) return Error{ErrorCode::kNoRuntime, s.error().message};
    add(dir, SearchOrigin::kEnvironment, libraries_under(dir));
  }
  if (options.include_default_locations) {
    // Found from the engine library (an embedded engine: its kit, wherever the application put it) or
    // from the running program (rung's own commands); never from an install prefix compiled in.
    const bool from_library = options.defaults_from == KitAnchor::kEngineLibrary;
    fs::path beside = options.executable_dir.value_or(from_library ? module_dir() : executable_dir());
    if (!beside.empty()) add(beside / "runtimes", from_library ? SearchOrigin::kBesideLibrary : SearchOrigin::kBesideExecutable, builds_in(beside / "runtimes"));
    fs::path share = options.share_dir ? *options.share_dir
                     : beside.empty()  ? fs::path()
                                       : (beside / (from_library ? RUNG_DATA_FROM_LIBDIR : RUNG_DATA_FROM_BINDIR) / "runtimes").lexically_normal();
    if (!share.empty()) add(share, SearchOrigin::kInstalledShare, builds_in(share));
  }
  return search;
}

}  // namespace rung
