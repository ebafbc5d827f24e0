// Files named from outside are read only when they are regular files: a FIFO
// blocks its reader forever and a device such as /dev/zero never ends, so a
// model, spec or tensor file of that kind is refused, said as what it is,
// before anything hashes or loads it. Opening one to read: os/opened_file.h.
#pragma once

#include <filesystem>
#include <string>

#include "rung/input_words.h"
#include "rung/result.h"

namespace rung {

// "a directory", "a FIFO", "a character device", ... for a kind of file.
std::string file_kind(std::filesystem::file_type type);

// For a model registered by name: ok when it is a regular file or missing (a
// missing model is reported where it is used); else "model NAME: /dev/zero: is a
// character device, not a file".
Status check_model_file_kind(const std::string& name, const std::filesystem::path& path);

}  // namespace rung
