#include "runtime/clean_error.h"

#include <filesystem>
#include <regex>

#include "rungs/libraries.h"
#include "rung/path_text.h"

namespace rung {
namespace {

std::string file_name(const std::string& path) { return path_from_utf8(path).filename().string(); }

// dlerror()'s text for a library that did not load, in the library table's words.
// The library named before the colon is the one at fault, which is the one ONNX
// Runtime asked for only when that file itself is absent.
std::string loader_error_words(const std::string& library, const std::string& error) {
  static const std::regex cannot_open(R"(^(\S+): cannot open shared object file: (.*)$)");
  static const std::regex lacks_version(R"(^(\S+): version `([^']+)' not found \(required by (\S+)\))");
  std::smatch m;
  if (std::regex_search(error, m, cannot_open)) {
    const std::string missing = file_name(m[1].str());
    if (m[2].str().rfind("No such file", 0) != 0) {
      return identify_library(missing).product + " (" + missing + ") cannot be opened: " + m[2].str();
    }
    if (missing == file_name(library)) return identify_library(missing).what + " (" + missing + ") not found";
    return missing_libraries_words({missing});
  }
  if (std::regex_search(error, m, lacks_version)) {
    return lacking_versions_words(file_name(m[1].str()), m[1].str(), {m[2].str()}, file_name(m[3].str()));
  }
  return error;
}

}  // namespace

std::string clean_error(std::string message) {
  static const std::regex load_failure(R"(Failed to load library (\S+) with error: ([^\n]*))");
  std::smatch m;
  if (std::regex_search(message, m, load_failure)) return loader_error_words(m[1].str(), m[2].str());
  static const std::regex ort_prefix(R"(^.*\[ONNXRuntimeError\] : \d+ : \w+ : )");
  message = std::regex_replace(message, ort_prefix, "", std::regex_constants::format_first_only);
  // "/src/x.cc:136 <signature> <condition> was false. <reason>": an ORT_ENFORCE; keep the reason.
  // It may follow a prefix ("Exception during initialization: "), which is kept.
  static const std::regex enforce(R"(/\S+\.(cc|cpp|h):\d+ .* was false\. )");
  if (std::regex_search(message, m, enforce)) message = m.prefix().str() + m.suffix().str();
  // A file that is no ONNX model at all, in the words rung's own reader uses (graph/onnx_file.cpp).
  static const std::regex not_protobuf(R"(Load model from (.*) failed: ?Protobuf parsing failed\.?)");
  message = std::regex_replace(message, not_protobuf, "$1: not an ONNX model: protobuf parsing failed");
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
  return message;
}

bool reason_is_missing_library(const std::string& reason) {
  static const std::regex missing(
      R"(\(\S+\.so[.\d]*(, \S+\.so[.\d]*)*\) (not found|is not installed|is not beside)|(^|; )\S+\.so[.\d]* not found|found \S+\.so\S*( \([^)]*\))?, but this build needs)");
  return std::regex_search(reason, missing);
}

std::string brief_reason(const std::string& message) {
  // Room for two or three clauses ("the NVIDIA driver (libcuda.so.1) is not installed;
  // provider from ONNX Runtime 1.29.0 beside the 1.30.0 core"); a longer reason is
  // cut after its last whole clause that fits.
  constexpr std::size_t kMaxChars = 160;
  std::string s = clean_error(message);
  s = s.substr(0, s.find('\n'));
  if (s.size() <= kMaxChars) return s;
  auto clause_end = s.rfind("; ", kMaxChars - 1);
  if (clause_end != std::string::npos) return s.substr(0, clause_end) + "; …";
  return s.substr(0, kMaxChars - 1) + "…";
}

}  // namespace rung
