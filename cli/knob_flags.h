// The command line's face of each engine knob in rung/option_table.h: the flag
// of `rung probe` or `rung prepare` for the same knob ("" where the command line
// has none), how many of the key's units one of the flag's is (a deadline's
// key counts milliseconds, its flag seconds), and the environment variable the
// command line reads for it. Here, not in the table: the engine library never
// names a flag (ctest abi.engine_names_no_command_line_flag reads it). One entry
// per row of the table, held to it by OptionTableTest.
#pragma once

#include <string_view>

namespace rung::cli {

struct KnobFlag {
  std::string_view key;
  std::string_view flag;
  double per_unit = 1;
  std::string_view variable;
};

inline constexpr KnobFlag kKnobFlags[] = {
    {"cache_dir", "--cache-dir", 1, ""},
    {"plugin_dir", "--plugin-dir", 1, "RUNG_PLUGIN_DIR"},
    {"runtime_dir", "--ort-dir", 1, "RUNG_ORT_DIR"},
    {"runtime_default_locations", "", 1, ""},
    {"environment", "", 1, ""},
    {"runtime_environment", "", 1, ""},
    {"worker", "", 1, "RUNG_PROBE_WORKER"},
    {"isolate", "--in-process", 1, ""},  // its opposite
    {"forced_rung", "--use-rung", 1, "RUNG_FORCE_RUNG"},
    {"inference_threads", "--threads", 1, ""},
    {"probe_runs", "--runs", 1, ""},
    {"acceptance_ratio", "--accept-ratio", 1, ""},
    {"probe_deadline_ms", "--deadline", 1000, ""},
    {"build_deadline_ms", "--build-deadline", 1000, ""},
    {"worker_memory_mb", "--worker-memory-mb", 1, ""},
    {"hardware_root", "--hardware-root", 1, ""},
    {"tensorrt_workspace_mb", "", 1, ""},
    {"variant_manifest", "--variants", 1, ""},
    {"deployment", "--deployment", 1, ""},
    {"manifest_variable.NAME", "", 1, "NAME"},  // the environment's NAME itself
    {"model.NAME.input_spec", "--input-spec", 1, ""},
    {"model.NAME.form.FORM", "", 1, ""},
};

inline const KnobFlag* knob_flag(std::string_view key) {
  for (const auto& f : kKnobFlags) {
    if (f.key == key) return &f;
  }
  return nullptr;
}

}  // namespace rung::cli
