// tensorflow.Summary and TensorFlow's histograms; see summary_proto.h.
#include "common/summary_proto.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "common/proto_wire.h"

namespace tfd::summary {
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

// A HistogramProto: five doubles, then the limits and counts as packed
// repeated doubles.
std::string HistogramProto(const Histogram& h) {
  std::string out;
  proto_wire::PutFixed(out, 1, h.min);
  proto_wire::PutFixed(out, 2, h.max);
  proto_wire::PutFixed(out, 3, h.num);
  proto_wire::PutFixed(out, 4, h.sum);
  proto_wire::PutFixed(out, 5, h.sum_squares);
  for (const auto& [field, values] : {std::pair{6, &h.bucket_limit}, std::pair{7, &h.bucket}}) {
    std::string packed(values->size() * sizeof(double), '\0');
    std::memcpy(packed.data(), values->data(), packed.size());
    proto_wire::PutBytes(out, field, packed);
  }
  return out;
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
  TFD_SWITCH_NUMERIC(
      t.dtype(), T, ForEachValue<T>(t, add),
      return errors::InvalidArgument("a histogram summarizes numbers, not ", t.Describe()));
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

std::string Serialize(const Summary& s) {
  std::string out;
  for (const auto& [tag, value] : s.scalars) {
    std::string v;
    proto_wire::PutBytes(v, 1, tag);
    proto_wire::PutFixed(v, 2, static_cast<float>(value));
    proto_wire::PutBytes(out, 1, v);
  }
  for (const auto& [tag, histogram] : s.histograms) {
    std::string v;
    proto_wire::PutBytes(v, 1, tag);
    proto_wire::PutBytes(v, 5, HistogramProto(histogram));
    proto_wire::PutBytes(out, 1, v);
  }
  return out;
}

StatusOr<std::vector<std::string>> Tags(std::string_view serialized) {
  constexpr char kWhat[] = "tensorflow.Summary";
  std::vector<std::string> tags;
  TFD_RETURN_IF_ERROR(proto_wire::ForEachField(
      serialized, kWhat, [&](uint64_t number, int wire, proto_wire::Reader& r) -> Status {
        if (number != 1 || wire != proto_wire::kLength) return r.Skip(wire);
        TFD_ASSIGN_OR_RETURN(std::string_view value, r.Delimited());
        std::string tag;  // a Value without one has the empty tag
        TFD_RETURN_IF_ERROR(proto_wire::ForEachField(
            value, kWhat, [&](uint64_t vn, int vw, proto_wire::Reader& vr) -> Status {
              if (vn != 1 || vw != proto_wire::kLength) return vr.Skip(vw);
              TFD_ASSIGN_OR_RETURN(std::string_view t, vr.Delimited());
              tag = std::string(t);
              return OkStatus();
            }));
        tags.push_back(std::move(tag));
        return OkStatus();
      }));
  return tags;
}

}  // namespace tfd::summary
