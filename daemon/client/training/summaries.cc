// Histograms of tensors for TensorBoard; see summaries.h.
#include "daemon/client/training/summaries.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>

namespace tfd::training {
namespace {

// TensorFlow's default bucket limits: 0, +-1e-12 * 1.1^k below 1e20, and
// +-DBL_MAX, ascending.
const std::vector<double>& DefaultLimits() {
  static const std::vector<double> limits = [] {
    std::vector<double> positive;
    for (double v = 1.0e-12; v < 1.0e20; v *= 1.1) positive.push_back(v);
    positive.push_back(DBL_MAX);
    std::vector<double> all;
    for (auto it = positive.rbegin(); it != positive.rend(); ++it) all.push_back(-*it);
    all.push_back(0.0);
    all.insert(all.end(), positive.begin(), positive.end());
    return all;
  }();
  return limits;
}

template <typename T, typename F>
void ForEachValue(const Tensor& t, F& f) {
  const T* p = t.data<T>();
  for (int64_t i = 0; i < t.num_elements(); ++i) f(static_cast<double>(p[i]));
}

}  // namespace

StatusOr<Histogram> HistogramOf(const Tensor& t) {
  const std::vector<double>& limits = DefaultLimits();
  std::vector<double> counts(limits.size(), 0.0);
  Histogram h;
  h.min = DBL_MAX;
  h.max = -DBL_MAX;
  bool finite = true;
  const auto add = [&](double v) {
    if (!std::isfinite(v)) {
      finite = false;
      return;
    }
    const auto at = std::upper_bound(limits.begin(), limits.end(), v) - limits.begin();
    counts[std::min<size_t>(at, limits.size() - 1)] += 1;
    h.min = std::min(h.min, v);
    h.max = std::max(h.max, v);
    h.num += 1;
    h.sum += v;
    h.sum_squares += v * v;
  };
  switch (t.dtype()) {
    case DType::kFloat32:
      ForEachValue<float>(t, add);
      break;
    case DType::kFloat64:
      ForEachValue<double>(t, add);
      break;
    case DType::kInt32:
      ForEachValue<int32_t>(t, add);
      break;
    case DType::kInt64:
      ForEachValue<int64_t>(t, add);
      break;
    default:
      return errors::InvalidArgument(
          "a histogram summarizes float, double or integer values, "
          "not ",
          t.Describe());
  }
  if (!finite) {
    return errors::InvalidArgument(
        "a histogram of a NaN or an infinity (TF1: Nan in summary "
        "histogram)");
  }
  // A run of empty buckets is one bucket, up to the run's last limit.
  for (size_t i = 0; i < counts.size();) {
    double limit = limits[i], count = counts[i];
    ++i;
    if (count <= 0) {
      for (; i < counts.size() && counts[i] <= 0; ++i) limit = limits[i];
    }
    h.bucket_limit.push_back(limit);
    h.bucket.push_back(count);
  }
  return h;
}

}  // namespace tfd::training
