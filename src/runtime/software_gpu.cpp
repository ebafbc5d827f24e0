#include "runtime/software_gpu.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <nlohmann/json.hpp>

#include "os/child_environment.h"
#include "os/environment.h"
#include "os/json_input.h"
#include "os/path_trust.h"
#include "os/worker_location.h"
#include "rung/directory.h"
#include "runtime/search.h"
#include "rungs/module.h"
#include "rung/path_text.h"

namespace rung {
namespace fs = std::filesystem;
namespace {

constexpr char kManifest[] = "lvp_icd.json";

std::mutex mutex;
std::optional<SoftwareGpu>& lent() {
  static std::optional<SoftwareGpu> gpu;
  return gpu;
}

// A directory fetch-deps.sh filled: the manifest names the driver by absolute path.
Result<SoftwareGpu> read_adapter_dir(const fs::path& dir) {
  SoftwareGpu gpu;
  gpu.dir = dir;
  gpu.manifest = dir / kManifest;
  std::error_code ec;
  if (!fs::is_regular_file(gpu.manifest, ec)) return Error{ErrorCode::kNotFound, fmt::format("{}: no {} there", dir.string(), kManifest)};
  auto read = read_json_file(gpu.manifest, FileKind::kDocument);
  if (!read) return Error{read.error().code, fmt::format("{} (not a Vulkan driver manifest)", read.error().message)};
  const nlohmann::json& j = *read;
  if (!j.is_object() || !j.contains("ICD") || !j["ICD"].is_object() || !j["ICD"].contains("library_path") ||
      !j["ICD"]["library_path"].is_string()) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("{}: not a Vulkan driver manifest (no ICD.library_path)", gpu.manifest.string())};
  }
  gpu.driver = path_from_utf8(j["ICD"]["library_path"].get<std::string>());
  if (!gpu.driver.is_absolute() || !fs::is_regular_file(gpu.driver, ec)) {
    return Error{ErrorCode::kNotFound, fmt::format("{}: names {}, which is not there (moved? run {} again)", gpu.manifest.string(),
                                                   gpu.driver.string(), kFetchCommand)};
  }
  // Another user who can change the driver, or any directory on its way, could run their code in our workers.
  if (auto s = check_path_trusted(gpu.driver); !s) return Error{s.error().code, fmt::format("{}: refused, {}", gpu.driver.string(), s.error().message)};
  if (j.contains("rung")) gpu.mesa_version = json_string_or(j["rung"], "mesa", "");
  return gpu;
}

std::vector<fs::path> candidate_dirs(const fs::path& root) {
  std::vector<fs::path> out;
  auto entries = list_directory(root);
  if (!entries) return out;
  for (const auto& e : *entries) {
    std::error_code ec;
    if (fs::is_directory(e, ec)) out.push_back(e);
  }
  std::sort(out.rbegin(), out.rend());  // newest-named first
  return out;
}

}  // namespace

std::string SoftwareGpu::describe() const {
  return fmt::format("lavapipe ({}software Vulkan) in {}", mesa_version.empty() ? "" : fmt::format("Mesa {}, ", mesa_version), dir.string());
}

Result<SoftwareGpu> find_software_gpu(const SoftwareGpuSearch& search) {
  std::optional<fs::path> named = search.dir;
  if (!named && search.read_environment) {
    if (auto env = rung_variable("RUNG_SOFTWARE_GPU_DIR", true)) named = path_from_utf8(*env);
  }
  if (named) return read_adapter_dir(*named);
  std::vector<std::string> looked;
  const fs::path beside = search.executable_dir.value_or(executable_dir());
  // Beside the program (a build tree), then in the kit's share/rung reached from it (an install, wherever it was moved).
  for (const fs::path& root : {beside.empty() ? fs::path() : beside / "software-gpu",
                               beside.empty() ? fs::path() : (beside / RUNG_DATA_FROM_BINDIR / "software-gpu").lexically_normal()}) {
    if (root.empty()) continue;
    looked.push_back(root.string());
    for (const auto& dir : candidate_dirs(root)) {
      auto gpu = read_adapter_dir(dir);
      if (gpu || gpu.error().code == ErrorCode::kPermission) return gpu;
    }
  }
  return Error{ErrorCode::kNotFound, fmt::format("no software GPU adapter (Mesa's lavapipe) in RUNG_SOFTWARE_GPU_DIR or {}; "
                                                 "{} fetches it and the build links it beside rung", fmt::join(looked, ", "), kFetchCommand)};
}

void lend_software_gpu(const SoftwareGpu& gpu) {
  std::lock_guard lock(mutex);
  // The loader reads VK_DRIVER_FILES (VK_ICD_FILENAMES before loader 1.3.207): only this
  // driver is seen. Its libdrm is newer than Debian 12's, so it comes first on the library path.
  set_child_variable("VK_DRIVER_FILES", gpu.manifest.string());
  set_child_variable("VK_ICD_FILENAMES", gpu.manifest.string());
  put_first_on_child_library_path(gpu.dir);
  lent() = gpu;
}

void stop_lending_software_gpu() {
  std::lock_guard lock(mutex);
  for (const char* name : {"VK_DRIVER_FILES", "VK_ICD_FILENAMES"}) unset_child_variable(name);
  forget_child_library_path();
  lent().reset();
}

std::optional<SoftwareGpu> lent_software_gpu() {
  std::lock_guard lock(mutex);
  return lent();
}

bool software_gpu_asked_by_environment(bool read_environment) {
  const auto v = rung_variable("RUNG_SOFTWARE_GPU", read_environment);
  return v && (*v == "1" || *v == "true" || *v == "yes");
}

Status lend_software_gpu_if_asked(bool asked, bool read_environment) {
  if (!asked && !software_gpu_asked_by_environment(read_environment)) return {};
  if (lent_software_gpu()) return {};
  auto gpu = find_software_gpu();
  if (!gpu) return gpu.error();
  lend_software_gpu(*gpu);
  return {};
}

std::string adapter_display(const RungSpec& rung) {
  const RungModule* m = module_of(rung);
  if (m == nullptr || !m->runs_on_vulkan || !lent_software_gpu()) return rung.display;
  return rung.display + " on lavapipe (software)";
}

void name_software_adapter(std::vector<RungSpec>& rungs) {
  for (auto& r : rungs) r.display = adapter_display(r);
}

}  // namespace rung
