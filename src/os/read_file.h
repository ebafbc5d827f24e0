// Reading a whole file as text.
#pragma once

#include <filesystem>
#include <string>

namespace rung {

// The whole file as text; empty when it cannot be read (callers treat that as absent).
std::string read_text_file(const std::filesystem::path& path);

}  // namespace rung
