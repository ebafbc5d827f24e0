#include "os/json_input.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "rung/json_text.h"
#include "os/read_file.h"

namespace rung {
namespace {

// The parser quotes what it last read: outside bytes. Every byte outside printable
// ASCII is written as \xNN, so the message is UTF-8 and inert wherever it travels on
// (a JSON writer would throw on a stray byte; a terminal would obey an escape).
std::string ascii_only(const std::string& text) {
  std::string out;
  for (unsigned char c : text.substr(0, 400)) {
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("\\x{:02x}", c);
    }
  }
  return out;
}


// The deepest nesting of arrays and objects in the text, counted outside strings;
// stops counting once past `limit`. Exact for valid JSON; for invalid text the
// parser stops at the first error, before anything deeper than counted here.
std::size_t nesting_depth(std::string_view text, std::size_t limit) {
  std::size_t depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
      if (deepest > limit) return deepest;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

}  // namespace

std::string json_error_words(const nlohmann::json::exception& e) {
  std::string_view words = e.what();
  if (!words.empty() && words.front() == '[') {
    if (const auto end = words.find("] "); end != std::string_view::npos) words.remove_prefix(end + 2);
  }
  for (std::string_view noise : {"parse error at ", "parse error: "}) {
    if (words.substr(0, noise.size()) == noise) words.remove_prefix(noise.size());
  }
  return ascii_only(std::string(words));
}

namespace {

template <class Json>
std::string schema_words_of(const Json& j, std::string_view expected) {
  if (!j.is_object()) return fmt::format("it is {} {}, not an object", j.is_array() || j.is_object() ? "an" : "a", j.type_name());
  const auto it = j.find("schema");
  if (it == j.end()) return "it has no \"schema\" key";
  return fmt::format("it has \"schema\": {}, not \"{}\"", ascii_only(json_text(*it).substr(0, 80)), expected);
}

}  // namespace

std::string schema_words(const nlohmann::json& j, std::string_view expected) { return schema_words_of(j, expected); }
std::string schema_words(const nlohmann::ordered_json& j, std::string_view expected) { return schema_words_of(j, expected); }

namespace {

template <class Json>
Result<Json> bounded_parse(std::string_view text) {
  if (nesting_depth(text, kMaxJsonDepth) > kMaxJsonDepth) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("nested deeper than {} levels", kMaxJsonDepth)};
  }
  try {
    return Json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("not valid JSON: {}", json_error_words(e))};
  }
}

}  // namespace

Result<nlohmann::json> parse_json(std::string_view text) { return bounded_parse<nlohmann::json>(text); }
Result<nlohmann::ordered_json> parse_ordered_json(std::string_view text) { return bounded_parse<nlohmann::ordered_json>(text); }

nlohmann::json parse_json_or_discarded(std::string_view text) {
  auto j = parse_json(text);
  return j ? std::move(*j) : nlohmann::json(nlohmann::json::value_t::discarded);
}

nlohmann::json parse_json_or(std::string_view text, nlohmann::json fallback) {
  auto j = parse_json(text);
  return j ? std::move(*j) : std::move(fallback);
}

Result<nlohmann::json> read_json_file(const std::filesystem::path& file, FileKind kind) {
  auto text = read_input_file(file, kind);
  if (!text) return text.error();
  auto j = parse_json(*text);
  if (!j) return Error{j.error().code, fmt::format("{}: {}", file.string(), j.error().message)};
  return j;
}

JsonFields::JsonFields(const nlohmann::json& j, std::string where) : j_(j), where_(std::move(where)) {
  if (!j_.is_object()) fail("must be a JSON object");
}

void JsonFields::fail(const std::string& message) {
  if (problem_.empty()) problem_ = message;
}

void JsonFields::require(bool ok, const std::string& message) {
  if (!ok) fail(message);
}

const nlohmann::json* JsonFields::find(const std::string& key, bool required) {
  read_.insert(key);
  if (!j_.is_object()) return nullptr;
  auto it = j_.find(key);
  if (it == j_.end()) {
    if (required) fail(fmt::format("lacks '{}'", key));
    return nullptr;
  }
  return &*it;
}

double JsonFields::number(const std::string& key, double fallback) {
  const auto* v = find(key, false);
  if (v == nullptr) return fallback;
  auto d = json_finite(*v);
  if (!d) fail(fmt::format("'{}' must be a finite number", key));
  return d.value_or(fallback);
}

double JsonFields::number(const std::string& key) {
  const bool present = has(key);
  const double d = number(key, 0);
  if (!present) fail(fmt::format("lacks '{}'", key));
  return d;
}

