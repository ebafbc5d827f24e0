#include "runtime/clean_error.h"

#include <filesystem>
#include <regex>

namespace rung {

std::string clean_error(std::string message) {
  static const std::regex missing_library(R"(Failed to load library (\S+) with error: [^\n]*cannot open shared object file)");
  std::smatch m;
  if (std::regex_search(message, m, missing_library)) return std::filesystem::path(m[1].str()).filename().string() + " not found";
  static const std::regex ort_prefix(R"(^.*\[ONNXRuntimeError\] : \d+ : \w+ : )");
  message = std::regex_replace(message, ort_prefix, "", std::regex_constants::format_first_only);
  // "/src/x.cc:136 <signature> <condition> was false. <reason>": an ORT_ENFORCE; keep the reason.
  // It may follow a prefix ("Exception during initialization: "), which is kept.
  static const std::regex enforce(R"(/\S+\.(cc|cpp|h):\d+ .* was false\. )");
  if (std::regex_search(message, m, enforce)) message = m.prefix().str() + m.suffix().str();
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
  return message;
}

std::string brief_reason(const std::string& message) {
  constexpr std::size_t kMaxChars = 90;
  std::string s = clean_error(message);
  s = s.substr(0, s.find('\n'));
  if (s.size() > kMaxChars) s = s.substr(0, kMaxChars - 1) + "…";
  return s;
}

}  // namespace rung
