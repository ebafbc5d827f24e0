#include "quantise/proof.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "os/atomic_file.h"
#include "os/json_input.h"
#include "rung/json_text.h"
#include "os/termination.h"

namespace rung {
namespace fs = std::filesystem;
namespace {

// The proof's gate file: the model's preprocessing and input values, and the tensor gate alone.
Result<fs::path> write_proof_gate(const ProofInputs& in, const Tolerance& t, const fs::path& dir) {
  nlohmann::json j = nlohmann::json::object();
  if (!in.gate_file.empty()) {
    auto read = read_json_file(in.gate_file, FileKind::kDocument);
    if (!read) return read.error();
    j = std::move(*read);
    if (!j.is_object()) return Error{ErrorCode::kInvalidArgument, fmt::format("{}: not a JSON object", in.gate_file.string())};
    j.erase("gates");
  }
  j["model"] = "the rewritten graph against the original: every output within Tolerance::close()";
  j["gates"] = {{{"decoder", "tensor"}, {"atol", t.atol}, {"rtol", t.rtol}}};
  const fs::path path = dir / "proof.gate.json";
  RUNG_RETURN_IF_ERROR(write_file_atomically(path, json_text(j, 2)));
  return path;
}

std::string first_failing_output(const GateOutcome& g) {
  const auto j = parse_json_or_discarded(g.stats_json);
  if (!j.is_object() || !j.contains("outputs") || !j["outputs"].is_array()) return "";
  for (const auto& o : j["outputs"]) {
    const auto count = [&o](const char* key) { return o.is_object() && o.contains(key) ? json_integer(o[key], 0, INT64_MAX).value_or(0) : 0; };
    if (count("inputs_passed") < count("inputs")) return json_string_or(o, "output", "");
  }
  return "";
}

}  // namespace

Result<Proof> prove_same_computation(const fs::path& original, const fs::path& rewritten, const ProofInputs& in, const ProofSides& sides,
                                     const fs::path& work_dir) {
  Proof proof;
  std::error_code ec;
  create_directories_unless_ending(work_dir, ec);
  auto gate = write_proof_gate(in, proof.tolerance, work_dir);
  if (!gate) return gate.error();
  ParityOptions o;
  o.ref.model = original;
  o.cand.model = rewritten;
  o.ref.runtime = o.cand.runtime = sides.runtime_library.string();
  o.inputs_dir = in.dir;
  o.random = in.random;
  o.seed = in.seed;
  o.gate_file = *gate;
  o.preprocess_file = in.preprocess_file;
  o.worker = sides.worker;
  o.work_dir = work_dir / "parity";
  o.deadline = sides.deadline;
  auto report = run_parity(o);
  if (!report) return report.error();
  proof.parity = std::move(*report);
  proof.proven = proof.parity.passed();
  if (!proof.proven && !proof.parity.gates.empty()) proof.failing_output = first_failing_output(proof.parity.gates.front());
  if (proof.proven || !in.decisions_may_vouch || in.gate_file.empty()) return proof;
  // Folds round differently through a deep network: a few elements past close() on a few inputs. The
  // model's own decision gates then judge, on the same inputs, whether it still decides the same.
  o.gate_file = in.gate_file;
  o.work_dir = work_dir / "decisions";
  auto decided = run_parity(o);
  if (!decided) return decided.error();
  proof.decisions = std::move(*decided);
  proof.proven = proof.decisions->passed();
  return proof;
}

}  // namespace rung
