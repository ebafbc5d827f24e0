#include "quantise/histogram.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace rung {
namespace {

Range with_zero(double lo, double hi) { return {std::min(lo, 0.0), std::max(hi, 0.0)}; }

// KL(P || Q) of two histograms over the same bins, each normalised to sum 1;
// an empty bin of Q under a full one of P counts as a small share, not infinity.
double kl_divergence(const std::vector<double>& p, const std::vector<double>& q) {
  double sp = 0, sq = 0;
  for (double v : p) sp += v;
  for (double v : q) sq += v;
  if (sp <= 0 || sq <= 0) return std::numeric_limits<double>::infinity();
  constexpr double kFloor = 1e-9;
  double kl = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (p[i] <= 0) continue;
    const double a = p[i] / sp, b = std::max(q[i] / sq, kFloor);
    kl += a * std::log(a / b);
  }
  return kl;
}

// TensorRT's entropy calibration for one candidate edge: P is the histogram
// clipped at `edge` bins with the outliers folded into its last bin; Q is the
// clipped histogram merged into `levels` levels and spread back evenly over
// the bins P holds values in.
double clipping_divergence(const std::vector<double>& hist, std::size_t edge, std::size_t levels) {
  std::vector<double> p(hist.begin(), hist.begin() + static_cast<std::ptrdiff_t>(edge));
  for (std::size_t i = edge; i < hist.size(); ++i) p[edge - 1] += hist[i];
  std::vector<double> q(edge, 0.0);
  for (std::size_t level = 0; level < levels; ++level) {
    const std::size_t start = level * edge / levels, stop = (level + 1) * edge / levels;
    double sum = 0;
    std::size_t held = 0;
    for (std::size_t i = start; i < stop; ++i) {
      sum += hist[i];
      held += p[i] > 0;
    }
    if (held == 0) continue;
    for (std::size_t i = start; i < stop; ++i) {
      if (p[i] > 0) q[i] = sum / static_cast<double>(held);
    }
  }
  return kl_divergence(p, q);
}

constexpr float kInf = std::numeric_limits<float>::infinity(), kFloatMax = std::numeric_limits<float>::max();

// Min, max and the count of non-finite values over `lanes` independent lanes,
// so that the compiler's vectoriser takes the loops at -O2 (a float min/max
// reduction in one accumulator would need fast-math): calibration reads every
// activation of every input, and this pass sets its pace.
struct Lanes {
  static constexpr std::size_t kWidth = 8;
  float lo[kWidth], hi[kWidth];
  std::uint32_t bad[kWidth] = {};
  Lanes() {
    for (std::size_t k = 0; k < kWidth; ++k) lo[k] = kInf, hi[k] = -kInf;
  }
  void take(const float* p) {
    for (std::size_t k = 0; k < kWidth; ++k) {
      const float v = p[k];
      lo[k] = v < lo[k] ? v : lo[k];  // a NaN never wins
      hi[k] = v > hi[k] ? v : hi[k];
      bad[k] += !(std::fabs(v) <= kFloatMax);
    }
  }
  void fold_into(Scan& s) {
    for (std::size_t k = 0; k < kWidth; ++k) {
      s.lo = std::min(s.lo, lo[k]), s.hi = std::max(s.hi, hi[k]);
      s.non_finite += bad[k];
      bad[k] = 0;
    }
  }
};

void take_one(Scan& s, float v) {
  s.lo = v < s.lo ? v : s.lo;
  s.hi = v > s.hi ? v : s.hi;
  s.non_finite += !(std::fabs(v) <= kFloatMax);
}

Scan scan(std::span<const float> values) {
  Lanes lanes;
  Scan s{kInf, -kInf, 0};
  const float* p = values.data();
  const std::size_t whole = values.size() - values.size() % Lanes::kWidth;
  // Folded every 2^30 values, before a lane's count could overflow.
  for (std::size_t i = 0; i < whole; i += Lanes::kWidth) {
    lanes.take(p + i);
    if ((i & ((std::size_t{1} << 30) - 1)) == 0) lanes.fold_into(s);
  }
  lanes.fold_into(s);
  for (std::size_t i = whole; i < values.size(); ++i) take_one(s, p[i]);
  return s;
}

