// The outputs no decoder reads: sequences and optional values. Each is compared
// input by input with compare_values (element by element, and their structure:
// a sequence's length, None on one side), and the gate passes when every input does.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "rung/parity.h"
#include "rung/tolerance.h"
#include "session/model_io.h"

namespace rung {

class ValueGate {
 public:
  ValueGate(const ModelIo& io, Tolerance tolerance);
  bool empty() const { return names_.empty(); }
  const std::vector<std::string>& outputs() const { return names_; }
  void add(const std::string& input, const std::map<std::string, Value>& ref, const std::map<std::string, Value>& cand);
  GateOutcome finish() const;

 private:
  std::vector<std::string> names_;
  Tolerance tolerance_;
  std::size_t inputs_ = 0, passed_ = 0;
  double max_abs_ = 0, max_rel_ = 0;
  std::vector<std::string> problems_;  // the first few, named by input
};

}  // namespace rung
