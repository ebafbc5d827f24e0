// `rung parity`'s run: gates and inputs read first (a bad file fails before
// any model loads), then both sides started in their worker processes, their
// models checked against each other, and the inputs fed one at a time to both,
// each input's outputs compared and deleted before the next.
#include "rung/parity.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

#include "jobs/channel.h"
#include "jobs/parity_protocol.h"
#include "os/atomic_file.h"
#include "os/work_dir.h"
#include "os/worker_location.h"
#include "parity/gate_file.h"
#include "parity/gates/value.h"
#include "parity/inputs.h"
#include "runtime/resolver.h"
#include "runtime/software_gpu.h"
#include "session/tensor_file.h"

namespace rung {
namespace fs = std::filesystem;
namespace {

struct Side {
  const char* role;  // "ref" or "cand"
  const ParitySide* spec;
  ResolvedRuntime runtime;
  fs::path dir;
  std::unique_ptr<WorkerProcess> worker;
  ModelIo io;
  std::string described;
};

Error side_error(const Side& s, const std::string& message) {
  return Error{ErrorCode::kRuntime, fmt::format("{} ({}): {}", s.role, s.spec->describe(), message)};
}

Status start_side(Side& s, const fs::path& worker, bool allow_writable) {
  std::error_code ec;
  fs::create_directories(s.dir / "out", ec);
  ParityJob job;
  job.runtime_library = s.runtime.library;
  job.allow_writable_runtime = allow_writable;
  job.model = fs::absolute(s.spec->model);
  job.rung = s.spec->rung;
  job.threads = s.spec->threads;
  job.provider_options = s.spec->provider_options;
  job.outputs_dir = s.dir / "out";
  job.channel_fd = kParityChannelFd;
  if (auto w = write_file_atomically(s.dir / "job.json", parity_job_to_json(job)); !w) return w.error();
  auto started = WorkerProcess::start(worker, s.dir / "job.json", s.dir / "worker.log");
  if (!started) return started.error();
  s.worker = std::move(*started);
  return {};
}

Status await_ready(Side& s, std::chrono::milliseconds deadline) {
  auto line = s.worker->receive(deadline);
  if (!line) return side_error(s, line.error().message);
  try {
    const auto j = nlohmann::json::parse(*line);
    if (!j.at("ready").get<bool>()) {
      const std::string stage = j.at("stage");
      const char* what = stage == "runtime" ? "the ONNX Runtime build could not be used"
                         : stage == "rung"  ? "the rung is not available"
                                            : "the session could not be built";
      return side_error(s, fmt::format("{}: {}", what, j.at("error").get<std::string>()));
    }
    s.io = model_io_from_json(j.at("io"));
    std::string rung = j.at("rung");
    if (const RungSpec* spec = find_rung(s.spec->rung)) rung = adapter_display(*spec);  // "WebGPU on lavapipe (software)"
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
  for (const auto& r : ref) {
    auto it = std::find_if(cand.begin(), cand.end(), [&](const TensorInfo& c) { return c.name == r.name; });
    if (it == cand.end()) {
      return Error{ErrorCode::kInvalidArgument, fmt::format("the ref model has {} '{}', the cand model does not (its {}s: {})", kind, r.name, kind, names(cand))};
    }
    bool same = r.type == it->type && r.shape.size() == it->shape.size();
    for (std::size_t a = 0; same && a < r.shape.size(); ++a) same = r.shape[a] < 0 || it->shape[a] < 0 || r.shape[a] == it->shape[a];
    if (!same) {
      return Error{ErrorCode::kInvalidArgument, fmt::format("ref and cand disagree on {} '{}': {} vs {}", kind, r.name, describe_info(r), describe_info(*it))};
    }
  }
  for (const auto& c : cand) {
    if (std::none_of(ref.begin(), ref.end(), [&](const TensorInfo& r) { return r.name == c.name; })) {
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

Status await_done(Side& s, const InputItem& item, std::chrono::milliseconds deadline) {
  auto line = s.worker->receive(deadline);
  if (!line) return side_error(s, fmt::format("on input {}: {}", item.name, line.error().message));
  try {
    const auto j = nlohmann::json::parse(*line);
    if (j.contains("error")) return side_error(s, fmt::format("input {} failed to run: {}", item.name, j["error"].get<std::string>()));
  } catch (const nlohmann::json::exception& e) {
    return side_error(s, fmt::format("malformed answer from the worker: {}", e.what()));
  }
  return {};
}

}  // namespace

Result<ParityReport> run_parity(const ParityOptions& o) {
  // Gates and inputs first: a mistake there costs no model load.
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
  const InputPlan plan{gates.preprocess, gates.image_input, gates.inputs, o.seed};
  std::vector<InputItem> items;
  if (o.random > 0 && !o.inputs_dir.empty()) return Error{ErrorCode::kInvalidArgument, "give either an input directory or random inputs, not both"};
  if (o.random > 0) {
    items = random_items(o.random);
  } else if (o.inputs_dir.empty()) {
    return Error{ErrorCode::kInvalidArgument, "no inputs: give an input directory or a number of random inputs"};
  } else {
    auto listed = list_input_items(o.inputs_dir);
    if (!listed) return listed.error();
    items = std::move(*listed);
    const auto image = std::find_if(items.begin(), items.end(), [](const InputItem& i) { return i.kind == InputItem::Kind::kImage; });
    if (image != items.end() && !plan.preprocess) {
      return Error{ErrorCode::kInvalidArgument, fmt::format("{}: holds images ({} among them) but no preprocessing is declared: add "
                                                            "\"preprocess\" to the gate file or pass --preprocess FILE",
                                                            o.inputs_dir.string(), image->name)};
    }
  }
  if (o.ref.stored() && o.cand.stored()) return Error{ErrorCode::kInvalidArgument, "both sides are stored outputs: one side must run a model"};
  for (const ParitySide* s : {&o.ref, &o.cand}) {
    std::error_code ec;
    if (s->stored() && !fs::is_directory(s->expected, ec)) {
      return Error{ErrorCode::kNotFound, fmt::format("{}: the directory of stored outputs is not there", s->expected.string())};
    }
    if (!s->stored() && !fs::is_regular_file(s->model, ec)) {
      return Error{ErrorCode::kNotFound, fmt::format("{}: the model file is not there", s->model.string())};
    }
  }

  WorkDir work;  // declared before the sides: their workers end before it is removed
  RuntimeResolver resolver(o.runtimes);
  Side ref{"ref", &o.ref, {}, {}, nullptr, {}, {}}, cand{"cand", &o.cand, {}, {}, nullptr, {}, {}};
  for (Side* s : {&ref, &cand}) {
    if (s->spec->stored()) continue;
    auto rt = resolver.resolve(s->spec->runtime);
    if (!rt) return Error{rt.error().code, fmt::format("{} ({}): {}", s->role, s->spec->describe(), rt.error().message)};
    s->runtime = *rt;
  }
  const fs::path worker = find_worker(o.worker);
  if (worker.empty()) {
    return Error{ErrorCode::kNotFound, "the rung-probe-worker executable was not found (beside rung, in RUNG_PROBE_WORKER, or installed)"};
  }
  if (auto st = work.open(o.work_dir, "rung-parity"); !st) return st.error();
  ref.dir = work.path() / "ref";
  cand.dir = work.path() / "cand";
  for (Side* s : {&ref, &cand}) {
    if (s->spec->stored()) continue;
    if (auto st = start_side(*s, worker, o.runtimes.allow_writable_by_others); !st) return st.error();
  }
  if (o.on_progress) o.on_progress(ref.spec->stored() || cand.spec->stored() ? "building the session" : "building both sessions");
  for (Side* s : {&ref, &cand}) {
    if (s->spec->stored()) continue;
    if (auto st = await_ready(*s, o.deadline); !st) return st.error();
  }
  // Stored outputs take the model's description from the side that runs it.
  for (Side* s : {&ref, &cand}) {
    if (!s->spec->stored()) continue;
    s->io = (s == &ref ? cand : ref).io;
    s->described = s->spec->describe();
  }
  if (auto st = compare_io(ref.io.inputs, cand.io.inputs, "input"); !st) return st.error();
  if (auto st = compare_io(ref.io.outputs, cand.io.outputs, "output"); !st) return st.error();
  const ModelIo& model_io = ref.io;
  ValueGate value_gate(model_io, ValueGate::default_tolerance());
  for (auto& g : gates.gates) {
    if (auto st = g->check(ref.io); !st) {
      return Error{st.error().code, o.gate_file.empty() ? st.error().message : fmt::format("{}: {}", o.gate_file.string(), st.error().message)};
    }
  }

  for (std::size_t i = 0; i < items.size(); ++i) {
    const InputItem& item = items[i];
    if (o.on_progress) o.on_progress(fmt::format("input {} of {}: {}", i + 1, items.size(), item.name));
    auto values = make_item_values(item, model_io, plan);
    if (!values) return values.error();
    const fs::path in_dir = work.path() / "inputs" / std::to_string(i);
    std::error_code ec;
    fs::create_directories(in_dir, ec);
    for (std::size_t k = 0; k < values->size(); ++k) {
      if (auto st = write_value_file((*values)[k], in_dir / fmt::format("input_{}.pb", k)); !st) return st.error();
    }
    values->clear();
    const std::string request = nlohmann::json{{"run", i}, {"inputs", in_dir.string()}}.dump();
    for (Side* s : {&ref, &cand}) {
      if (!s->worker) continue;
      if (auto st = s->worker->send(request); !st) return side_error(*s, st.error().message);
    }
    for (Side* s : {&ref, &cand}) {
      if (!s->worker) continue;
      if (auto st = await_done(*s, item, o.deadline); !st) return st.error();
    }
    auto outputs_of = [&](const Side& s) {
      if (!s.spec->stored()) return read_outputs(s.dir / "out" / std::to_string(i), model_io);
      const fs::path stored = s.spec->expected / item.name;
      if (!fs::is_directory(stored, ec)) {
        return Result<std::map<std::string, Value>>(Error{ErrorCode::kInvalidArgument, fmt::format(
            "{}: holds no {}/ with the outputs of input {} (expected:DIR holds a folder per input set, as an ONNX test folder does)",
            s.spec->expected.string(), item.name, item.name)});
      }
      return read_outputs(stored, model_io);
    };
    auto ref_out = outputs_of(ref);
    if (!ref_out) return ref_out.error();
    auto cand_out = outputs_of(cand);
    if (!cand_out) return cand_out.error();
    OutputMap rm, cm;
    for (const auto& info : model_io.outputs) {
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
  }
  for (Side* s : {&ref, &cand}) {
    if (s->worker) s->worker->finish(std::chrono::seconds(10));
  }

  ParityReport report;
  report.ref = ref.described;
  report.cand = cand.described;
  report.inputs = items.size();
  for (const auto& g : gates.gates) report.gates.push_back(g->finish());
  if (!value_gate.empty()) report.gates.push_back(value_gate.finish());
  return report;
}

}  // namespace rung
