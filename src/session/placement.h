// Where a model actually ran: which provider ran how many nodes and what share
// of the kernel time, read from ONNX Runtime's own profile of one run. The one
// reader the probe, bench and parity use. The profile, not
// Session_GetEpGraphAssignmentInfo: in ONNX Runtime 1.30 that under-reported
// WebGPU (5 of 419 nodes where the profile and the verbose log show 380).
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "rung/result.h"
#include "rung/tensor.h"

namespace rung {

class OrtProcess;        // session/session.h: kept out of this header, which job results include
struct SessionSettings;
struct PreparedSession;

inline constexpr const char* kCpuProvider = "CPUExecutionProvider";

struct ProviderShare {
  std::string provider;   // "CPUExecutionProvider", "RungSimAccelerator", "WebGpuExecutionProvider"
  int nodes = 0;          // distinct nodes it ran
  double kernel_us = 0;   // their kernel time in the profiled run
};

// Kernel time by op type and the element type of the first data input, as the
// profile names them ("QLinearConv" on "uint8", "Mul" on "float"): where a
// quantised graph spends its time, conversions and float islands included.
struct OpTime {
  std::string op;
  std::string input_type;  // "float", "uint8", "int8", ...; "" when the profile does not say
  int nodes = 0;
  double kernel_us = 0;
};

struct NodePlacement {
  std::vector<ProviderShare> providers;  // most nodes first
  std::vector<OpTime> ops;               // most time first; read in-process only (job and cache files keep the providers)
  bool known = false;                    // false: no profile was read (the figures below are then 0)

  int total_nodes() const;
  // Nodes, and share of kernel time, run by any provider but the CPU's: the rung's own.
  int accelerated_nodes() const;
  double accelerated_node_share() const;  // 0..1
  double accelerated_time_share() const;  // 0..1
  std::string accelerated_provider() const;  // the non-CPU provider that ran the most nodes; "" when none did
  // What a rung itself ran: for the CPU rung the CPU provider's nodes and share of
  // kernel time, for any other rung the accelerated ones. The floor's row shows
  // what ran on it ("235/235 100%"), not the accelerators it has none of.
  int rung_nodes(bool cpu_rung) const { return cpu_rung ? total_nodes() - accelerated_nodes() : accelerated_nodes(); }
  double rung_time_share(bool cpu_rung) const;
  // "RungSimAccelerator ran 212 of 418 nodes, 61% of run time"; for the CPU rung "CPUExecutionProvider ran 395 of 395 nodes".
  std::string describe() const;
  // Every provider: "RungSimAccelerator ran 212 nodes (61% of run time), CPUExecutionProvider ran 206 nodes (39%)".
  std::string describe_all() const;
};

void to_json(nlohmann::json& j, const ProviderShare& s);
void from_json(const nlohmann::json& j, ProviderShare& s);
void to_json(nlohmann::json& j, const NodePlacement& p);
void from_json(const nlohmann::json& j, NodePlacement& p);

// Reads a profile file ONNX Runtime wrote (its "Node" events: <node>_kernel_time,
// args.provider, dur). An unreadable or foreign file gives an unknown placement.
NodePlacement read_profile_placement(const std::filesystem::path& profile);
// The same over several profiles of one session (one per profiled run): nodes
// counted once, times summed. Known when any of them could be read.
NodePlacement read_profile_placement(const std::vector<std::filesystem::path>& profiles);

// Builds a profiled session of `model` with `settings`, runs `inputs` `runs`
// times and reads the profile it wrote under `dir`; times are per run (the
// mean). The timing sessions pay nothing for it.
Result<NodePlacement> profile_placement(OrtProcess& process, const std::filesystem::path& model, const SessionSettings& settings,
                                    const std::vector<Tensor>& inputs, const std::filesystem::path& dir, int runs = 1);
// The same from `runs` more runs of a session already built, after its timed
// runs: where the runtime profiles a run alone (runs_profile_alone()), the
// model is not built a second time (a model with 10 000 outputs takes ONNX
// Runtime seconds to build); elsewhere a profiled session of `model` as above.
Result<NodePlacement> profile_placement(OrtProcess& process, PreparedSession& built, const std::filesystem::path& model,
                                        const SessionSettings& settings, const std::vector<Tensor>& inputs,
                                        const std::filesystem::path& dir, int runs = 1);

}  // namespace rung
