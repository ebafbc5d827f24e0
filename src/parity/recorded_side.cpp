#include "parity/recorded_side.h"

#include <fmt/format.h>

#include "os/atomic_file.h"
#include "os/json_input.h"
#include "rung/json_text.h"

namespace rung {
namespace fs = std::filesystem;

namespace {
constexpr const char* kSchema = "rung-recorded-side/1";
}  // namespace

std::string ParityRecording::describe() const {
  std::string s = fmt::format("{} · {} · ONNX Runtime {} · recorded on {}", run.model_file, run.rung, run.runtime_version, architecture);
  if (!run.device.empty()) s += fmt::format(" ({})", run.device);
  return s;
}

std::string ParityRecording::to_json() const {
  const ParityRecording& side = *this;
  const nlohmann::json j{{"schema", kSchema},
                         {"model_file", side.run.model_file},
                         {"model_sha256", side.run.model_sha256},
                         {"model_stable_sha256", side.run.model_stable_sha256},
                         {"rung", side.run.rung},
                         {"runtime", {{"name", "onnxruntime"}, {"version", side.run.runtime_version}}},
                         {"device", side.run.device},
                         {"placement", side.run.placement},
                         {"architecture", side.architecture},
                         {"system", side.system},
                         {"outputs", side.outputs},
                         {"input_sets", side.input_sets}};
  return json_text(j, 2);
}

Status write_recorded_side(const fs::path& dir, const ParityRecording& side) {
  return write_file_atomically(dir / kRecordingFile, side.to_json() + "\n");
}

Result<std::optional<ParityRecording>> read_recorded_side(const fs::path& dir) {
  const fs::path file = dir / kRecordingFile;
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(file, ec))) return std::optional<ParityRecording>();
  auto parsed = read_json_file(file);
  if (!parsed) return parsed.error();
  const auto& j = *parsed;
  auto bad = [&](const std::string& why) { return Error{ErrorCode::kInvalidArgument, fmt::format("{}: {}", file.string(), why)}; };
  if (!j.is_object()) return bad("not a recorded side (expected a JSON object)");
  if (json_string_or(j, "schema", "") != kSchema) return bad(fmt::format("not a recorded side of this rung (schema is not \"{}\")", kSchema));
  ParityRecording side;
  side.run.model_file = json_string_or(j, "model_file", "");
  side.run.model_sha256 = json_string_or(j, "model_sha256", "");
  side.run.model_stable_sha256 = json_string_or(j, "model_stable_sha256", "");
  side.run.rung = json_string_or(j, "rung", "");
  side.run.device = json_string_or(j, "device", "");
  side.run.placement = json_string_or(j, "placement", "");
  if (const auto rt = j.find("runtime"); rt != j.end() && rt->is_object()) side.run.runtime_version = json_string_or(*rt, "version", "");
  side.architecture = json_string_or(j, "architecture", "");
  side.system = json_string_or(j, "system", "");
  if (side.run.model_file.empty() || side.run.rung.empty() || side.architecture.empty()) {
    return bad("a recorded side names its model_file, rung and architecture");
  }
  const auto outputs = j.find("outputs");
  if (outputs == j.end() || !outputs->is_array() || outputs->empty()) return bad("\"outputs\" must list the model's outputs");
  for (const auto& o : *outputs) {
    if (!o.is_string() || o.get<std::string>().empty()) return bad("\"outputs\" must list the model's outputs by name");
    side.outputs.push_back(o.get<std::string>());
  }
  if (const auto n = j.find("input_sets"); n != j.end()) {
    const auto v = json_integer(*n, 0, 1'000'000'000);
    if (!v) return bad("\"input_sets\" must be a whole number");
    side.input_sets = static_cast<std::size_t>(*v);
  }
  return std::optional<ParityRecording>(std::move(side));
}

}  // namespace rung