Scan scan_finite(std::span<const float> values) {
  Scan s{kInf, -kInf, 0};
  for (float v : values) {
    if (std::isfinite(v)) s.lo = std::min(s.lo, v), s.hi = std::max(s.hi, v);
    else ++s.non_finite;
  }
  return s;
}

double magnitude(const Scan& s) { return std::max(std::fabs(static_cast<double>(s.lo)), std::fabs(static_cast<double>(s.hi))); }

}  // namespace

// A block at a time: the bin of each value (and the scan beside) in a loop of
// fixed length the compiler vectorises, then the counts into interleaved
// sub-histograms, so that runs of equal values (a ReLU's zeros) do not all
// wait on one counter. Values at or past `limit` land in the top bin.
Binned bin_and_scan(std::span<const float> values, std::size_t bins, double limit) {
  constexpr std::size_t kBlock = 1024, kWays = Binned::kWays;
  thread_local std::vector<std::uint32_t> counts;  // shared by every tensor: fixed size
  const std::size_t stride = 2 * bins;             // positive bins, then negative
  counts.assign(kWays * stride, 0);
  Binned out{{kInf, -kInf, 0}, &counts};
  const float per_bin = static_cast<float>(static_cast<double>(bins) / limit);
  const float top = static_cast<float>(bins - 1);
  const auto negative_offset = static_cast<std::uint32_t>(bins);
  auto bin_of = [&](float v) {
    float b = std::fabs(v) * per_bin;
    b = b < top ? b : top;  // a NaN lands in the top bin too: its histogram is redone
    return static_cast<std::uint32_t>(static_cast<std::int32_t>(b)) + (v < 0 ? negative_offset : 0u);
  };
  std::uint32_t index[kBlock];
  Lanes lanes;
  const float* p = values.data();
  const std::size_t whole = values.size() - values.size() % kBlock;
  for (std::size_t start = 0; start < whole; start += kBlock) {
    for (std::size_t k = 0; k < kBlock; ++k) index[k] = bin_of(p[start + k]);
    for (std::size_t k = 0; k < kBlock; k += Lanes::kWidth) lanes.take(p + start + k);
    for (std::size_t k = 0; k < kBlock; k += kWays) {
      for (std::size_t w = 0; w < kWays; ++w) ++counts[w * stride + index[k + w]];
    }
    if ((start & ((std::size_t{1} << 30) - 1)) == 0) lanes.fold_into(out.scan);
  }
  lanes.fold_into(out.scan);
  for (std::size_t k = whole; k < values.size(); ++k) {
    ++counts[bin_of(p[k])];
    take_one(out.scan, p[k]);
  }
  return out;
}

void TensorStats::grow_to(double magnitude) {
  if (limit_ == 0) {
    limit_ = magnitude;
    return;
  }
  std::size_t factor = 1;
  while (limit_ * static_cast<double>(factor) <= magnitude) factor *= 2;
  if (factor == 1) return;
  // Merging `factor` adjacent bins into one keeps every count exact.
  for (auto* h : {&positive_, &negative_}) {
    std::vector<std::uint64_t> merged(bins_, 0);
    for (std::size_t i = 0; i < bins_; ++i) merged[i / factor] += (*h)[i];
    *h = std::move(merged);
  }
  limit_ *= static_cast<double>(factor);
}

void TensorStats::record(const Scan& s, std::size_t size) {
  non_finite_ += s.non_finite;
  if (size == s.non_finite) return;
  min_ = count_ == 0 ? s.lo : std::min(min_, static_cast<double>(s.lo));
  max_ = count_ == 0 ? s.hi : std::max(max_, static_cast<double>(s.hi));
  count_ += size - s.non_finite;
}

void TensorStats::add(std::span<const float> values) {
  if (bins_ > 0 && positive_.empty()) positive_.assign(bins_, 0), negative_.assign(bins_, 0);
  if (bins_ > 0 && limit_ > 0) {
    // Usually one pass: the values binned at the range known so far, scanned beside.
    Binned b = bin_and_scan(values, bins_, limit_);
    if (b.scan.non_finite == 0 && magnitude(b.scan) < limit_) {
      record(b.scan, values.size());
      merge(b);
      return;
    }
    // The range grew (or a value is not finite): binned again below, at the new range.
  }
  Scan s = scan(values);
  if (s.non_finite > 0) s = scan_finite(values);
  record(s, values.size());
  if (bins_ == 0 || values.size() == s.non_finite) return;
  // The first input sets the range exactly; a value at the edge would fall one bin past it.
  grow_to(magnitude(s) * (1 + 1e-6) + std::numeric_limits<double>::min());
  if (s.non_finite > 0) {
    add_finite_slowly(values);
  } else {
    merge(bin_and_scan(values, bins_, limit_));
  }
}

