#include "rung/json_text.h"

#include <fmt/format.h>

#include "os/utf8.h"
#include "rung/path_text.h"

namespace rung {

namespace {

template <class Json>
std::string text_of(const Json& document, int indent) {
  // error_handler_t::replace: a byte that is not UTF-8 becomes U+FFFD instead of a type_error.
  return document.dump(indent < 0 ? -1 : indent, ' ', false, Json::error_handler_t::replace);
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

}  // namespace

std::string json_text(const nlohmann::json& document, int indent) { return text_of(document, indent); }
std::string json_text(const nlohmann::ordered_json& document, int indent) { return text_of(document, indent); }

nlohmann::json path_json(const std::filesystem::path& path) {
  const std::string text = path.string();
  if (is_utf8(text)) return text;
  std::string hex;
  hex.reserve(text.size() * 2);
  for (unsigned char b : text) hex += fmt::format("{:02x}", b);
  return nlohmann::json{{"path_bytes", hex}};
}

std::optional<std::filesystem::path> path_from_json(const nlohmann::json& j) {
  if (j.is_string()) return path_from_utf8(j.get_ref<const std::string&>());
  if (!j.is_object() || j.size() != 1) return std::nullopt;
  const auto it = j.find("path_bytes");
  if (it == j.end() || !it->is_string()) return std::nullopt;
  const auto& hex = it->get_ref<const std::string&>();
  if (hex.size() % 2 != 0) return std::nullopt;
  std::string bytes;
  bytes.reserve(hex.size() / 2);
  for (std::size_t i = 0; i < hex.size(); i += 2) {
    const int hi = hex_digit(hex[i]), lo = hex_digit(hex[i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    bytes += static_cast<char>(hi * 16 + lo);
  }
  return path_from_utf8(bytes);
}

}  // namespace rung
