// A path as Windows takes it past MAX_PATH (260 characters): absolute, with
// backslashes, under "\\?\" (or "\\?\UNC\" for a share), so the wide
// file functions take it whatever its length and whatever the system's
// long-path setting.
#pragma once

#include <filesystem>
#include <string>

namespace rung {

std::wstring long_path_form(const std::filesystem::path& path);

}  // namespace rung
