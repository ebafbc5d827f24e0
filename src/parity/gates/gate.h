// One gate of `rung parity`: fed both sides' outputs input by input, it keeps
// what it needs (counts, a few numbers) and answers pass or fail at the end.
#pragma once

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "os/json_input.h"
#include "rung/parity.h"
#include "rung/result.h"
#include "rung/tensor.h"
#include "session/model_io.h"

namespace rung {

using OutputMap = std::map<std::string, const Tensor*>;

class ParityGate {
 public:
  virtual ~ParityGate() = default;
  virtual std::vector<std::string> outputs() const = 0;
  // Checks the gate against the model's outputs before any input runs.
  virtual Status check(const ModelIo& io) = 0;
  // One input's outputs, ref and cand. An Error is a usage problem (an output
  // the decoder cannot read); a difference between the sides never is.
  virtual Status add(const std::string& input, const OutputMap& ref, const OutputMap& cand) = 0;
  virtual GateOutcome finish() const = 0;
  // Files the gate read besides the gate file (a character list): inputs an output must never replace.
  virtual std::vector<std::string> files_read() const { return {}; }
  // --show: keep each input's decoded decisions on both sides (GateOutcome::shown).
  bool show = false;
};

// A gate's JSON object, read key by key: a value of the wrong kind and a key no
// getter asked for (a misspelt bound) are both errors, reported by finish().
using GateParams = JsonFields;

// Factories, one per decoder. `base_dir` resolves relative paths (a character list).
// The tensor gate with no 'outputs' takes every output of the model.
Result<std::unique_ptr<ParityGate>> make_tensor_gate(GateParams& p);
Result<std::unique_ptr<ParityGate>> make_classification_gate(GateParams& p);
Result<std::unique_ptr<ParityGate>> make_slots_gate(GateParams& p);
Result<std::unique_ptr<ParityGate>> make_boxes_gate(GateParams& p);
Result<std::unique_ptr<ParityGate>> make_embedding_gate(GateParams& p);
Result<std::unique_ptr<ParityGate>> make_text_gate(GateParams& p, const std::filesystem::path& base_dir);
Result<std::unique_ptr<ParityGate>> make_mask_gate(GateParams& p);

// Inputs where the reference decided nothing (no box, an empty line, no class
// above its threshold): counted beside the judged ones; all of them vacuous
// fails the gate.
class VacuousCount {
 public:
  void add(bool reference_decided) {
    ++judged_;
    vacuous_ += !reference_decided;
  }
  void apply(GateOutcome& g) const;

 private:
  std::size_t judged_ = 0;
  std::size_t vacuous_ = 0;
};

// Shared by the decoders.
Status require_output(const ModelIo& io, const std::string& name, const std::string& where);
const TensorInfo* find_output(const ModelIo& io, const std::string& name);
// A tensor's leading axes as items over its last `trailing` axes: {items, elements per item}.
struct ItemLayout {
  std::size_t items = 0;
  std::size_t size = 0;
};
Result<ItemLayout> item_layout(const Tensor& t, std::size_t trailing, const std::string& where);
std::string item_name(const std::string& input, std::size_t index, std::size_t items);  // "page.png" or "page.png#3"
std::vector<float> to_floats(const Tensor& t);
std::string percent(std::size_t part, std::size_t whole);  // "99.5%"
std::string rate(double fraction);                         // a bound: 0.97 -> "97%"
std::string num(double v);                                 // "1.2e-05", "0.9991"
std::string num_up(double v);                              // num's digits, rounded up: never below v

}  // namespace rung

namespace rung {
// "no decisions changed", "2 decisions changed (1 each way)", "3 decisions changed (2 lost, 1 gained)"
std::string changes_phrase(std::size_t lost, std::size_t gained);
}  // namespace rung
