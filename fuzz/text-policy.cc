// The text policy (rung/json_text.h, rung/printable.h): arbitrary bytes as a
// name, a value and a path go through the JSON writer and the terminal
// printer. The writer never throws and always writes JSON that parses back; a
// path comes back byte for byte; the printer's output is UTF-8 with no control
// character but the line break and the tab (printable() keeps neither).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "os/utf8.h"
#include "rung/json_text.h"
#include "rung/path_text.h"
#include "rung/printable.h"

namespace {

bool is_control(std::uint32_t c) {
  return c < 0x20 || c == 0x7F || (c >= 0x80 && c <= 0x9F) || (c >= 0x202A && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069);
}

// Whether `text` is UTF-8 holding no control character but those `allowed`.
bool safe_for_a_terminal(const std::string& text, bool lines) {
  for (std::size_t i = 0; i < text.size();) {
    const rung::Utf8Char c = rung::decode_utf8(text, i);
    if (c.length == 0) return false;
    if (is_control(c.code) && !(lines && (c.code == '\n' || c.code == '\t'))) return false;
    i += c.length;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  const nlohmann::json doc = {{bytes, bytes}, {"list", {bytes, 1, nullptr}}};
  const std::string text = rung::json_text(doc, static_cast<int>(size % 4) - 1);
  if (nlohmann::json::parse(text, nullptr, false).is_discarded()) std::abort();
  nlohmann::ordered_json ordered;
  ordered[bytes] = bytes;
  if (nlohmann::json::parse(rung::json_text(ordered), nullptr, false).is_discarded()) std::abort();

  // A path without NUL (no file name holds one) survives the trip.
  if (bytes.find('\0') == std::string::npos) {
    const std::filesystem::path p = rung::path_from_utf8(bytes);
    const auto back = rung::path_from_json(nlohmann::json::parse(rung::json_text(rung::path_json(p))));
    if (!back || back->string() != p.string()) std::abort();
  }
  if (!safe_for_a_terminal(rung::printable_lines(bytes), true)) std::abort();
  if (!safe_for_a_terminal(rung::printable(bytes), false)) std::abort();
  return 0;
}
