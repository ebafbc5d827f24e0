// Behaviour knobs of the simulated accelerator.
//
// Each knob `<key>` is read from the session's EP options (the options given to
// SessionOptionsAppendExecutionProvider_V2, which ONNX Runtime stores as session config entries
// "ep.rungsimaccelerator.<key>"; setting such an entry directly works too), and when that is absent from the
// environment variable RUNG_SIM_EP_<KEY upper-case>. Session knobs are read when a session creates its EP;
// the factory-stage knobs are read from the environment only, when the library is registered.
//
//   ops               comma list of claimed op types; default Add,Mul,Sub,Div,Relu,Sigmoid,Tanh,Sqrt,Abs,Neg.
//                     MatMul (two-dimensional, naive) is claimed only when named. An unknown name is an error.
//   perturb           float added to every output element of every claimed node (default 0).
//   fail_at           stage(s) that return an error status:
//                       factory         "RungSimAccelerator: simulated failure at factory creation"
//                                       (CreateEpFactories fails, so RegisterExecutionProviderLibrary does)
//                       create_ep       "... simulated failure at EP creation" (session creation fails)
//                       get_capability  "... simulated failure in GetCapability" (ONNX Runtime only logs this
//                                       and leaves the nodes to other EPs)
//                       compile         "... simulated failure at compile" (session creation fails)
//                       compute         "... simulated failure at compute" (Run fails)
//   abort_at          stage(s) that call std::abort() (same stage names).
//   hang_at           stage(s) that sleep forever (same stage names).
//   exit_at           stage(s) that call std::exit(0): a provider that ends the process it was loaded into, with
//                     a status that says all went well (same stage names).
//   grow_at           stage(s) that allocate memory without end, 64 MiB at a time, each written so the
//                     pages are real (same stage names): a provider that leaks until something stops it.
//   fork_at           stage(s) that fork a child which ignores SIGTERM, appends "fork <pid> <stage>" to trace_file and
//                     sleeps ten minutes: a provider that leaves a process behind (POSIX only).
//   compile_delay_ms  sleep at the start of each Compile call (one call compiles all of a graph's claimed nodes).
//   compute_delay_us  sleep in every compute call (once per claimed node per Run).
//   trace_file        path; "compile <Op> <fused node>", "compute <Op> <fused node>", "reuse <Op> <fused node>"
//                     (memoise), "abort <stage>" and "hang <stage>" lines are appended to it.
//   memoise           1: each compiled node keeps its last inputs and output, and when a run feeds it the same
//                     inputs (byte for byte; constant initializers cannot change, so they are not compared) it
//                     copies that output instead of computing: what it returns is what computing would. 0 (default)
//                     computes every time.
//   reject_nodes      comma list; Compile fails ("the compiler rejects node '<name>'") for a graph holding a node
//                     whose name contains one of them.
//
// Stage lists are comma separated; "none" or an empty value means no stage. Malformed values make the stage
// that reads them (factory or EP creation) fail with a message naming the knob.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "sim_ep_kernels.h"

namespace rung::sim_ep {

inline constexpr const char* kEpName = "RungSimAccelerator";
inline constexpr const char* kVendor = "rung";
inline constexpr const char* kEpVersion = "0.1.0";

// Where a simulated failure, abort or hang can be placed.
enum class Stage { Factory, CreateEp, GetCapability, Compile, Compute };
const char* stage_name(Stage stage);
// The message of the OrtStatus returned for fail_at=<stage>.
const char* stage_failure_message(Stage stage);

struct Knobs {
  std::set<OpKind> ops;          // `ops`: claimed op types
  float perturb = 0.0f;          // `perturb`: added to every output element
  std::set<Stage> fail_at;       // `fail_at`: return an error status at these stages
  std::set<Stage> abort_at;      // `abort_at`: std::abort() at these stages
  std::set<Stage> hang_at;       // `hang_at`: sleep forever at these stages
  std::set<Stage> exit_at;       // `exit_at`: std::exit(0) at these stages
  std::set<Stage> grow_at;       // `grow_at`: allocate without end at these stages
  std::set<Stage> fork_at;       // `fork_at`: leave a forked child behind at these stages
  int64_t compile_delay_ms = 0;  // `compile_delay_ms`: sleep per Compile call
  int64_t compute_delay_us = 0;  // `compute_delay_us`: sleep per compute call
  bool memoise = false;          // `memoise`: reuse a node's output when its inputs are unchanged
  std::string trace_file;        // `trace_file`: append one line per compile/compute/reuse event
  // `reject_nodes`: comma list; Compile fails for a graph holding a node whose name contains one of
  // them (a compiler that rejects one model but not another).
  std::vector<std::string> reject_nodes;
};

// Returns the value for a knob key, or nullopt when it is not set at that level.
using KnobSource = std::function<std::optional<std::string>(std::string_view key)>;

// Environment lookup: RUNG_SIM_EP_<KEY>.
std::optional<std::string> knob_from_env(std::string_view key);

// Parses every knob, looking each key up in `primary` first (may be empty) and the environment second.
// Returns an error message on a malformed value.
std::optional<std::string> parse_knobs(const KnobSource& primary, Knobs& out);

// Appends "<event> <detail>\n" to the trace file, if one is configured. Thread-safe.
void trace(const Knobs& knobs, std::string_view event, std::string_view detail);

// fork_at: a child that ignores SIGTERM and sleeps ten minutes, what a provider leaves
// behind; its process id, or 0 where there is no fork (Windows). sim_ep_fork.cpp.
long leave_a_child_behind();

// Applies abort_at / hang_at / grow_at for `stage` (never returns if one is set) and reports whether fail_at has it.
bool simulate_stage(const Knobs& knobs, Stage stage);

}  // namespace rung::sim_ep
