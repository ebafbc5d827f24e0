#include "quantise/island_search.h"

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <set>

#include "quantise/calibration.h"
#include "quantise/cpu_session.h"
#include "session/session.h"

namespace rung {
namespace fs = std::filesystem;
namespace {

constexpr double kNoNoiseDb = 200;  // a tensor that came through exactly

struct Energy {
  double signal = 0, noise = 0;
  double db() const { return noise <= 0 ? kNoNoiseDb : signal <= 0 ? -kNoNoiseDb : 10.0 * std::log10(signal / noise); }
};

// The name the QDQ graph gives a quantised tensor's dequantised value (see Rewriter).
std::string dequantised_name(const std::string& t, const onnx::GraphProto& quantised) {
  for (const auto& o : quantised.output()) {
    if (o.name() == t) return t;  // a graph output keeps its name for the dequantised value
  }
  return t + "_dq";
}

}  // namespace

Result<std::vector<NodeError>> rank_node_errors(OrtProcess& process, const onnx::ModelProto& prepared, const onnx::ModelProto& quantised,
                                                const QdqPlan& plan, const std::vector<InputItem>& items, const InputPlan& input_plan,
                                                int threads, const fs::path& work) {
  std::set<std::string> graph_inputs;
  for (const auto& i : prepared.graph().input()) graph_inputs.insert(i.name());
  std::vector<std::string> float_names, qdq_names;  // the graph's inputs among them: fed, not exposed, on the float side
  std::map<std::string, std::string> qdq_name;       // float name -> the QDQ graph's
  for (const auto& t : plan.activations) {
    float_names.push_back(t);
    qdq_names.push_back(dequantised_name(t, quantised.graph()));
    qdq_name[t] = qdq_names.back();
  }
  auto reference = open_exposed_on_cpu(process, prepared, float_names, work / "search-float.onnx", threads);
  if (!reference) return reference.error();
  auto candidate = open_exposed_on_cpu(process, quantised, qdq_names, work / "search-qdq.onnx", threads);
  if (!candidate) return candidate.error();

  std::map<std::string, Energy> energy;  // by float name
  for (const auto& item : items) {
    auto inputs = calibration_tensors(item, reference->io, input_plan);
    if (!inputs) return inputs.error();
    auto f = run_session(*reference, *inputs);
    if (!f) return Error{f.error().code, fmt::format("input {}: {}", item.name, f.error().message)};
    auto q = run_session(*candidate, *inputs);
    if (!q) return Error{q.error().code, fmt::format("input {}: {}", item.name, q.error().message)};
    std::map<std::string, const Tensor*> by_name;
    for (const auto& t : *q) by_name[t.name] = &t;
    std::vector<const Tensor*> float_side;
    for (const auto& t : *f) float_side.push_back(&t);
    for (const auto& t : *inputs) float_side.push_back(&t);
    for (const Tensor* tp : float_side) {
      const Tensor& t = *tp;
      auto name = qdq_name.find(t.name);
      if (name == qdq_name.end() || t.type != ElementType::kFloat) continue;
      auto other = by_name.find(name->second);
      if (other == by_name.end() || other->second->bytes.size() != t.bytes.size()) continue;
      const auto a = t.view<float>(), b = other->second->view<float>();
      Energy& e = energy[t.name];
      for (std::size_t k = 0; k < a.size(); ++k) {
        if (!std::isfinite(a[k]) || !std::isfinite(b[k])) continue;
        e.signal += static_cast<double>(a[k]) * a[k];
        const double d = static_cast<double>(a[k]) - b[k];
        e.noise += d * d;
      }
    }
  }

  std::map<std::string, const onnx::NodeProto*> producer;
  for (const auto& n : prepared.graph().node()) {
    for (const auto& o : n.output()) producer[o] = &n;
  }
  // A tensor without a pair (a quantised node's output an activation folds into) carries its producer's inputs' noise.
  std::function<double(const std::string&, int)> db_of = [&](const std::string& t, int depth) {
    if (auto e = energy.find(t); e != energy.end()) return e->second.db();
    auto p = producer.find(t);
    if (depth > 4 || p == producer.end() || !plan.quantised.count(p->second->name())) return kNoNoiseDb;
    double worst = kNoNoiseDb;
    for (const auto& i : p->second->input()) worst = std::min(worst, db_of(i, depth + 1));
    return worst;
  };
  std::vector<NodeError> out;
  for (const auto& n : prepared.graph().node()) {
    if (!plan.quantised.count(n.name()) || n.output_size() < 1) continue;
    auto o = energy.find(n.output(0));
    if (o == energy.end()) continue;
    NodeError e{n.name(), n.op_type(), {}, n.output(0), kNoNoiseDb, o->second.db()};
    if (auto p = plan.folded.count(n.name()) && n.input_size() > 0 ? producer.find(n.input(0)) : producer.end(); p != producer.end()) {
      e.keep_float.push_back(p->second->name());
    }
    e.keep_float.push_back(n.name());
    for (const auto& i : n.input()) e.input_db = std::min(e.input_db, db_of(i, 0));
    out.push_back(std::move(e));
  }
  // The nodes writing the graph's outputs first: there the decoder itself reads the levels (an argmax over
  // 256 levels ties where the float graph did not, whatever the energy says); then by loss.
  std::set<std::string> outputs;
  for (const auto& o : prepared.graph().output()) outputs.insert(o.name());
  std::stable_sort(out.begin(), out.end(), [&](const NodeError& a, const NodeError& b) {
    const bool ao = outputs.count(a.output) > 0, bo = outputs.count(b.output) > 0;
    if (ao != bo) return ao;
    return a.loss_db() > b.loss_db();
  });
  return out;
}

}  // namespace rung
