#include "rung/path_text.h"

#include <exception>
#include <string>

#include "os/environment.h"

namespace rung {

std::filesystem::path path_from_utf8(std::string_view text) {
  const std::u8string_view utf8(reinterpret_cast<const char8_t*>(text.data()), text.size());
  try {
    return std::filesystem::path(utf8);
  } catch (const std::exception&) {
    // Not UTF-8 where paths are UTF-16 (what crosses into rung is checked first):
    // each byte that is not ASCII becomes '?', never a throw from a conversion.
    std::u8string ascii;
    for (char c : text) ascii.push_back(static_cast<unsigned char>(c) < 0x80 ? static_cast<char8_t>(c) : u8'?');
    return std::filesystem::path(ascii);
  }
}

std::optional<std::filesystem::path> path_in_variable(const char* name) {
  if (auto value = any_variable(name, /*rung_allowed=*/true)) return path_from_utf8(*value);
  return std::nullopt;
}

}  // namespace rung
