// A JSON document becomes text here and nowhere else (tools/check-text-policy.py
// holds it: no other object file instantiates nlohmann's serializer).
//
// nlohmann's own dump() throws on a string that is not UTF-8, and rung's
// documents carry text from outside: file and folder names, a provider's
// message, a worker's log, a model's node names. A throw there aborted `rung
// prepare` and turned every other command into "internal error". The rule
// here: each byte of a string that does not begin or continue a valid UTF-8
// sequence is written as U+FFFD, and the rest of the string is kept. The
// writer never throws for the text it is given.
//
// A path must survive the trip to a worker and back, so a path that is not
// UTF-8 is never written as a string: write_json() (os/json_form.h) gives it
// the form {"path_bytes": "<hex>"}, which read_json() reads back byte for byte.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace rung {

// `document` as JSON text: compact when indent < 0, else one value a line with
// `indent` spaces a level. Strings that are not UTF-8: each bad byte is U+FFFD.
std::string json_text(const nlohmann::json& document, int indent = -1);
std::string json_text(const nlohmann::ordered_json& document, int indent = -1);

// A path as JSON: its text when that is UTF-8, else {"path_bytes": "<hex>"}
// (a POSIX file name may be any bytes but '/' and NUL).
nlohmann::json path_json(const std::filesystem::path& path);

// The path path_json() wrote, or nullopt when `j` is neither form.
std::optional<std::filesystem::path> path_from_json(const nlohmann::json& j);

}  // namespace rung
