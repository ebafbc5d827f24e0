// The embedding gate: cosine between the two sides' vectors for each item,
// gated on the fraction at or above a bound (0.999 for 99.9% of faces, say).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "parity/gates/gate.h"
#include "rung/json_text.h"
#include "rung/decode.h"

namespace rung {
namespace {

class EmbeddingGate final : public ParityGate {
 public:
  std::string output;
  double bound = 0.999, min_fraction = 0.999;

  std::vector<std::string> outputs() const override { return {output}; }
  Status check(const ModelIo& io) override { return require_output(io, output, "embedding gate"); }

  Status add(const std::string& input, const OutputMap& ref, const OutputMap& cand) override {
    const Tensor& a = *ref.at(output);
    const Tensor& b = *cand.at(output);
    auto l = item_layout(a, 1, "embedding gate");
    if (!l) return l.error();
    if (a.shape != b.shape) {
      return Error{ErrorCode::kInvalidArgument, fmt::format("embedding gate: '{}' for {} is {} in the reference, {} in the candidate",
                                                            output, input, shape_string(a.shape), shape_string(b.shape))};
    }
    const auto x = a.to_doubles(), y = b.to_doubles();
    for (std::size_t i = 0; i < l->items; ++i) {
      const double c = cosine_similarity(std::span<const double>(x).subspan(i * l->size, l->size),
                                         std::span<const double>(y).subspan(i * l->size, l->size));
      cosines_.push_back(std::isnan(c) ? -2.0 : c);  // NaN is below any bound
      if (!(c >= bound) && examples_.size() < 10) examples_.push_back(fmt::format("{}: cosine {}", item_name(input, i, l->items), num(c)));
    }
    return {};
  }

  GateOutcome finish() const override {
    GateOutcome g;
    g.decoder = "embedding";
    g.title = fmt::format("embedding · {}", output);
    auto sorted = cosines_;
    std::sort(sorted.begin(), sorted.end());
    const std::size_t n = sorted.size();
    const auto above = static_cast<std::size_t>(std::count_if(sorted.begin(), sorted.end(), [&](double c) { return c >= bound; }));
    const double p1 = n ? sorted[static_cast<std::size_t>(std::floor(0.01 * static_cast<double>(n - 1)))] : 0;
    const double low = n ? sorted.front() : 0;
    g.passed = n > 0 && static_cast<double>(above) >= min_fraction * static_cast<double>(n) - 1e-9;
    g.summary = fmt::format("{} vs {} embeddings, {} below cosine {}; {} at or above ({}, need {:g}%), p1 {}, min {}", n, n, n - above,
                            num(bound), above, percent(above, n), min_fraction * 100, num(p1), num(low));
    g.details = examples_;
    if (n - above > examples_.size()) g.details.push_back(fmt::format("... and {} more", n - above - examples_.size()));
    g.stats_json = json_text(nlohmann::json{{"items", n}, {"bound", bound}, {"at_or_above", above}, {"p1", p1}, {"min", low}});
    return g;
  }

 private:
  std::vector<double> cosines_;
  std::vector<std::string> examples_;
};

}  // namespace

Result<std::unique_ptr<ParityGate>> make_embedding_gate(GateParams& p) {
  auto g = std::make_unique<EmbeddingGate>();
  g->output = p.text("output", "");
  g->bound = p.number("cosine", 0.999);
  g->min_fraction = p.number("min_fraction", 0.999);
  p.require(!g->output.empty(), "needs 'output', the embedding output");
  p.require(g->bound >= -1 && g->bound <= 1, "'cosine' must be in [-1, 1]");
  p.require(g->min_fraction > 0 && g->min_fraction <= 1, "'min_fraction' must be in (0, 1]");
  RUNG_RETURN_IF_ERROR(p.finish());
  return std::unique_ptr<ParityGate>(std::move(g));
}

}  // namespace rung
