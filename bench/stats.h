// Summaries of timing samples for the benchmark's tables.
//
//   double p99 = Percentile(micros, 0.99);
//   double rate = steps / Seconds(end - start);
//
// Thread-safety: pure functions.
#pragma once

#include <algorithm>
#include <chrono>
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

inline double Seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

// Steps/s of workers that each ran `steps` steps per repetition at once
// (starts[w][r], ends[w][r]: worker w, repetition r), one figure per
// repetition: all their steps over the span from the first start to the
// last end, so a worker that finished early does not flatter the aggregate.
inline std::vector<double> AggregateRates(
    const std::vector<std::vector<std::chrono::steady_clock::time_point>>& starts,
    const std::vector<std::vector<std::chrono::steady_clock::time_point>>& ends, int steps) {
  std::vector<double> rates;
  for (size_t r = 0; !starts.empty() && r < starts[0].size(); ++r) {
    auto first = starts[0][r], last = ends[0][r];
    for (size_t w = 1; w < starts.size(); ++w) {
      first = std::min(first, starts[w][r]);
      last = std::max(last, ends[w][r]);
    }
    rates.push_back(static_cast<double>(starts.size()) * steps / Seconds(last - first));
  }
  return rates;
}

}  // namespace tfd::bench
