// The engine's C++ core: created once per process at launch, it never blocks (the
// probe and engine builds run in the background) and hands out sessions by model,
// pinned per job to the rung and form chosen when the job began.
//
// Internal: an application embeds the engine through the C ABI (rung/rung.h) or
// its C++ layer (rung/engine.h), both built on this. The tools (prepare, variants,
// the OCR pipeline) use it directly, for what the ABI does not carry (a variant
// resolver, the probe's own report).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "rung/hardware.h"
#include "rung/limits.h"
#include "rung/model.h"
#include "rung/probe.h"
#include "rung/result.h"
#include "rung/runtime.h"
#include "rung/tensor.h"

namespace rung::core {

struct EngineProgress {
  std::size_t total = 0;             // engines this rung needs
  std::size_t landed = 0;            // built (or found in the cache) so far
  std::string building;              // the model being built now, "" when idle
  std::vector<std::string> failures; // "ppocr_rec_v4: <reason>"
  bool done = false;
  // "Preparing engines · 3 of 6"; a failure is named ("· ppocr_rec_v4 stays on CPU: ..."); "" when done and clean.
  std::string line() const;
};

// What the engine knows at start, before the probe: enough to choose each model's file.
struct StartFacts {
  std::vector<std::string> platforms;  // recognised from the hardware, best first ("nvidia", "no-gpu-seen")
  std::vector<std::string> rungs;      // the ladder this build walks: plugins, the platform's rungs it carries, "cpu" last
  std::string runtime_version;         // "1.30.0"
};

// The facts for this hardware, build and plugin directories: what start() hands choose_models.
StartFacts start_facts(const Hardware& hardware, const RuntimeBuild& build, const std::vector<std::filesystem::path>& plugin_dirs);

// Which variant of a model the engine loads, and why.
struct ModelChoice {
  std::string variant;   // "cpu_f32"
  std::string model_id;  // what the variant computes: its name plus its numeric form
  std::string reason;    // "cpu_f32: first declared whose rung is offered here (cpu)"
};

// The probe's settings (rung/probe.h) are the engine's too: the cache directory
// holds the engine cache beside the decision, `isolate`, the worker and its memory
// limit serve engine builds as well as the probe.
struct EngineOptions : ProbeSettings {
  std::vector<ModelRegistration> models;
  // Inference pool when 0: default_inference_threads (a big.LITTLE CPU's fast cores, else
  // the physical cores minus two, at least one), no more than this process may run on.
  int inference_threads = 0;
  std::size_t tensorrt_workspace_bytes = std::size_t{512} << 20;
  std::chrono::milliseconds build_deadline{30 * 60'000};  // per engine, in its child process
  std::function<void(const EngineProgress&)> on_progress;
  // Freeing the engine stops its workers at once (a probe or a build in a child is
  // killed). Work in this process (isolate false) cannot be stopped: when true (the
  // C ABI: an application's quit is bounded) the engine waits a second for it, then
  // leaves it to end by itself, calling nothing back; when false (rung's own
  // programs, which exit right after) it waits for it to end.
  bool leave_in_process_work_on_quit = false;
  // Called once in start(), before the probe: may rewrite each model's files and
  // rungs (a model variant resolved for this device) and says what it chose. An
  // Error fails start().
  std::function<Result<std::map<std::string, ModelChoice>>(const StartFacts&, std::vector<ModelRegistration>& models)>
      choose_models;
};

class Engine;

// One input or output as the model declares it.
struct SessionIo {
  std::string name;
  ElementType type = ElementType::kFloat;
  std::vector<std::int64_t> shape;      // -1 where dynamic
  std::vector<std::string> dim_names;   // a dynamic dimension's symbolic name, "" elsewhere
};

// One model's session inside a job. Thread-safe to run.
class Session {
 public:
  virtual ~Session() = default;
  virtual const std::string& model_name() const = 0;
  virtual const std::string& model_id() const = 0;   // what it computes: name plus numeric form
  virtual const std::string& rung() const = 0;       // where it runs
  virtual const std::string& placement_reason() const = 0;  // why this rung and form
  virtual const std::vector<SessionIo>& inputs() const = 0;
  virtual const std::vector<SessionIo>& outputs() const = 0;
  // Inputs are checked by name, element type and shape before ONNX Runtime sees them.
  virtual Result<std::vector<Tensor>> run(const std::vector<Tensor>& inputs) = 0;
  // The same over lent inputs, fed in place (the C ABI's views of caller memory).
  virtual Result<std::vector<Tensor>> run_views(const std::vector<InputView>& inputs) = 0;
  // ONNX Runtime's own handles, for an application written against it (rung.h): the
  // loaded build's OrtApi table (const OrtApi*: this header names no ONNX Runtime
  // type), the API version rung holds it at, and the OrtSession built on this rung
  // and form. Valid while the session lives; the session is shared, never released.
  virtual const void* ort_api() const = 0;
  virtual std::uint32_t ort_api_version() const = 0;
  virtual void* ort_session() const = 0;
};

// A unit of work (an index run). Every session it opens stays on the rung and
// form the job began with, whatever lands meanwhile.
class Job {
 public:
  virtual ~Job() = default;
  virtual Result<Session*> session(const std::string& model_name) = 0;
  // model name -> model id of every session opened so far: a job's results carry these.
  virtual std::map<std::string, std::string> model_ids() const = 0;
  virtual const std::string& rung() const = 0;  // the rung this job was pinned to
};

class Engine {
 public:
  // Finds and loads the runtime build, starts the probe in the background and returns.
  static Result<std::shared_ptr<Engine>> start(EngineOptions options);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  std::string about_line() const;
  std::string chosen_rung() const;       // "cpu" until the probe reports
  std::string chosen_reason() const;
  bool probe_done() const;
  // Probe models the CPU floor itself could not run (a bad input spec, a tensor
  // above the limit, a missing file): each such model, and what is above the floor
  // for want of it, stays on the CPU. Empty until the probe reports.
  struct ProbeProblems {
    std::vector<std::string> model_errors;  // one line per model, naming it and the reason
    bool inputs_refused = false;            // one of them because its inputs were refused: an input error
    bool model_unloadable = false;          // one of them because the CPU cannot load the file: an input error too
    std::string settings_refused;           // the probe refused a setting the caller gave (a forced rung not on the ladder)
  };
  ProbeProblems probe_problems() const;
  EngineProgress progress() const;
  int inference_threads() const;
  const RuntimeBuild& runtime() const;
  // Per model, the variant choose_models resolved (empty without one).
  const std::map<std::string, ModelChoice>& model_choices() const;
  // The whole decision as one JSON document (schemas/engine-decision.schema.json):
  // the state, the about line, the chosen rung and why, the probe's every rung with
  // its verdict, reason and measurements, and what serves each model now with its
  // engine's state. The C ABI's rung_engine_decision_json.
  std::string decision_json() const;

  Result<std::unique_ptr<Job>> open_job();
  // Blocks until the probe has reported and every engine has landed or failed (tests, CLI).
  void wait_until_settled() const;
  // The same, for at most `timeout`: whether it settled.
  bool wait_until_settled_for(std::chrono::milliseconds timeout) const;

  struct State;

 private:
  explicit Engine(std::shared_ptr<State> state);
  std::shared_ptr<State> state_;
};

}  // namespace rung::core
