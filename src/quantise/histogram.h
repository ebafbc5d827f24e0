// Per-tensor statistics for calibration: exact min and max, and a fixed-size
// histogram of magnitudes on each side of zero. Memory is fixed per tensor: a
// range that grows merges whole bins (the width doubles), so nothing is kept
// per input and the statistics over 200 inputs cost what they cost over 20.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace rung {

struct Range {
  double lo = 0, hi = 0;
};

// One pass over values: their min, max and non-finite count.
struct Scan {
  float lo, hi;
  std::uint64_t non_finite;
};

// The same scan with each value's magnitude counted into `bins` bins over
// [0, limit) per sign (a value at or past the limit in the top one), in
// interleaved sub-histograms of a per-thread buffer: valid until the next call.
struct Binned {
  static constexpr std::size_t kWays = 4;
  Scan scan;
  const std::vector<std::uint32_t>* counts;  // kWays x (bins positive, bins negative)
};
Binned bin_and_scan(std::span<const float> values, std::size_t bins, double limit);

class TensorStats {
 public:
  // `bins` 0: min/max only.
  explicit TensorStats(std::size_t bins = 0) : bins_(bins) {}
  void add(std::span<const float> values);

  double min() const { return min_; }
  double max() const { return max_; }
  std::uint64_t count() const { return count_; }
  std::uint64_t non_finite() const { return non_finite_; }
  bool seen() const { return count_ > 0; }

  // Every range includes zero: a quantised zero must be exact (padding, ReLU).
  Range minmax() const;
  // The central `percentile` (e.g. 99.99) of the values: (100 - P) / 2 percent cut from each tail.
  Range percentile(double percentile) const;
  // Per side of zero, the clipping edge that keeps the distribution quantised
  // to that side's share of 2^bits levels closest to the observed one (KL
  // divergence, TensorRT's procedure), never beyond the observed min/max.
  Range entropy(int bits) const;

  std::size_t bins() const { return bins_; }
  double histogram_limit() const { return limit_; }

 private:
  void grow_to(double magnitude);
  void record(const Scan& s, std::size_t size);
  void merge(const Binned& b);
  void add_finite_slowly(std::span<const float> values);
  double entropy_edge(const std::vector<std::uint64_t>& side, double observed, std::size_t levels) const;

  std::size_t bins_;
  double min_ = 0, max_ = 0;
  std::uint64_t count_ = 0, non_finite_ = 0;
  double limit_ = 0;  // the histograms cover magnitudes [0, limit_)
  std::vector<std::uint64_t> positive_, negative_;
};

}  // namespace rung
