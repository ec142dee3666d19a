// tensorflow.Summary, the message TensorBoard reads from an event file: the
// values of one write, scalars and histograms by tag. Made here for both
// the summary ops (kernels/summary: ScalarSummary, HistogramSummary,
// MergeSummary, whose outputs are its serialized bytes, as TF1's) and the
// training loop's summary writes (daemon/client/training/event_file.h).
//
// Wire format (tensorflow/core/framework/summary.proto): Summary.value (1,
// repeated Value); Value.tag (1, string), Value.simple_value (2, float),
// Value.histo (5, HistogramProto: min, max, num, sum, sum_squares as
// doubles 1-5, bucket_limit and bucket as packed doubles 6 and 7).
//
//   summary::Summary s{.scalars = {{"loss", 0.3}}};
//   s.histograms.emplace_back("weights", summary::HistogramOf(w).value());
//   std::string bytes = summary::Serialize(s);
//
// Thread-safety: plain values and pure functions.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "common/tensor.h"

namespace tfd::summary {

// tensorflow.HistogramProto's fields: bucket[i] counts the values v with
// bucket_limit[i - 1] <= v < bucket_limit[i].
struct Histogram {
  double min = 0, max = 0, num = 0, sum = 0, sum_squares = 0;
  std::vector<double> bucket_limit, bucket;
};

// The values of one Summary, scalars first, each list in order.
struct Summary {
  std::vector<std::pair<std::string, double>> scalars;
  std::vector<std::pair<std::string, Histogram>> histograms;
};

// The histogram of a numeric tensor's values over TensorFlow's default
// buckets (limits of +-1e-12 * 1.1^k up to 1e20, and the largest double),
// each run of empty buckets written as one, as TensorFlow writes it.
// INVALID_ARGUMENT for a NaN or an infinity (TF1's HistogramSummary fails
// so too) and for a tensor that is not of a number type.
StatusOr<Histogram> HistogramOf(const Tensor& t);

// The serialized tensorflow.Summary; a scalar is written as a float, as
// Value.simple_value holds it.
std::string Serialize(const Summary& s);

// The tags of the values of a serialized tensorflow.Summary, in order.
// INVALID_ARGUMENT "not a tensorflow.Summary: ..." for bytes that do not
// parse as one.
StatusOr<std::vector<std::string>> Tags(std::string_view serialized);

}  // namespace tfd::summary
