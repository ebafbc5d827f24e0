// What a work directory (os/work_dir.h) needs from the system, one
// implementation per system: os/posix/fresh_dir.cpp, os/windows/fresh_dir.cpp.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>

#include "rung/result.h"

namespace rung {

// Where temporary files go when $TMPDIR names nothing usable: /tmp; the user's
// own temporary directory on Windows (GetTempPathW).
std::filesystem::path system_temporary_root();

// A new directory `under`, named PREFIX.XXXXXX (six random characters), made by
// this call and never an existing one, readable by this user alone where the
// system's defaults would say otherwise (mode 0700 on POSIX).
Result<std::filesystem::path> make_fresh_dir(const std::filesystem::path& under, const std::string& prefix);

// The contents of `dir`/`name` when `dir` is a directory of this user's (not a
// link) and the file is a regular file of this user's under `max_bytes`; read
// without following a link.
std::optional<std::string> read_own_note(const std::filesystem::path& dir, const std::string& name, std::size_t max_bytes);

// Every file under `dir` on disk, then `dir` renamed to `final_path` (never over
// an existing one) and that rename on disk.
Status sync_and_rename_dir(const std::filesystem::path& dir, const std::filesystem::path& final_path);

}  // namespace rung
