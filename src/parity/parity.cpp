// `rung parity`'s run: gates and inputs read first (a bad file fails before
// any model loads), then both sides started in their worker processes, their
// models checked against each other, and the inputs fed one at a time to both,
// each input's outputs compared and deleted before the next.
#include "rung/parity.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <unordered_map>

#include "core/thread_limit.h"
#include "jobs/parity_protocol.h"
#include "jobs/runner.h"
#include "os/json_input.h"
#include "rung/json_text.h"
#include "os/machine.h"
#include "os/regular_file.h"
#include "os/termination.h"
#include "os/work_dir.h"
#include "os/worker_location.h"
#include "parity/gate_file.h"
#include "parity/gates/value.h"
#include "parity/inputs.h"
#include "parity/recorded_side.h"
#include "parity/side.h"
#include "rung/limits.h"
#include "rung/rung_names.h"
#include "runtime/clean_error.h"
#include "runtime/plugin_rungs.h"
#include "runtime/resolver.h"
#include "runtime/software_gpu.h"
#include "session/placement.h"
#include "session/tensor_file.h"

namespace rung {
namespace fs = std::filesystem;
namespace {

struct Side {
  const char* role;  // "ref" or "cand"
  const ParitySide* spec;
  ResolvedRuntime runtime;
  fs::path dir;
  std::unique_ptr<StartedJob> worker;
  ModelIo io;
  std::string described;
  std::string placement;  // "RungSimAccelerator ran 212 of 418 nodes, 61% of run time", or why it is unknown
  std::optional<ParityRecording> recording;  // a stored side's side.json, when it has one
};

Error side_error(const Side& s, const std::string& message) {
  return Error{ErrorCode::kRuntime, fmt::format("{} ({}): {}", s.role, s.spec->describe(), message)};
}

Status start_side(Side& s, const JobRunner& runner, const ParityOptions& o) {
  ParityJob job;
  job.target.runtime_library = s.runtime.library;
  job.target.allow_writable_runtime = o.runtimes.allow_writable_by_others;
  job.target.model = fs::absolute(s.spec->model);
  job.target.rung = named_rung(s.spec->rung);
  job.target.threads = s.spec->threads;
  job.target.provider_options = s.spec->provider_options;
  job.outputs_dir = s.dir / "out";
  std::error_code ec;
  create_directories_unless_ending(job.outputs_dir, ec);
  auto started = runner.start({"parity", job, o.deadline, s.dir, {}, nullptr, o.worker_memory_limit_mb});
  if (!started) return started.error();
  s.worker = std::move(*started);
  return {};
}

Status await_ready(Side& s) {
  auto line = s.worker->receive();
  if (!line) return side_error(s, line.error().message);
  auto parsed = parse_json(*line);
  if (!parsed) return side_error(s, fmt::format("malformed answer from the worker: {}", parsed.error().message));
  try {
    const auto& j = *parsed;
    if (!j.at("ready").get<bool>()) {
      const std::string stage = j.at("stage");
      const char* what = stage == "runtime" ? "the ONNX Runtime build could not be used"
                         : stage == "rung"  ? "the rung is not available"
                                            : "the session could not be built";
      Error e = side_error(s, fmt::format("{}: {}", what, clean_error(j.at("error").get<std::string>())));
      // A model the CPU itself cannot load (damaged, an operator this build lacks) is an input
      // error, as in bench and probe (exit 2); a rung above the CPU that cannot build it is a result.
      const bool on_cpu = s.spec->rung.empty() || s.spec->rung == "cpu";
      if (stage != "runtime" && stage != "rung" && on_cpu) e.code = ErrorCode::kInvalidArgument;
      return e;
    }
    s.io = j.at("io").get<ModelIo>();
    const std::string rung = rung_display_name(s.spec->rung);  // "WebGPU on lavapipe (software)", "rung_sim_ep"
    s.described = fmt::format("{} · {} · ONNX Runtime {} ({}){}", s.spec->model.filename().string(), rung, j.at("version").get<std::string>(),
                              s.runtime.library.parent_path().filename().string(),
                              s.spec->threads > 0 ? fmt::format(" · {} thread{}", s.spec->threads, s.spec->threads == 1 ? "" : "s") : "");
    for (const auto& [k, v] : s.spec->provider_options) s.described += fmt::format(" · {}={}", k, v);
  } catch (const nlohmann::json::exception& e) {
    return side_error(s, fmt::format("malformed answer from the worker: {}", e.what()));
  }
  return {};
}

std::string describe_info(const TensorInfo& t) { return fmt::format("{} {}", element_type_name(t.type), shape_string(t.shape)); }

// Both sides must take and give the same tensors: same names, element types, ranks and fixed dimensions.
Status compare_io(const std::vector<TensorInfo>& ref, const std::vector<TensorInfo>& cand, const char* kind) {
  auto names = [](const std::vector<TensorInfo>& v) {
    std::vector<std::string> n;
    for (const auto& t : v) n.push_back("'" + t.name + "'");
    return fmt::format("{}", fmt::join(n, ", "));
  };
  // By name through an index: a model with many outputs costs in proportion to them.
  auto index = [](const std::vector<TensorInfo>& v) {
    std::unordered_map<std::string_view, const TensorInfo*> by_name;
    by_name.reserve(v.size());
    for (const auto& t : v) by_name.emplace(t.name, &t);
    return by_name;
  };
  const auto ref_names = index(ref), cand_names = index(cand);
  for (const auto& r : ref) {
    auto found = cand_names.find(r.name);
    const TensorInfo* it = found == cand_names.end() ? nullptr : found->second;
    if (it == nullptr) {
      return Error{ErrorCode::kInvalidArgument, fmt::format("the ref model has {} '{}', the cand model does not (its {}s: {})", kind, r.name, kind, names(cand))};
    }
    bool same = r.type == it->type && r.shape.size() == it->shape.size();
    for (std::size_t a = 0; same && a < r.shape.size(); ++a) same = r.shape[a] < 0 || it->shape[a] < 0 || r.shape[a] == it->shape[a];
    if (!same) {
      return Error{ErrorCode::kInvalidArgument, fmt::format("ref and cand disagree on {} '{}': {} vs {}", kind, r.name, describe_info(r), describe_info(*it))};
    }
  }
  for (const auto& c : cand) {
    if (ref_names.count(c.name) == 0) {
      return Error{ErrorCode::kInvalidArgument, fmt::format("the cand model has {} '{}', the ref model does not (its {}s: {})", kind, c.name, kind, names(ref))};
    }
  }
  return {};
}

// One input set's outputs: output_K.pb for the model's K-th output, read as the
// model declares it (a sequence's file is a SequenceProto).
Result<std::map<std::string, Value>> read_outputs(const fs::path& dir, const ModelIo& io) {
  std::map<std::string, Value> out;
  for (std::size_t k = 0; k < io.outputs.size(); ++k) {
    const fs::path file = dir / fmt::format("output_{}.pb", k);
    std::error_code ec;
    if (!fs::exists(file, ec)) continue;  // said as a missing output by the caller
    auto v = read_value_file(file, io.outputs[k].kind());
    if (!v) return v.error();
    v->name = io.outputs[k].name;
    adopt_bfloat16(*v, io.outputs[k].type);
    out[v->name] = std::move(*v);
  }
  return out;
}

Status await_done(Side& s, const InputItem& item) {
  auto line = s.worker->receive();
  if (!line) return side_error(s, fmt::format("on input {}: {}", item.name, line.error().message));
  auto parsed = parse_json(*line);
  if (!parsed) return side_error(s, fmt::format("malformed answer from the worker: {}", parsed.error().message));
  try {
    const auto& j = *parsed;
    if (j.contains("error")) return side_error(s, fmt::format("input {} failed to run: {}", item.name, j["error"].get<std::string>()));
  } catch (const nlohmann::json::exception& e) {
    return side_error(s, fmt::format("malformed answer from the worker: {}", e.what()));
  }
  return {};
}

// Each side's placement: one profiled run of the first input's tensors, in its worker.
Status ask_placement(Side& ref, Side& cand, const fs::path& in_dir) {
  const std::string request = json_text(nlohmann::json{{"placement", path_json(in_dir)}});
  for (Side* s : {&ref, &cand}) {
    if (!s->worker) continue;  // stored outputs: nothing runs, nothing is placed
    if (auto st = s->worker->send(request); !st) return side_error(*s, st.error().message);
  }
  for (Side* s : {&ref, &cand}) {
    if (!s->worker) {
      s->placement = "stored outputs: nothing ran";
      continue;
    }
    auto line = s->worker->receive();
    if (!line) return side_error(*s, line.error().message);
    auto parsed = parse_json(*line);
    if (!parsed) return side_error(*s, fmt::format("malformed answer from the worker: {}", parsed.error().message));
    try {
      const auto& j = *parsed;
      s->placement = j.at("placement").is_null() ? j.value("error", std::string("placement unknown"))
                                                 : j.at("placement").get<NodePlacement>().describe();
    } catch (const nlohmann::json::exception& e) {
      return side_error(*s, fmt::format("malformed answer from the worker: {}", e.what()));
    }
  }
  return {};
}

// The gate file (or the default tensor gate) and the declared preprocessing.
Result<GateFile> read_gates(const ParityOptions& o) {
  GateFile gates;
  if (!o.gate_file.empty()) {
    auto g = read_gate_file(o.gate_file);
    if (!g) return g.error();
    gates = std::move(*g);
  } else {
    gates.gates.push_back(default_tensor_gate());
  }
  if (!o.preprocess_file.empty()) {
    auto p = read_preprocess_file(o.preprocess_file, &gates.image_input);
    if (!p) return p.error();
    gates.preprocess = *p;
  }
  if (o.max_tensor_bytes) gates.inputs.max_tensor_bytes = *o.max_tensor_bytes;
  return gates;
}

Result<InputItems> list_items(const ParityOptions& o, const InputPlan& plan) {
  if (o.random > 0 && !o.inputs_dir.empty()) return Error{ErrorCode::kInvalidArgument, "give either an input directory or random inputs, not both"};
  if (o.random > 0) return InputItems::random(o.random);
  if (o.inputs_dir.empty()) return Error{ErrorCode::kInvalidArgument, "no inputs: give an input directory or a number of random inputs"};
  auto items = InputItems::listed(o.inputs_dir);
  if (!items) return items.error();
  const InputItem* image = items->first_image();
  if (image != nullptr && !plan.preprocess) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("{}: holds images ({} among them) but no preprocessing is declared: add "
                                                          "\"preprocess\" to the gate file or pass --preprocess FILE",
                                                          o.inputs_dir.string(), image->name)};
  }
  return items;
}