std::int64_t JsonFields::integer(const std::string& key, std::int64_t fallback, std::int64_t lo, std::int64_t hi) {
  const auto* v = find(key, false);
  if (v == nullptr) return fallback;
  auto i = json_integer(*v, lo, hi);
  if (!i) fail(fmt::format("'{}' must be a whole number from {} to {}, not {}", key, lo, hi, json_text(*v).substr(0, 40)));
  return i.value_or(fallback);
}

std::int64_t JsonFields::integer(const std::string& key, std::int64_t lo, std::int64_t hi) {
  const bool present = has(key);
  const auto i = integer(key, lo, lo, hi);
  if (!present) fail(fmt::format("lacks '{}'", key));
  return i;
}

std::string JsonFields::text(const std::string& key, const std::string& fallback) {
  const auto* v = find(key, false);
  if (v == nullptr) return fallback;
  if (!v->is_string()) {
    fail(fmt::format("'{}' must be a string", key));
    return fallback;
  }
  return v->get<std::string>();
}

std::string JsonFields::text(const std::string& key) {
  const bool present = has(key);
  auto s = text(key, "");
  if (!present) fail(fmt::format("lacks '{}'", key));
  return s;
}

bool JsonFields::flag(const std::string& key, bool fallback) {
  const auto* v = find(key, false);
  if (v == nullptr) return fallback;
  if (!v->is_boolean()) {
    fail(fmt::format("'{}' must be true or false", key));
    return fallback;
  }
  return v->get<bool>();
}

bool JsonFields::flag(const std::string& key) {
  const bool present = has(key);
  const bool b = flag(key, false);
  if (!present) fail(fmt::format("lacks '{}'", key));
  return b;
}

std::vector<double> JsonFields::numbers(const std::string& key, std::vector<double> fallback) {
  const auto* v = find(key, false);
  if (v == nullptr) return fallback;
  std::vector<double> out;
  if (v->is_array()) {
    for (const auto& x : *v) {
      auto d = json_finite(x);
      if (!d) break;
      out.push_back(*d);
    }
    if (out.size() == v->size()) return out;
  }
  fail(fmt::format("'{}' must be a list of finite numbers", key));
  return fallback;
}

std::vector<std::string> JsonFields::texts(const std::string& key) {
  const auto* v = find(key, false);
  if (v == nullptr) return {};
  if (v->is_string()) return {v->get<std::string>()};
  std::vector<std::string> out;
  if (v->is_array()) {
    for (const auto& x : *v) {
      if (!x.is_string()) break;
      out.push_back(x.get<std::string>());
    }
    if (out.size() == v->size()) return out;
  }
  fail(fmt::format("'{}' must be a string or a list of strings", key));
  return {};
}

std::vector<std::string> JsonFields::text_list(const std::string& key, std::size_t max_items) {
  const auto* v = array(key, max_items);
  if (v == nullptr) return {};
  std::vector<std::string> out;
  for (const auto& x : *v) {
    if (!x.is_string()) {
      fail(fmt::format("'{}' must be a list of strings", key));
      return {};
    }
    out.push_back(x.get<std::string>());
  }
  return out;
}

const nlohmann::json* JsonFields::object(const std::string& key, bool required) {
  const auto* v = find(key, required);
  if (v != nullptr && v->is_null() && !required) return nullptr;  // an optional object written as null is absent
  if (v != nullptr && !v->is_object()) {
    fail(fmt::format("'{}' must be an object", key));
    return nullptr;
  }
  return v;
}

const nlohmann::json* JsonFields::array(const std::string& key, std::size_t max_items, bool required) {
  const auto* v = find(key, required);
  if (v == nullptr) return nullptr;
  if (!v->is_array()) {
    fail(fmt::format("'{}' must be a list", key));
    return nullptr;
  }
  if (v->size() > max_items) {
    fail(fmt::format("'{}' holds {} entries; at most {} make sense", key, v->size(), max_items));
    return nullptr;
  }
  return v;
}

Status JsonFields::problems() const {
  if (!problem_.empty()) return error(problem_);
  return {};
}

Status JsonFields::finish() const {
  RUNG_RETURN_IF_ERROR(problems());
  for (auto it = j_.begin(); it != j_.end(); ++it) {
    if (!read_.count(it.key())) {
      std::vector<std::string> known(read_.begin(), read_.end());
      return error(fmt::format("unknown key '{}' (known keys: {})", it.key(), fmt::join(known, ", ")));
    }
  }
  return {};
}

}  // namespace rung
