// Writing a file so that no reader ever sees half of it: a temporary name in
// the same directory, fsync, rename over the target, fsync the directory.
#pragma once

#include <filesystem>
#include <string_view>

#include "rung/result.h"

namespace rung {

Status write_file_atomically(const std::filesystem::path& path, std::string_view contents);

}  // namespace rung