Status check_models(const ParityOptions& o) {
  if (o.ref.stored() && o.cand.stored()) return Error{ErrorCode::kInvalidArgument, "both sides are stored outputs: one side must run a model"};
  for (const ParitySide* s : {&o.ref, &o.cand}) {
    if (s->stored()) {
      RUNG_RETURN_IF_ERROR(check_input_directory(s->expected));
      continue;
    }
    RUNG_RETURN_IF_ERROR(check_regular_file(s->model));
  }
  return {};
}

// A plugin library a side names (rung=/path/x.so) gets the plugin policy before any worker loads it.
Status check_plugins(const ParityOptions& o) {
  for (const ParitySide* s : {&o.ref, &o.cand}) {
    const RungSpec named = named_rung(s->rung);
    if (named.plugin_library.empty()) continue;
    RUNG_RETURN_IF_ERROR(check_plugin_library(named.plugin_library, o.runtimes.allow_writable_plugins));
  }
  return {};
}

Status resolve_runtimes(const ParityOptions& o, Side& ref, Side& cand) {
  RuntimeResolver resolver(o.runtimes);
  for (Side* s : {&ref, &cand}) {
    if (s->spec->stored()) continue;
    auto rt = resolver.resolve(s->spec->runtime);
    if (!rt) return Error{rt.error().code, fmt::format("{} ({}): {}", s->role, s->spec->describe(), rt.error().message)};
    s->runtime = *rt;
  }
  return {};
}

