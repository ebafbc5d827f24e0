#include "rung/option_table.h"

#include <fmt/format.h>

#include <chrono>

#include "rung/cpus.h"
#include "rung/limits.h"

namespace rung {
namespace {

constexpr double kDayMs = std::chrono::duration_cast<std::chrono::milliseconds>(kMaxDeadline).count();
constexpr double kMinDeadlineMs = std::chrono::duration_cast<std::chrono::milliseconds>(kMinDeadline).count();
using K = OptionKind;

constexpr OptionRow kRows[] = {
    {"cache_dir", K::kPath, 0, 0, "", "", "required", "the probe's cache and the engine cache"},
    {"plugin_dir", K::kPathEach, 0, 0, "", "", "none", "a directory of plugin execution providers; each call adds one"},
    {"runtime_dir", K::kPath, 0, 0, "", "", "none", "where to look first for an ONNX Runtime build"},
    {"runtime_default_locations", K::kFlag, 0, 0, "", "", "true",
     "also search the kit the library was loaded from: runtimes/*/ beside librung_engine, then the kit's share/rung/runtimes/*/"},
    {"environment", K::kFlag, 0, 0, "", "", "false", "read rung's environment variables"},
    {"runtime_environment", K::kFlag, 0, 0, "", "", "false", "the same switch as environment, by its first name"},
    {"worker", K::kPath, 0, 0, "", "", "beside the library, in the kit's libexec", "the rung-probe-worker executable"},
    {"isolate", K::kFlag, 0, 0, "", "", "true", "probe and engine builds in child processes"},
    {"forced_rung", K::kText, 0, 0, "", "", "none", "a rung id such as cpu or rung_sim_ep, which the probe must take"},
    {"inference_threads", K::kWhole, 0, kUsableCpus, "threads", "a big.LITTLE CPU's fast cores, else the physical cores minus two",
     "0", "ONNX Runtime's intra-op threads for inference"},
    {"probe_runs", K::kWhole, 1, 1000, "runs", "", "3", "timed runs per rung after one untimed run"},
    {"acceptance_ratio", K::kReal, kMinAcceptanceRatio, kMaxAcceptanceRatio, "times the floor's time", "", "1",
     "take a rung whose time is surely below the floor's times this"},
    {"probe_deadline_ms", K::kWhole, kMinDeadlineMs, kDayMs, "milliseconds", "", "180000",
     "the time each rung may take per model in the probe before its worker is killed"},
    {"build_deadline_ms", K::kWhole, kMinDeadlineMs, kDayMs, "milliseconds", "", "1800000",
     "the time each engine's build may take before its worker is killed"},
    {"worker_memory_mb", K::kWhole, 0, static_cast<double>(kMaxWorkerMemoryMib), "MiB", "no limit",
     "half the machine's memory, at least 2048", "the most data a worker may hold"},
    {"hardware_root", K::kPath, 0, 0, "", "", "/", "the root the hardware is read from (tests)"},
    {"tensorrt_workspace_mb", K::kWhole, 1, 1 << 20, "MiB", "", "512", "TensorRT's workspace"},
    {"variant_manifest", K::kPath, 0, 0, "", "", "none", "a variant manifest: its groups are the models"},
    {"deployment", K::kPath, 0, 0, "", "", "every rung the device offers", "the rungs the application provisions"},
    {"manifest_variable.NAME", K::kAnyText, 0, 0, "", "", "none", "what ${NAME} stands for in the manifest's paths"},
    {"model.NAME.input_spec", K::kPath, 0, 0, "", "", "none", "a JSON input spec file for the probe"},
    {"model.NAME.form.FORM", K::kPath, 0, 0, "", "", "none", "a derived file for the model: i8, f16, a16w8, a16w16, w8"},
};

// Whether `key` is of the family `pattern` ("model.NAME.input_spec"): NAME and FORM stand for any non-empty text.
bool of_family(std::string_view pattern, std::string_view key) {
  const auto name = pattern.find("NAME");
  if (name == std::string_view::npos) return pattern == key;
  const std::string_view head = pattern.substr(0, name);
  const std::string_view tail = pattern.substr(name + 4);
  if (key.size() <= head.size() || key.substr(0, head.size()) != head) return false;
  if (const auto form = tail.find("FORM"); form != std::string_view::npos) {
    const std::string_view middle = tail.substr(0, form);  // ".form.": a NAME before it, a FORM after
    const auto at = key.rfind(middle);
    return at != std::string_view::npos && at > head.size() && at + middle.size() < key.size();
  }
  return key.size() > head.size() + tail.size() && key.substr(key.size() - tail.size()) == tail;
}

std::string number(double v) { return fmt::format("{}", v); }

}  // namespace

std::span<const OptionRow> option_table() { return kRows; }

const OptionRow* find_option(std::string_view key) {
  for (const auto& row : kRows) {
    if (of_family(row.key, key)) return &row;
  }
  return nullptr;
}

double option_hi(const OptionRow& row) { return row.hi == kUsableCpus ? usable_cpus() : row.hi; }

std::string option_range_why(const OptionRow& row) {
  std::string why = row.zero.empty() || row.lo != 0 ? std::string() : fmt::format("0: {}", row.zero);
  if (row.hi == kUsableCpus) {
    const int cpus = usable_cpus();
    why += fmt::format("{}this machine gives rung {} logical CPU{}", why.empty() ? "" : "; ", cpus, cpus == 1 ? "" : "s");
  }
  return why;
}

std::string option_range_text(const OptionRow& row) {
  if (row.kind != OptionKind::kWhole && row.kind != OptionKind::kReal) return {};
  const std::string lo = row.lo == 0 && !row.zero.empty() ? fmt::format("0 ({})", row.zero) : number(row.lo);
  if (row.hi == kUsableCpus) return fmt::format("{} to the CPUs this process may use", lo);
  return fmt::format("{} to {}{}{}", lo, number(row.hi), row.unit.empty() ? "" : " ", row.unit);
}

}  // namespace rung
