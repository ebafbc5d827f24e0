// Files named from outside are read only when they are regular files: a FIFO
// blocks its reader forever and a device such as /dev/zero never ends, so a
// model, spec or tensor file of that kind is refused, said as what it is,
// before anything hashes or loads it. Opening one to read: os/opened_file.h.
#pragma once

#include <filesystem>
#include <string>

#include "rung/result.h"

namespace rung {

// "a directory", "a FIFO", "a character device", ... for a kind of file.
std::string file_kind(std::filesystem::file_type type);

// The one wording, in every command and the C ABI, of an input that is not there:
// "PATH: does not exist" (kNotFound). A caller may put what the path was given as
// before it ("--gate: PATH: does not exist"), never other words for the same thing.
Error missing_path(const std::filesystem::path& path);

// Ok when `dir` (after symbolic links) is a directory; else missing_path(dir), or
// "PATH: is a regular file, not a directory" (kInvalidArgument) naming what it is.
Status check_input_directory(const std::filesystem::path& dir);

// Ok when `path` (after symbolic links) is a regular file; else kNotFound for a
// missing file, kInvalidArgument naming what it is instead ("/dev/zero is a
// character device, not a regular file").
Status check_regular_file(const std::filesystem::path& path);

// For a model registered by name: ok when it is a regular file or missing (a
// missing model is reported where it is used); else "model NAME: /dev/zero is a
// character device, not a regular file".
Status check_model_file_kind(const std::string& name, const std::filesystem::path& path);

}  // namespace rung
