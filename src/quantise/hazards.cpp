#include "quantise/hazards.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <onnx/onnx_pb.h>

#include <cmath>

namespace rung {

std::string MixedRangeHazard::describe() const {
  std::vector<std::string> parts;
  for (const auto& n : narrow) parts.push_back(fmt::format("'{}' [{:.4g}, {:.4g}] gets {:.1f} levels", n.tensor, n.range.lo, n.range.hi, n.levels));
  return fmt::format("mixed ranges at {} '{}': one {}-bit scale over [{:.4g}, {:.4g}]; {}; keep it float with {}", "Concat", node, bits,
                     joined.lo, joined.hi, fmt::join(parts, ", "), fmt::join(island, " "));
}

std::vector<MixedRangeHazard> find_mixed_ranges(const onnx::ModelProto& prepared, const QdqPlan& plan,
                                                const std::map<std::string, Range>& ranges, int bits) {
  std::vector<MixedRangeHazard> out;
  const double steps = std::ldexp(1.0, bits) - 1;
  for (const auto& n : prepared.graph().node()) {
    if (n.op_type() != "Concat" || !plan.quantised.count(n.name()) || n.output_size() != 1) continue;
    auto joined = ranges.find(n.output(0));
    if (joined == ranges.end()) continue;
    const double scale = (joined->second.hi - joined->second.lo) / steps;
    if (!(scale > 0)) continue;
    MixedRangeHazard h;
    h.node = n.name();
    h.output = n.output(0);
    h.joined = joined->second;
    h.bits = bits;
    for (const auto& in : n.input()) {
      auto r = ranges.find(in);
      if (r == ranges.end()) continue;
      const double levels = (r->second.hi - r->second.lo) / scale;
      if (levels < kMinimumLevels) h.narrow.push_back({in, r->second, levels});
    }
    if (h.narrow.empty()) continue;
    h.island = {"--keep-float", n.name(), "--float-from", n.output(0)};
    out.push_back(std::move(h));
  }
  return out;
}

}  // namespace rung
