#include "parity/gates/value.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "rung/json_text.h"

namespace rung {

ValueGate::ValueGate(const ModelIo& io, Tolerance tolerance) : tolerance_(tolerance) {
  for (const auto& o : io.outputs) {
    if (!o.is_tensor()) names_.push_back(o.name);
  }
}

void ValueGate::add(const std::string& input, const std::map<std::string, Value>& ref, const std::map<std::string, Value>& cand) {
  bool ok = true;
  for (const auto& name : names_) {
    const ValueComparison c = compare_values(ref.at(name), cand.at(name), tolerance_);
    for (const auto& t : c.tensors) {
      max_abs_ = std::max(max_abs_, t.max_abs);
      max_rel_ = std::max(max_rel_, t.max_rel);
    }
    if (c.faithful()) continue;
    ok = false;
    if (problems_.size() < 5) problems_.push_back(fmt::format("{}: {}", input, c.first_problem()));
  }
  ++inputs_;
  passed_ += ok;
}

GateOutcome ValueGate::finish() const {
  GateOutcome g;
  g.decoder = "value";
  g.title = names_.size() == 1 ? fmt::format("value · {}", names_[0]) : fmt::format("value · {} outputs", names_.size());
  g.passed = inputs_ > 0 && passed_ == inputs_;
  g.summary = fmt::format("{} of {} inputs give the same sequences and optional values (element by element within atol {:g} AND rtol {:g}; "
                          "the same lengths, None where the other is None)", passed_, inputs_, tolerance_.atol, tolerance_.rtol);
  g.details = problems_;
  g.stats_json = json_text(nlohmann::json{{"atol", tolerance_.atol}, {"rtol", tolerance_.rtol}, {"inputs", inputs_}, {"inputs_passed", passed_},
                                {"max_abs", max_abs_}, {"max_rel", max_rel_}, {"outputs", names_}});
  return g;
}

}  // namespace rung
