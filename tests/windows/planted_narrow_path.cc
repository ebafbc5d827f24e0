// Planted for windows.path_text_check_refuses_a_planted_conversion: each line is
// a way text from outside becomes a path in the system's code page, and the
// check (tools/check-windows-path-text.py) must refuse this object.
#include <filesystem>
#include <string>
#include <string_view>

std::filesystem::path from_string(const std::string& text) { return std::filesystem::path(text); }
std::filesystem::path appended(const std::filesystem::path& dir, const std::string& name) { return dir / name; }
std::filesystem::path from_view(std::string_view text) { return std::filesystem::path(text); }
std::filesystem::path from_pointer(const char* text) { return std::filesystem::path(text); }
void assigned(std::filesystem::path& p, const std::string& text) { p = text; }
std::uintmax_t removed(const std::filesystem::path& p) { return std::filesystem::remove_all(p); }