void TensorStats::add_finite_slowly(std::span<const float> values) {
  const std::size_t last = bins_ - 1;
  const double per_bin = static_cast<double>(bins_) / limit_;
  for (float v : values) {
    if (!std::isfinite(v)) continue;
    const auto bin = std::min(last, static_cast<std::size_t>(std::fabs(v) * per_bin));
    ++(v < 0 ? negative_ : positive_)[bin];
  }
}

void TensorStats::merge(const Binned& b) {
  for (std::size_t w = 0; w < Binned::kWays; ++w) {
    const std::uint32_t* counts = b.counts->data() + w * 2 * bins_;
    for (std::size_t i = 0; i < bins_; ++i) {
      positive_[i] += counts[i];
      negative_[i] += counts[bins_ + i];
    }
  }
}

Range TensorStats::minmax() const { return with_zero(min_, max_); }

Range TensorStats::percentile(double percentile) const {
  if (bins_ == 0 || count_ == 0 || percentile >= 100) return minmax();
  const double cut = static_cast<double>(count_) * (100 - percentile) / 200;
  const double width = limit_ / static_cast<double>(bins_);
  // The upper edge: walk in from the largest positive magnitudes.
  auto edge_of = [&](const std::vector<std::uint64_t>& side, double observed) {
    double dropped = 0;
    for (std::size_t i = bins_; i-- > 0;) {
      dropped += static_cast<double>(side[i]);
      if (dropped > cut) return std::min(observed, static_cast<double>(i + 1) * width);
    }
    return 0.0;
  };
  return with_zero(-edge_of(negative_, -min_), edge_of(positive_, max_));
}

double TensorStats::entropy_edge(const std::vector<std::uint64_t>& side, double observed, std::size_t levels) const {
  // Too few levels to weigh a clipping against (the thin side of a lopsided
  // tensor): that side is kept whole.
  constexpr std::size_t kFewestLevels = 16;
  if (observed <= 0 || levels < kFewestLevels || levels >= bins_) return observed;
  std::vector<double> hist(bins_);
  for (std::size_t i = 0; i < bins_; ++i) hist[i] = static_cast<double>(side[i]);
  // The zero bin holds a ReLU's zeros and an image's blank margins: a spike
  // that would rule the divergence and pull the edge down onto the few large
  // values that carry the signal (text strokes on a page). Counted as its
  // neighbour, as NVIDIA's entropy calibrator does.
  hist[0] = hist[1];
  std::size_t best = bins_;
  double best_kl = std::numeric_limits<double>::infinity();
  // Candidate edges at a stride: the divergence changes slowly with the edge.
  const std::size_t stride = std::max<std::size_t>(1, bins_ / 512);
  for (std::size_t edge = levels; edge <= bins_; edge += stride) {
    const double kl = clipping_divergence(hist, edge, levels);
    if (kl < best_kl) best_kl = kl, best = edge;
  }
  return std::min(observed, static_cast<double>(best) * limit_ / static_cast<double>(bins_));
}

Range TensorStats::entropy(int bits) const {
  if (bins_ == 0 || count_ == 0) return minmax();
  // An asymmetric quantiser spends its 2^bits levels across [lo, hi]: each
  // side's clipping is weighed with the levels that side gets (all of them on
  // a ReLU's output, a handful on the thin side of a lopsided tensor).
  const Range observed = minmax();
  const double span = observed.hi - observed.lo;
  if (span <= 0) return observed;
  const double levels = std::ldexp(1.0, bits);
  auto share = [&](double magnitude) { return static_cast<std::size_t>(std::lround(levels * magnitude / span)); };
  return {-entropy_edge(negative_, -observed.lo, share(-observed.lo)), entropy_edge(positive_, observed.hi, share(observed.hi))};
}

}  // namespace rung
