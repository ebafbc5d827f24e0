// Summary statistics of timing samples: the median the probe decides on, and
// the percentiles, mean and spread `rung bench` reports.
#pragma once

#include <vector>

namespace rung {

// The median; 0 for no samples. The mean of the two middle values when even.
double median(std::vector<double> samples);

// Linear interpolation between closest ranks (p in [0, 100]); 0 for no samples.
double percentile(std::vector<double> samples, double p);

struct SampleSummary {
  int count = 0;
  double min = 0, p50 = 0, p90 = 0, p99 = 0, max = 0, mean = 0;
  double stddev = 0;   // sample standard deviation (n - 1)
  double cv = 0;       // stddev / mean: the run-to-run spread, 0.1 = 10%
};

SampleSummary summarize(const std::vector<double>& samples);

}  // namespace rung