// Both sides started and ready (a side of stored outputs starts nothing and takes
// the model's description from the other), their models agreeing on inputs and
// outputs, and every gate able to read them.
Status start_sides(const ParityOptions& o, const GateFile& gates, const JobRunner& runner, const fs::path& work, Side& ref, Side& cand) {
  ref.dir = work / "ref";
  cand.dir = work / "cand";
  for (Side* s : {&ref, &cand}) {
    if (s->spec->stored()) continue;
    RUNG_RETURN_IF_ERROR(start_side(*s, runner, o));
  }
  if (o.on_progress) o.on_progress(ref.spec->stored() || cand.spec->stored() ? "building the session" : "building both sessions");
  for (Side* s : {&ref, &cand}) {
    if (s->spec->stored()) continue;
    RUNG_RETURN_IF_ERROR(await_ready(*s));
  }
  for (Side* s : {&ref, &cand}) {
    if (!s->spec->stored()) continue;
    s->io = (s == &ref ? cand : ref).io;
    s->described = s->spec->describe();
    auto recording = read_recorded_side(s->spec->expected);
    if (!recording) return recording.error();
    if (!*recording) continue;
    s->recording = std::move(**recording);
    s->described = fmt::format("{} ({})", s->recording->describe(), s->spec->expected.string());
    // output_K.pb is the K-th output: the running model's outputs must be the recorded ones, in order.
    std::vector<std::string> names;
    for (const auto& t : s->io.outputs) names.push_back(t.name);
    if (names != s->recording->outputs) {
      return Error{ErrorCode::kInvalidArgument, fmt::format("{}: recorded outputs [{}] are not the {} model's [{}]", s->spec->expected.string(),
                                                            fmt::join(s->recording->outputs, ", "), s == &ref ? "cand" : "ref", fmt::join(names, ", "))};
    }
  }
  RUNG_RETURN_IF_ERROR(compare_io(ref.io.inputs, cand.io.inputs, "input"));
  RUNG_RETURN_IF_ERROR(compare_io(ref.io.outputs, cand.io.outputs, "output"));
  for (const auto& g : gates.gates) {
    if (auto st = g->check(ref.io); !st) {
      return Error{st.error().code, o.gate_file.empty() ? st.error().message : fmt::format("{}: {}", o.gate_file.string(), st.error().message)};
    }
  }
  return {};
}

