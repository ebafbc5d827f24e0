// JSON that comes from outside the process — cache files, job and result files,
// gate files, input and preprocessing specs, bench records, protocol lines —
// read one way: parsed with its nesting bounded, and its values read key by key
// with their types and ranges checked. Nothing here throws.
#pragma once

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "os/read_file.h"
#include "rung/result.h"

namespace rung {

// Deeper nesting is refused before a tree is built: nlohmann's copy, dump and
// comparison recurse, so ten thousand levels would overflow the stack. rung's
// own files nest six levels at most.
inline constexpr std::size_t kMaxJsonDepth = 64;
// The largest JSON file rung reads: a document's limit (os/read_file.h's table).
inline constexpr std::uint64_t kMaxJsonFileBytes = kFileKinds[0].max_bytes;
static_assert(kFileKinds[0].kind == FileKind::kDocument);

// Every JSON text from outside is parsed here (tools/check-inputs.py): a file's,
// a protocol line's, a database column's.
// Errors (kInvalidArgument): "not valid JSON: line 2, column 3: <the parser's
// words>", "nested deeper than 64 levels".
Result<nlohmann::json> parse_json(std::string_view text);
// The same keeping the keys' order (records rewritten with an addition).
Result<nlohmann::ordered_json> parse_ordered_json(std::string_view text);
// For readers that only need "usable or not": the value, or a discarded one
// (is_discarded()) when the text is not JSON or nests too deep.
nlohmann::json parse_json_or_discarded(std::string_view text);
// For JSON text rung made itself (a gate's statistics, a database column): the
// value, or `fallback` when the text is empty, not JSON or too deep.
nlohmann::json parse_json_or(std::string_view text, nlohmann::json fallback);
// A JSON file of a kind (read_input_file's limit): errors say what the path is,
// or "{file}: not valid JSON: ...", "{file}: nested deeper than 64 levels".
Result<nlohmann::json> read_json_file(const std::filesystem::path& file, FileKind kind = FileKind::kDocument);

// The parser's words for what it refused, without its exception's id
// ("[json.exception.parse_error.101] parse error at "), printable ASCII only
// (what it quotes is outside bytes).
std::string json_error_words(const nlohmann::json::exception& e);

// Why a document is not the kind its "schema" key names, for malformed_input
// (os/regular_file.h): `it has "schema": "x", not "rung-bench-record"`, `it has
// no "schema" key`, `it is an array, not an object`.
std::string schema_words(const nlohmann::json& j, std::string_view expected);
std::string schema_words(const nlohmann::ordered_json& j, std::string_view expected);

// A whole number: an integer, or a float holding one, within [lo, hi]. No cast
// out of range (a float beyond int64 is refused, not undefined behaviour).
template <class Json>
std::optional<std::int64_t> json_integer(const Json& v, std::int64_t lo, std::int64_t hi) {
  if (v.is_number_unsigned()) {
    const auto u = v.template get<std::uint64_t>();
    if (hi < 0 || u > static_cast<std::uint64_t>(hi)) return std::nullopt;
    const auto i = static_cast<std::int64_t>(u);
    return i >= lo ? std::optional(i) : std::nullopt;
  }
  if (v.is_number_integer()) {
    const auto i = v.template get<std::int64_t>();
    return i >= lo && i <= hi ? std::optional(i) : std::nullopt;
  }
  if (v.is_number_float()) {
    const double d = v.template get<double>();
    // Compared as doubles before any cast: 2^63 itself is out of range.
    if (!std::isfinite(d) || d != std::floor(d) || d < static_cast<double>(lo) || d >= 9223372036854775808.0) return std::nullopt;
    const auto i = static_cast<std::int64_t>(d);
    return i >= lo && i <= hi ? std::optional(i) : std::nullopt;
  }
  return std::nullopt;
}

// The string at `key` of an object, else `fallback` (absent, or not a string: never a type_error).
template <class Json>
std::string json_string_or(const Json& j, const char* key, std::string fallback) {
  if (!j.is_object()) return fallback;
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->template get<std::string>() : fallback;
}

// A finite number.
template <class Json>
std::optional<double> json_finite(const Json& v) {
  if (!v.is_number()) return std::nullopt;
  const double d = v.template get<double>();
  return std::isfinite(d) ? std::optional(d) : std::nullopt;
}

// One JSON object read key by key. A missing required key, a value of the wrong
// kind or out of its range, and a key nothing asked for are problems; the first
// is kept and finish() reports it as "<where>: <problem>".
class JsonFields {
 public:
  JsonFields(const nlohmann::json& j, std::string where);
  JsonFields(nlohmann::json&&, std::string) = delete;  // it keeps a reference: the object must outlive it
  const std::string& where() const { return where_; }
  bool has(const std::string& key) const { return j_.is_object() && j_.contains(key); }

  // Optional keys: the fallback when absent (or when the value is wrong: a problem is recorded).
  double number(const std::string& key, double fallback);
  std::int64_t integer(const std::string& key, std::int64_t fallback, std::int64_t lo, std::int64_t hi);
  std::string text(const std::string& key, const std::string& fallback);
  bool flag(const std::string& key, bool fallback);
  std::vector<double> numbers(const std::string& key, std::vector<double> fallback);
  std::vector<std::string> texts(const std::string& key);  // a string or a list of strings; empty when absent
  // Required keys: a problem when absent.
  double number(const std::string& key);
  std::int64_t integer(const std::string& key, std::int64_t lo, std::int64_t hi);
  std::string text(const std::string& key);
  bool flag(const std::string& key);
  std::vector<std::string> text_list(const std::string& key, std::size_t max_items);  // a list of strings
  // A nested object or array, checked for its kind (and size); null when absent or wrong
  // (an optional object given as JSON null is absent).
  const nlohmann::json* object(const std::string& key, bool required = true);
  const nlohmann::json* array(const std::string& key, std::size_t max_items, bool required = true);
  // A key whose value is read elsewhere: known, not an unknown key.
  void skip(const std::string& key) { read_.insert(key); }

  // A check of a value read: records `message` when `ok` is false.
  void require(bool ok, const std::string& message);
  bool ok() const { return problem_.empty(); }
  const std::string& problem() const { return problem_; }
  // The first problem, else an error for a key nothing read ("unknown key 'x' (known: a, b)").
  Status finish() const;
  // Only the first problem: for objects that may carry keys this reader ignores.
  Status problems() const;
  Error error(const std::string& message) const { return Error{ErrorCode::kInvalidArgument, where_ + ": " + message}; }

 private:
  const nlohmann::json* find(const std::string& key, bool required);
  void fail(const std::string& message);
  const nlohmann::json& j_;
  std::string where_;
  std::set<std::string> read_;
  std::string problem_;
};

}  // namespace rung
