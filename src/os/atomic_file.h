// Writing a file so that no reader ever sees half of it: a temporary name in
// the same directory, fsync, rename over the target, fsync the directory. The
// temporary is created new (never an existing file or a planted link) with the
// umask's permissions; a link at the target is replaced, never written through.
#pragma once

#include <filesystem>
#include <string_view>

#include "rung/result.h"

namespace rung {

Status write_file_atomically(const std::filesystem::path& path, std::string_view contents);

// A file of rung's own work directory, written once and read back by rung
// only after that directory's commit marker (a worker's result.json, written
// by write_file_atomically after it) says it is whole: a file of that name
// removed, then created new (never written through a link), written and
// closed, with no temporary, rename or
// fsync. A worker's outputs are one file per output, and those three per file
// made a model of 10 000 outputs cost minutes (docs/performance.md).
Status write_scratch_file(const std::filesystem::path& path, std::string_view contents);

// Puts a file another writer (a child process) finished under a temporary name
// into place: fsync it, rename it over `final_path`, fsync the directory.
Status commit_file(const std::filesystem::path& temporary, const std::filesystem::path& final_path);

}  // namespace rung