// A side's outputs of input `i`: what its worker wrote, or what is stored for the input set.
Result<std::map<std::string, Value>> outputs_of(const Side& s, const InputItem& item, std::size_t i) {
  if (!s.spec->stored()) return read_outputs(s.dir / "out" / std::to_string(i), s.io);
  const fs::path stored = s.spec->expected / item.name;
  std::error_code ec;
  if (!fs::is_directory(stored, ec)) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("{}: holds no {}/ with the outputs of input {} (expected:DIR holds a folder "
                                                          "per input set, as an ONNX test folder does)",
                                                          s.spec->expected.string(), item.name, item.name)};
  }
  return read_outputs(stored, s.io);
}

// One input through both sides: its values written, the running sides asked to
// run them, their tensor outputs given to every gate and their sequences and
// optional values to the value gate, then every file of it deleted.
Status compare_item(const InputItem& item, std::size_t i, const InputPlan& plan, const fs::path& work, Side& ref, Side& cand,
                    GateFile& gates, ValueGate& value_gate) {
  auto values = make_item_values(item, ref.io, plan);
  if (!values) return values.error();
  const fs::path in_dir = work / "inputs" / std::to_string(i);
  std::error_code ec;
  create_directories_unless_ending(in_dir, ec);
  for (std::size_t k = 0; k < values->size(); ++k) {
    RUNG_RETURN_IF_ERROR(write_value_file((*values)[k], in_dir / fmt::format("input_{}.pb", k)));
  }
  values->clear();
  const std::string request = json_text(nlohmann::json{{"run", i}, {"inputs", path_json(in_dir)}});
  for (Side* s : {&ref, &cand}) {
    if (!s->worker) continue;
    if (auto st = s->worker->send(request); !st) return side_error(*s, st.error().message);
  }
  for (Side* s : {&ref, &cand}) {
    if (!s->worker) continue;
    RUNG_RETURN_IF_ERROR(await_done(*s, item));
  }
  if (i == 0) {
    RUNG_RETURN_IF_ERROR(ask_placement(ref, cand, in_dir));
  }
    auto ref_out = outputs_of(ref, item, i);
  if (!ref_out) return ref_out.error();
  auto cand_out = outputs_of(cand, item, i);
  if (!cand_out) return cand_out.error();
  OutputMap rm, cm;
  for (const auto& info : ref.io.outputs) {
    auto a = ref_out->find(info.name);
    auto b = cand_out->find(info.name);
    if (a == ref_out->end() || b == cand_out->end()) {
      return Error{ErrorCode::kRuntime, fmt::format("input {}: output '{}' is missing from the {}'s results", item.name, info.name,
                                                    a == ref_out->end() ? "ref" : "cand")};
    }
    if (!info.is_tensor()) continue;  // the value gate's
    if (a->second.kind != Value::Kind::kTensor || b->second.kind != Value::Kind::kTensor) {
      return Error{ErrorCode::kRuntime, fmt::format("input {}: output '{}' is not a tensor on the {}", item.name, info.name,
                                                    a->second.kind != Value::Kind::kTensor ? "ref" : "cand")};
    }
    rm[info.name] = &a->second.tensor;
    cm[info.name] = &b->second.tensor;
  }
  for (auto& g : gates.gates) {
    if (auto st = g->add(item.name, rm, cm); !st) return Error{st.error().code, fmt::format("input {}: {}", item.name, st.error().message)};
  }
  if (!value_gate.empty()) value_gate.add(item.name, *ref_out, *cand_out);
  fs::remove_all(in_dir, ec);
  fs::remove_all(ref.dir / "out" / std::to_string(i), ec);
  fs::remove_all(cand.dir / "out" / std::to_string(i), ec);
  return {};
}

