// The JSON form of a struct, read with checked numbers. nlohmann's own
// from_json converts a number to an int or an enum with a plain cast, so a
// damaged job or result file holding 1e77 where an int goes is undefined
// behaviour (fuzz/job-file.cc found it). Here a whole number is required where
// an integer or an enum goes, and it must fit; a float must fit a float. A
// wrong value throws nlohmann::json::exception, which the reader of the file
// turns into "malformed", as for a missing key.
#pragma once

#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "os/json_input.h"
#include "rung/json_text.h"
#include "rung/path_text.h"

namespace rung {

namespace json_form_detail {

template <class T>
struct is_vector : std::false_type {};
template <class T, class A>
struct is_vector<std::vector<T, A>> : std::true_type {};
template <class T>
struct is_string_map : std::false_type {};
template <class T, class C, class A>
struct is_string_map<std::map<std::string, T, C, A>> : std::true_type {};
template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};

template <class I>
I whole_number(const nlohmann::json& j) {
  if (!j.is_number()) throw nlohmann::json::type_error::create(302, "a whole number is required, not " + std::string(j.type_name()), &j);
  constexpr auto lo = static_cast<std::int64_t>(std::numeric_limits<I>::min());
  constexpr auto hi = std::in_range<std::int64_t>(std::numeric_limits<I>::max()) ? static_cast<std::int64_t>(std::numeric_limits<I>::max())
                                                                                   : std::numeric_limits<std::int64_t>::max();
  if (auto i = json_integer(j, lo, hi)) return static_cast<I>(*i);
  throw nlohmann::json::out_of_range::create(406, "the number " + json_text(j) + " is not a whole number in range here", &j);
}

}  // namespace json_form_detail

// Reads j into v: integers, enums and floats checked, containers element by
// element, structs through their own from_json (checked too when they use
// RUNG_JSON_FORM).
template <class T>
void read_json(const nlohmann::json& j, T& v) {
  using namespace json_form_detail;
  if constexpr (std::is_same_v<T, bool>) {
    v = j.get<bool>();  // throws unless j is true or false
  } else if constexpr (std::is_integral_v<T>) {
    v = whole_number<T>(j);
  } else if constexpr (std::is_enum_v<T>) {
    v = static_cast<T>(whole_number<std::underlying_type_t<T>>(j));
  } else if constexpr (std::is_same_v<T, float>) {
    const double d = j.get<double>();
    if (std::isfinite(d) && std::fabs(d) > std::numeric_limits<float>::max()) {
      throw nlohmann::json::out_of_range::create(406, "the number " + json_text(j) + " does not fit a float", &j);
    }
    v = static_cast<float>(d);
  } else if constexpr (is_vector<T>::value) {
    if (!j.is_array()) throw nlohmann::json::type_error::create(302, "an array is required, not " + std::string(j.type_name()), &j);
    T out;
    out.reserve(j.size());
    for (const auto& e : j) read_json(e, out.emplace_back());
    v = std::move(out);
  } else if constexpr (is_string_map<T>::value) {
    if (!j.is_object()) throw nlohmann::json::type_error::create(302, "an object is required, not " + std::string(j.type_name()), &j);
    T out;
    for (const auto& [key, e] : j.items()) read_json(e, out[key]);
    v = std::move(out);
  } else if constexpr (is_optional<T>::value) {
    if (j.is_null()) {
      v.reset();
    } else {
      read_json(j, v.emplace());
    }
  } else if constexpr (std::is_same_v<T, std::filesystem::path>) {
    // nlohmann-json 3.11.2 assigns the narrow string, which Windows reads in its code page.
    // A path that is not UTF-8 comes as {"path_bytes": hex} (rung/json_text.h).
    auto p = path_from_json(j);
    if (!p) throw nlohmann::json::type_error::create(302, "a path (text, or {\"path_bytes\": hex}) is required, not " + std::string(j.type_name()), &j);
    v = std::move(*p);
  } else {
    j.get_to(v);  // strings, doubles, and structs with their own from_json
  }
}

// Writes v into j: as nlohmann would, except that a path, wherever it sits in
// a container, takes path_json()'s form, so a name that is not UTF-8 survives.
template <class T>
void write_json(nlohmann::json& j, const T& v) {
  using namespace json_form_detail;
  if constexpr (std::is_same_v<T, std::filesystem::path>) {
    j = path_json(v);
  } else if constexpr (is_vector<T>::value) {
    j = nlohmann::json::array();
    for (const auto& e : v) write_json(j.emplace_back(), e);
  } else if constexpr (is_string_map<T>::value) {
    j = nlohmann::json::object();
    for (const auto& [key, e] : v) write_json(j[key], e);
  } else if constexpr (is_optional<T>::value) {
    if (v) {
      write_json(j, *v);
    } else {
      j = nullptr;
    }
  } else {
    j = v;
  }
}

}  // namespace rung

#define RUNG_JSON_FORM_WRITE(field) ::rung::write_json(nlohmann_json_j[#field], nlohmann_json_t.field);
#define RUNG_JSON_FORM_READ(field) ::rung::read_json(nlohmann_json_j.at(#field), nlohmann_json_t.field);

// Like NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE (every field's key required), with checked reading.
#define RUNG_JSON_FORM(Type, ...)                                                                          \
  inline void to_json(nlohmann::json& nlohmann_json_j, const Type& nlohmann_json_t) {                     \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(RUNG_JSON_FORM_WRITE, __VA_ARGS__))                              \
  }                                                                                                        \
  inline void from_json(const nlohmann::json& nlohmann_json_j, Type& nlohmann_json_t) {                   \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(RUNG_JSON_FORM_READ, __VA_ARGS__))                           \
  }

// The same, where a missing key keeps the field's default (NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT).
#define RUNG_JSON_FORM_READ_OR_DEFAULT(field) \
  if (auto it = nlohmann_json_j.find(#field); it != nlohmann_json_j.end()) ::rung::read_json(*it, nlohmann_json_t.field);

#define RUNG_JSON_FORM_WITH_DEFAULT(Type, ...)                                                             \
  inline void to_json(nlohmann::json& nlohmann_json_j, const Type& nlohmann_json_t) {                     \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(RUNG_JSON_FORM_WRITE, __VA_ARGS__))                              \
  }                                                                                                        \
  inline void from_json(const nlohmann::json& nlohmann_json_j, Type& nlohmann_json_t) {                   \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(RUNG_JSON_FORM_READ_OR_DEFAULT, __VA_ARGS__))                \
  }
