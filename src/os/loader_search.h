// A shared object's dependencies resolved the way the dynamic loader would
// resolve them, without loading anything: DT_NEEDED against DT_RPATH, LD_LIBRARY_PATH,
// DT_RUNPATH (with $ORIGIN), ld.so.cache and the system directories, in that order.
// Not modelled: glibc-hwcaps subdirectories (they hold faster copies of libraries
// that are also in the directory above them) and LD_PRELOAD.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "rung/result.h"

namespace rung {

// Where the loader looks once an object's own paths are exhausted.
struct LoaderPaths {
  std::vector<std::filesystem::path> library_path;                    // LD_LIBRARY_PATH
  std::vector<std::pair<std::string, std::filesystem::path>> cache;  // ld.so.cache: name -> file, in its order
  std::vector<std::filesystem::path> system_dirs;                     // after the cache

  // This process's: LD_LIBRARY_PATH, /etc/ld.so.cache, and glibc's directories for this architecture.
  static LoaderPaths of_this_process();
};

// The entries of an ld.so.cache file (glibc's "glibc-ld.so.cache1.1" format,
// alone or after the old "ld.so-1.7.0" table).
Result<std::vector<std::pair<std::string, std::filesystem::path>>> read_ld_cache(const std::filesystem::path& file);

// An object the process already holds, which satisfies a DT_NEEDED naming it.
struct LoadedObject {
  std::string name;                // its file name or SONAME: "libonnxruntime.so.1", "libc.so.6"
  std::filesystem::path path;      // empty when only the name is known (a dependency of a loaded object)
};

// One library the loader would have to find, and what it would find.
struct ResolvedLibrary {
  std::string name;                             // as the requester's DT_NEEDED names it: "libcuda.so.1"
  std::string needed_by;                        // the requester's file name
  std::filesystem::path path;                   // where the loader finds it; empty when nowhere (or loaded, path unknown)
  bool already_loaded = false;                  // satisfied by an object the process holds
  std::string unusable;                         // a file the loader would stop at: "not an ELF file"
  std::vector<std::filesystem::path> other_architecture;  // files of that name skipped: another ELF class or machine
  std::vector<std::string> other_versions;      // when not found: the same library with another version ("libcudart.so.12")
  std::vector<std::string> missing_versions;    // symbol versions the requester needs that `path` does not define

  bool found() const { return !path.empty() || already_loaded; }
  // The loader would take it: found, a file it can map, defining every symbol version its requester needs.
  bool loads() const { return found() && unusable.empty() && missing_versions.empty(); }
};

// The objects this process holds now (the program, its libraries, those opened
// since), by their file name and path: the loader satisfies a DT_NEEDED naming one
// of them without a search.
std::vector<LoadedObject> objects_loaded_in_this_process();

// Every library `library` pulls in, breadth-first in the loader's order, each
// once. `loaded` are objects already in the process, matched by name as the
// loader matches them; their own dependencies are not walked.
// An Error when `library` itself is not a readable ELF shared object.
Result<std::vector<ResolvedLibrary>> resolve_dependencies(const std::filesystem::path& library, const LoaderPaths& paths,
                                                          const std::vector<LoadedObject>& loaded = {});

}  // namespace rung