// What both a comparison and a recording check before any model loads: bounds,
// the gate file (its preprocessing and input spec) and the list of inputs.
struct Prepared {
  GateFile gates;
  InputPlan plan;
  InputItems items;
};

Result<Prepared> prepare(const ParityOptions& o) {
  RUNG_RETURN_IF_ERROR(check_deadline(o.deadline, "the deadline"));
  if (o.random > kMaxRandomInputSets) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("{} random input sets is out of range: at most {}", o.random, kMaxRandomInputSets)};
  }
  for (const ParitySide* s : {&o.ref, &o.cand}) {
    RUNG_RETURN_IF_ERROR(check_thread_count(s->threads, "threads"));
  }
  // Gates and inputs first: a mistake there costs no model load.
  auto gates = read_gates(o);
  if (!gates) return gates.error();
  if (o.input_spec) {
    for (const auto& [k, v] : o.input_spec->dims) gates->inputs.dims[k] = v;
    for (const auto& [k, v] : o.input_spec->values) gates->inputs.values[k] = v;
  }
  InputPlan plan{gates->preprocess, gates->image_input, gates->inputs, o.seed};
  auto items = list_items(o, plan);
  if (!items) return items.error();
  return Prepared{std::move(*gates), std::move(plan), std::move(*items)};
}

fs::path parity_worker(const ParityOptions& o) { return find_worker(o.worker, o.runtimes.read_environment); }

