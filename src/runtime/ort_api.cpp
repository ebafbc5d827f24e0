#include "runtime/ort_api.h"

#include <fmt/format.h>

#include <charconv>
#include <mutex>

#include "onnxruntime_cxx_api.h"

namespace rung::ort {
namespace {

// "1.28.2" -> 28: ONNX Runtime 1.N serves API versions up to N.
int api_version_from_release(const std::string& version) {
  auto dot = version.find('.');
  if (dot == std::string::npos) return 0;
  int minor = 0;
  const char* begin = version.data() + dot + 1;
  auto [end, ec] = std::from_chars(begin, version.data() + version.size(), minor);
  return ec == std::errc() && end != begin ? minor : 0;
}

std::string take_message(const OrtApi* api, OrtStatus* status) {
  std::string message = api->GetErrorMessage(status);
  api->ReleaseStatus(status);
  return message;
}

std::mutex install_mutex;
const OrtApi* installed = nullptr;
int installed_version = 0;

}  // namespace

Result<BuildInfo> query_build(const OrtApiBase* base, int newest, int oldest) {
  BuildInfo info;
  const char* version = base->GetVersionString != nullptr ? base->GetVersionString() : nullptr;
  info.version = version != nullptr ? version : "unknown";
  // Start at the release's own API version when it is older than ours: asking
  // above it only makes the build print a complaint before answering null.
  int start = newest;
  if (int release = api_version_from_release(info.version); release >= oldest && release < newest) start = release;
  for (int v = start; v >= oldest; --v) {
    if (const OrtApi* api = base->GetApi(static_cast<uint32_t>(v)); api != nullptr) {
      info.api = api;
      info.api_version = v;
      break;
    }
  }
  if (info.api == nullptr) {
    return Error{ErrorCode::kUnsupported,
                 fmt::format("ONNX Runtime {} serves no API version between {} and {}", info.version, oldest, newest)};
  }
  // The entries called here before the build is trusted with anything else; a hole is a damaged build.
  if (info.api->GetAvailableProviders == nullptr || info.api->ReleaseAvailableProviders == nullptr ||
      info.api->GetErrorMessage == nullptr || info.api->ReleaseStatus == nullptr) {
    return Error{ErrorCode::kLoadFailed, fmt::format("ONNX Runtime {}: its API table (version {}) has empty entries", info.version, info.api_version)};
  }
  char** names = nullptr;
  int count = 0;
  if (OrtStatus* status = info.api->GetAvailableProviders(&names, &count); status != nullptr) {
    return Error{ErrorCode::kRuntime, "GetAvailableProviders failed: " + take_message(info.api, status)};
  }
  for (int i = 0; i < count; ++i) info.providers.emplace_back(names[i]);
  if (OrtStatus* status = info.api->ReleaseAvailableProviders(names, count); status != nullptr) {
    take_message(info.api, status);
  }
  return info;
}

Status install_api(const OrtApi* api, int api_version) {
  std::lock_guard lock(install_mutex);
  if (installed != nullptr && installed != api) {
    return Error{ErrorCode::kInvalidArgument, "an ONNX Runtime build is already installed in this process"};
  }
  installed = api;
  installed_version = api_version;
  Ort::InitApi(api);
  return {};
}

const OrtApi* installed_api() {
  std::lock_guard lock(install_mutex);
  return installed;
}

int installed_api_version() {
  std::lock_guard lock(install_mutex);
  return installed_version;
}

}  // namespace rung::ort
