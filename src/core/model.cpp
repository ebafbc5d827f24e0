#include "rung/model.h"

#include <fmt/format.h>

#include <cstdint>

#include "rung/printable.h"

namespace rung {

const char* role_name(Role r) {
  switch (r) {
    case Role::kDetector: return "detector";
    case Role::kEmbedder: return "embedder";
    case Role::kSegmenter: return "segmenter";
    case Role::kGeneric: return "generic";
  }
  return "?";
}

const char* numeric_form_name(NumericForm f) {
  switch (f) {
    case NumericForm::kF32: return "f32";
    case NumericForm::kF16: return "f16";
    case NumericForm::kInt8: return "i8";
    case NumericForm::kA16W8: return "a16w8";
    case NumericForm::kA16W16: return "a16w16";
    case NumericForm::kW8: return "w8";
  }
  return "?";
}

std::string model_id(const std::string& name, NumericForm form) {
  if (form == NumericForm::kF32) return name;
  const std::string suffix = std::string("_") + numeric_form_name(form);
  // A file rung quantise wrote is named by its model id already: its stem names the form once.
  if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) return name;
  return name + suffix;
}

namespace {

bool in_name_rule(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
}

}  // namespace

std::string model_name_problem(const std::string& name) {
  if (name.empty()) return "a model needs a name";
  const std::string shown = printable(name, 80);
  if (name.size() > kMaxModelNameLength) {
    return fmt::format("model name '{}' is {} bytes long; at most {} are allowed", shown, name.size(), kMaxModelNameLength);
  }
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (!in_name_rule(c)) {
      return fmt::format("model name '{}' holds byte 0x{:02x} at {}; a name is letters, digits, '_', '.' and '-'", shown,
                         static_cast<unsigned char>(c), i);
    }
  }
  if (name.front() == '.' || name.front() == '_' || name.front() == '-') {
    return fmt::format("model name '{}' starts with '{}'; a name starts with a letter or a digit", shown, name.front());
  }
  return {};
}

std::string model_file_stem(const std::string& name) {
  if (model_name_problem(name).empty()) return name;
  // Changed: a short hash of the whole name keeps two names that map alike apart.
  std::uint32_t h = 2166136261u;  // FNV-1a
  for (unsigned char c : name) h = (h ^ c) * 16777619u;
  std::string stem = name.substr(0, kMaxModelNameLength - 9);
  for (char& c : stem) {
    if (!in_name_rule(c)) c = '_';
  }
  if (!stem.empty() && (stem.front() == '.' || stem.front() == '-')) stem.front() = '_';
  return fmt::format("{}-{:08x}", stem.empty() ? "_" : stem, h);
}

}  // namespace rung
