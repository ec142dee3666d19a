// Summaries of timing samples for the benchmark's tables.
//
//   double p99 = Percentile(micros, 0.99);
//
// Thread-safety: pure functions.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

namespace tfd::bench {

// Nearest-rank percentile (q in [0, 1]) of `samples`; 0 when there are none.
inline double Percentile(std::vector<double> samples, double q) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  const double rank = std::ceil(q * static_cast<double>(samples.size()));
  const size_t index = rank < 1 ? 0 : static_cast<size_t>(rank) - 1;
  return samples[std::min(index, samples.size() - 1)];
}

inline double Median(const std::vector<double>& samples) { return Percentile(samples, 0.5); }

}  // namespace tfd::bench