Error no_worker() {
  return Error{ErrorCode::kNotFound, "the rung-probe-worker executable was not found (beside rung, in RUNG_PROBE_WORKER, or installed)"};
}

// A recording's folder for an input set: its name with anything but letters, digits,
// '.', '-' and '_' as '_' ("random 3" is random_3).
std::string recorded_set_name(const InputItem& item) {
  std::string out = item.name;
  for (char& c : out) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_';
    if (!plain) c = '_';
  }
  if (out.empty() || out == "." || out == "..") out = fmt::format("set_{}", item.index);
  return out;
}

}  // namespace

Result<ParityRecording> record_parity_side(const ParityOptions& o) {
  if (o.record_dir.empty()) return Error{ErrorCode::kInvalidArgument, "no directory to record the side into"};
  if (o.ref.stored()) return Error{ErrorCode::kInvalidArgument, "a recorded side runs a model: expected:DIR is already a recording"};
  auto prepared = prepare(o);
  if (!prepared) return prepared.error();
  auto& [gates, plan, items] = *prepared;
  RUNG_RETURN_IF_ERROR(check_regular_file(o.ref.model));
  RUNG_RETURN_IF_ERROR(check_plugins(o));
  // The recording appears whole, under its name, or not at all; nothing already there is replaced.
  std::error_code ec;
  if (fs::exists(fs::symlink_status(o.record_dir, ec))) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("{}: already there: a recording goes into a new directory (nothing was replaced)",
                                                          o.record_dir.string())};
  }
  const fs::path parent = o.record_dir.has_parent_path() ? o.record_dir.parent_path() : fs::path(".");
  if (!fs::is_directory(parent, ec)) {
    return Error{ErrorCode::kNotFound, fmt::format("{}: the directory {} does not exist", o.record_dir.string(), parent.string())};
  }

  WorkDir work;
  Side ref{"ref", &o.ref, {}, {}, nullptr, {}, {}, {}, {}}, none{"cand", &o.cand, {}, {}, nullptr, {}, {}, {}, {}};
  RuntimeResolver resolver(o.runtimes);
  auto rt = resolver.resolve(o.ref.runtime);
  if (!rt) return Error{rt.error().code, fmt::format("ref ({}): {}", o.ref.describe(), rt.error().message)};
  ref.runtime = *rt;
  const fs::path worker = parity_worker(o);
  if (worker.empty()) return no_worker();
  auto staging = WorkDir::create("." + o.record_dir.filename().string() + ".recording", parent);
  if (!staging) return staging.error();
  RUNG_RETURN_IF_ERROR(work.open(o.work_dir, "rung-parity"));
  ref.dir = work.path() / "ref";
  RUNG_RETURN_IF_ERROR(start_side(ref, JobRunner(worker), o));
  if (o.on_progress) o.on_progress("building the session");
  RUNG_RETURN_IF_ERROR(await_ready(ref));

  std::set<std::string> sets;
  for (std::size_t i = 0; i < items.size(); ++i) {
    const InputItem item = items.at(i);
    if (o.on_progress) o.on_progress(fmt::format("input {} of {}: {}", i + 1, items.size(), item.name));
    const std::string set = recorded_set_name(item);
    if (!sets.insert(set).second) {
      return Error{ErrorCode::kInvalidArgument, fmt::format("input {}: its folder in the recording, {}/, is another input's too: rename one", item.name, set)};
    }
    auto values = make_item_values(item, ref.io, plan);
    if (!values) return values.error();
    const fs::path set_dir = staging->path() / set;
    create_directories_unless_ending(set_dir, ec);
    for (std::size_t k = 0; k < values->size(); ++k) {
      RUNG_RETURN_IF_ERROR(write_value_file((*values)[k], set_dir / fmt::format("input_{}.pb", k)));
    }
    values->clear();
    if (auto st = ref.worker->send(json_text(nlohmann::json{{"run", i}, {"inputs", path_json(set_dir)}})); !st) return side_error(ref, st.error().message);
    RUNG_RETURN_IF_ERROR(await_done(ref, item));
    if (i == 0) {
      RUNG_RETURN_IF_ERROR(ask_placement(ref, none, set_dir));
    }
    const fs::path out = ref.dir / "out" / std::to_string(i);
    auto outputs = read_outputs(out, ref.io);  // each one there and readable as the model declares it
    if (!outputs) return outputs.error();
    for (std::size_t k = 0; k < ref.io.outputs.size(); ++k) {
      const std::string file = fmt::format("output_{}.pb", k);
      if (!outputs->count(ref.io.outputs[k].name)) {
        return Error{ErrorCode::kRuntime, fmt::format("input {}: output '{}' is missing from the ref's results", item.name, ref.io.outputs[k].name)};
      }
      fs::copy_file(out / file, set_dir / file, ec);
      if (ec) return Error{ErrorCode::kIo, fmt::format("{}: {}", (set_dir / file).string(), ec.message())};
    }
    fs::remove_all(out, ec);
  }
  ref.worker->finish(std::chrono::seconds(10));

  ParityRecording recording;
  recording.run = describe_side_run(o.ref, ref.runtime.version);
  recording.run.placement = ref.placement;
  recording.architecture = machine_architecture();
  recording.system = system_description();
  for (const auto& t : ref.io.outputs) recording.outputs.push_back(t.name);
  recording.input_sets = items.size();
  RUNG_RETURN_IF_ERROR(write_recorded_side(staging->path(), recording));
  RUNG_RETURN_IF_ERROR(staging->keep_as(o.record_dir));
  return recording;
}

