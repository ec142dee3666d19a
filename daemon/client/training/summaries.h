// What a summary write holds: scalars, and histograms of tensors as
// TensorBoard draws them (tensorflow.HistogramProto), by tag. The training
// loop's SummaryHook gathers them from the graph's summaries/TAG nodes
// (scalars) and histogram_summaries/TAG nodes (any numeric tensor, whose
// values are bucketed here, on the trainer).
//
//   Summaries s{.scalars = {{"loss", 0.3}}};
//   s.histograms.emplace_back("weights", HistogramOf(w));
//
// Thread-safety: plain values.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "common/tensor.h"

namespace tfd::training {

// tensorflow.HistogramProto's fields: bucket[i] counts the values v with
// bucket_limit[i - 1] <= v < bucket_limit[i].
struct Histogram {
  double min = 0, max = 0, num = 0, sum = 0, sum_squares = 0;
  std::vector<double> bucket_limit, bucket;
};

struct Summaries {
  std::vector<std::pair<std::string, double>> scalars;
  std::vector<std::pair<std::string, Histogram>> histograms;
};

// The histogram of a numeric tensor's values over TensorFlow's default
// buckets (limits of +-1e-12 * 1.1^k up to 1e20, and the largest double),
// each run of empty buckets written as one, as TensorFlow writes it.
// INVALID_ARGUMENT for a NaN or an infinity (TF1's HistogramSummary fails
// so too) and for a tensor that is not float, double or an integer type.
StatusOr<Histogram> HistogramOf(const Tensor& t);

}  // namespace tfd::training
