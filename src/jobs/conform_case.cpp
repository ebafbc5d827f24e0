#include "jobs/conform_case.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <optional>

#include "jobs/target_session.h"
#include "rung/directory.h"
#include "runtime/clean_error.h"
#include "session/placement.h"
#include "session/tensor_file.h"
#include "rung/path_text.h"

namespace rung {
namespace fs = std::filesystem;
namespace {

constexpr const char* kOutcomeNames[] = {"pass", "mismatch", "not placed", "runtime refused", "rung cannot feed it",
                                         "timed out", "crashed", "skipped"};

// "input_12.pb" -> 12; "test_data_set_3" -> 3: files and folders in numeric order.
std::optional<std::size_t> number_after(const std::string& name, const std::string& prefix) {
  if (!name.starts_with(prefix)) return std::nullopt;
  std::size_t n = 0, i = prefix.size();
  if (i >= name.size() || !std::isdigit(static_cast<unsigned char>(name[i]))) return std::nullopt;
  for (; i < name.size() && std::isdigit(static_cast<unsigned char>(name[i])); ++i) n = n * 10 + static_cast<std::size_t>(name[i] - '0');
  return n;
}

// The entries of `dir` named PREFIX<N><suffix>, by N.
std::vector<std::pair<std::size_t, fs::path>> numbered(const fs::path& dir, const std::string& prefix, const std::string& suffix) {
  std::vector<std::pair<std::size_t, fs::path>> out;
  auto entries = list_directory(dir);
  if (!entries) return out;
  for (const auto& e : *entries) {
    const std::string name = e.filename().string();
    if (!name.ends_with(suffix)) continue;
    if (auto n = number_after(name, prefix)) out.emplace_back(*n, e);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Reads input_K.pb as the model's K-th input declares it; a file naming another input goes there.
Result<std::vector<Value>> read_inputs(const fs::path& set, const ModelIo& io) {
  std::vector<Value> inputs;
  for (const auto& [k, file] : numbered(set, "input_", ".pb")) {
    if (k >= io.inputs.size()) {
      return Error{ErrorCode::kInvalidArgument, fmt::format("{}: the model has {} inputs", file.string(), io.inputs.size())};
    }
    const TensorInfo& info = io.inputs[k];
    if (!info.other.empty()) {
      return Error{ErrorCode::kUnsupported, fmt::format("input '{}' is a {}, which rung does not feed", info.name, info.other)};
    }
    auto v = read_value_file(file, info.kind());
    if (!v) return v.error();
    adopt_bfloat16(*v, info.type);
    const bool named = std::any_of(io.inputs.begin(), io.inputs.end(), [&](const TensorInfo& i) { return i.name == v->name; });
    if (!named) v->name = info.name;
    if (v->kind == Value::Kind::kTensor) v->tensor.name = v->name;
    inputs.push_back(std::move(*v));
  }
  return inputs;
}

struct SetComparison {
  std::string problem;  // the first mismatch; empty when every output matched
  double max_abs = 0, max_rel = 0;
};

Result<SetComparison> compare_set(const fs::path& set, const ModelIo& io, const std::vector<Value>& outputs, const Tolerance& tolerance) {
  SetComparison c;
  for (const auto& [k, file] : numbered(set, "output_", ".pb")) {
    if (k >= io.outputs.size() || k >= outputs.size()) {
      return Error{ErrorCode::kInvalidArgument, fmt::format("{}: the model has {} outputs", file.string(), io.outputs.size())};
    }
    auto expected = read_value_file(file, io.outputs[k].kind());
    if (!expected) return expected.error();
    expected->name = io.outputs[k].name;
    adopt_bfloat16(*expected, io.outputs[k].type);
    const ValueComparison cmp = compare_values(*expected, outputs[k], tolerance);
    for (const auto& t : cmp.tensors) {
      c.max_abs = std::max(c.max_abs, t.max_abs);
      c.max_rel = std::max(c.max_rel, t.max_rel);
    }
    if (!cmp.faithful() && c.problem.empty()) c.problem = cmp.first_problem();
  }
  return c;
}

std::string placement_text(const std::vector<std::pair<std::string, int>>& nodes) {
  std::vector<std::string> parts;
  for (const auto& [p, n] : nodes) parts.push_back(fmt::format("{} ran {} node{}", p, n, n == 1 ? "" : "s"));
  return parts.empty() ? "ONNX Runtime's profile names no node" : fmt::format("{}", fmt::join(parts, ", "));
}

// Ends the profiler, reads where nodes ran, removes the file.
std::vector<std::pair<std::string, int>> end_profile(Ort::Session& session) {
  try {
    Ort::AllocatorWithDefaultOptions alloc;
    const fs::path written = path_from_utf8(session.EndProfilingAllocated(alloc).get());
    std::vector<std::pair<std::string, int>> nodes;
    for (const auto& p : read_profile_placement(written).providers) nodes.emplace_back(p.provider, p.nodes);
    std::error_code ec;
    fs::remove(written, ec);
    return nodes;
  } catch (const Ort::Exception&) {
    return {};
  }
}

}  // namespace

const char* conform_outcome_name(ConformOutcome outcome) { return kOutcomeNames[static_cast<int>(outcome)]; }

ConformOutcome conform_outcome_from_name(const std::string& name) {
  for (auto o : kConformOutcomes) {
    if (name == conform_outcome_name(o)) return o;
  }
  return ConformOutcome::kSkipped;
}

ConformCaseResult run_conform_case(OrtProcess& process, const ConformJob& job, const fs::path& test_dir) {
  ConformCaseResult r;
  const auto t0 = std::chrono::steady_clock::now();
  auto finish = [&](ConformOutcome outcome, std::string reason) {
    r.outcome = outcome;
    r.reason = std::move(reason);
    r.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return r;
  };
  const auto sets = numbered(test_dir, "test_data_set_", "");
  if (sets.empty()) return finish(ConformOutcome::kSkipped, "no test_data_set_N folder");

  SessionSettings s = session_settings(job.target);
  s.profile_prefix = job.profile_dir / "run";
  auto session = open_session(process, test_dir / "model.onnx", s);
  if (!session) return finish(ConformOutcome::kRuntimeRefused, clean_error(session.error().message));
  auto prepared = prepare_session(std::move(*session));
  if (!prepared) return finish(ConformOutcome::kRuntimeRefused, clean_error(prepared.error().message));

  SetComparison worst;
  std::string mismatch;
  for (const auto& [n, set] : sets) {
    auto inputs = read_inputs(set, prepared->io);
    if (!inputs) {
      end_profile(prepared->session);
      return finish(ConformOutcome::kCannotFeed, inputs.error().message);
    }
    auto outputs = run_session_values(*prepared, *inputs);
    if (!outputs) {
      end_profile(prepared->session);
      const bool ort = outputs.error().code == ErrorCode::kRuntime;
      return finish(ort ? ConformOutcome::kRuntimeRefused : ConformOutcome::kCannotFeed,
                    ort ? clean_error(outputs.error().message) : outputs.error().message);
    }
    ++r.data_sets;
    auto cmp = compare_set(set, prepared->io, *outputs, job.tolerance);
    if (!cmp) {
      end_profile(prepared->session);
      return finish(ConformOutcome::kCannotFeed, cmp.error().message);
    }
    worst.max_abs = std::max(worst.max_abs, cmp->max_abs);
    worst.max_rel = std::max(worst.max_rel, cmp->max_rel);
    if (!cmp->problem.empty() && mismatch.empty()) mismatch = fmt::format("{}: {}", set.filename().string(), cmp->problem);
  }
  r.max_abs = worst.max_abs;
  r.max_rel = worst.max_rel;
  r.nodes_by_provider = end_profile(prepared->session);

  const std::string placement = placement_text(r.nodes_by_provider);
  if (!is_cpu_floor(job.target.rung)) {
    const bool ran = std::any_of(r.nodes_by_provider.begin(), r.nodes_by_provider.end(),
                                 [&](const auto& p) { return p.first == job.target.rung.provider && p.second > 0; });
    // Its figures are the CPU's: whether they match says nothing of the provider.
    if (!ran) {
      return finish(ConformOutcome::kNotPlaced, fmt::format("{} ran none: {}{}", job.target.rung.provider, placement,
                                                            mismatch.empty() ? "" : "; the outputs also differ: " + mismatch));
    }
  }
  if (!mismatch.empty()) {
    return finish(ConformOutcome::kMismatch, fmt::format("{} (largest error: abs {:.3g}, rel {:.3g})", mismatch, r.max_abs, r.max_rel));
  }
  return finish(ConformOutcome::kPass, placement);
}

}  // namespace rung