Result<ParityReport> run_parity(const ParityOptions& o) {
  auto prepared = prepare(o);
  if (!prepared) return prepared.error();
  auto& [gates_value, plan, items_value] = *prepared;
  GateFile* gates = &gates_value;
  InputItems* items = &items_value;
  RUNG_RETURN_IF_ERROR(check_models(o));
  RUNG_RETURN_IF_ERROR(check_plugins(o));

  WorkDir work;  // declared before the sides: their workers end before it is removed
  Side ref{"ref", &o.ref, {}, {}, nullptr, {}, {}, {}, {}}, cand{"cand", &o.cand, {}, {}, nullptr, {}, {}, {}, {}};
  RUNG_RETURN_IF_ERROR(resolve_runtimes(o, ref, cand));
  const fs::path worker = parity_worker(o);
  if (worker.empty()) return no_worker();
  RUNG_RETURN_IF_ERROR(work.open(o.work_dir, "rung-parity"));
  RUNG_RETURN_IF_ERROR(start_sides(o, *gates, JobRunner(worker), work.path(), ref, cand));
  ValueGate value_gate(ref.io, Tolerance::polygraphy());
  for (auto& g : gates->gates) g->show = o.show;
  for (std::size_t i = 0; i < items->size(); ++i) {
    const InputItem item = items->at(i);
    if (o.on_progress) o.on_progress(fmt::format("input {} of {}: {}", i + 1, items->size(), item.name));
    RUNG_RETURN_IF_ERROR(compare_item(item, i, plan, work.path(), ref, cand, *gates, value_gate));
  }
  for (Side* s : {&ref, &cand}) {
    if (s->worker) s->worker->finish(std::chrono::seconds(10));
  }

  ParityReport report;
  report.ref = ref.described;
  report.cand = cand.described;
  report.ref_run = ref.recording ? ref.recording->run : describe_side_run(o.ref, ref.runtime.version);
  report.cand_run = cand.recording ? cand.recording->run : describe_side_run(o.cand, cand.runtime.version);
  if (!ref.recording) report.ref_run.placement = ref.placement;
  if (!cand.recording) report.cand_run.placement = cand.placement;
  report.inputs = items->size();
  for (const auto& g : gates->gates) report.gates.push_back(g->finish());
  if (!value_gate.empty()) report.gates.push_back(value_gate.finish());
  return report;
}

}  // namespace rung
