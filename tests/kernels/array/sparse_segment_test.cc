// SparseSegmentSum / Mean / SqrtN and their Grad ops against references
// computed here: repeated and skipped rows, empty segments, an empty batch,
// one row, IEEE edge values, and bad indices and segment ids refused.
#include <cmath>
#include <limits>

#include "tests/kernels/array/array_test_util.h"

namespace tfd::array_test {
namespace {

using Vec = std::vector<double>;

// The reference in R's arithmetic: sum each segment in order, then divide.
template <typename R>
Vec SegmentReference(const std::string& op, const Vec& data, int64_t inner,
                     const std::vector<int64_t>& idx, const std::vector<int64_t>& ids) {
  const int64_t segments = ids.empty() ? 0 : ids.back() + 1;
  std::vector<R> out(segments * inner, R(0));
  std::vector<int64_t> count(segments, 0);
  for (size_t i = 0; i < idx.size(); ++i) {
    ++count[ids[i]];
    for (int64_t k = 0; k < inner; ++k) out[ids[i] * inner + k] += R(data[idx[i] * inner + k]);
  }
  for (int64_t j = 0; j < segments; ++j) {
    for (int64_t k = 0; k < inner && count[j] > 0; ++k) {
      if (op == "SparseSegmentMean") out[j * inner + k] /= R(count[j]);
      if (op == "SparseSegmentSqrtN") out[j * inner + k] /= std::sqrt(R(count[j]));
    }
  }
  return Vec(out.begin(), out.end());
}

// got matches want: the same NaN / infinity, finite values within rel.
template <typename T>
void CheckNear(const Tensor& got, const Vec& want, double rel) {
  REQUIRE(got.num_elements() == static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    const double g = got.data<T>()[i], w = static_cast<T>(want[i]);
    INFO("element " << i << ": got " << g << ", want " << w);
    if (std::isnan(w)) {
      CHECK(std::isnan(g));
    } else if (std::isinf(w)) {
      CHECK(g == w);
    } else {
      CHECK(std::abs(g - w) <= rel * std::max(1.0, std::abs(w)));
    }
  }
}

template <typename T, typename R>
void RunSegments(const std::string& op, const Vec& data, int64_t rows,
                 const std::vector<int64_t>& idx, const std::vector<int64_t>& ids, double rel) {
  INFO(op << " " << DTypeName(DTypeOf<T>::value));
  const int64_t inner = rows == 0 ? 0 : static_cast<int64_t>(data.size()) / rows;
  std::vector<T> cast(data.begin(), data.end());
  const Tensor out = RunOne(op, {{"T", DTypeOf<T>::value}, {"Tidx", DType::kInt64}},
                            {Tensor::FromVector<T>(cast, TensorShape({rows, inner})), I64(idx),
                             I32(std::vector<int32_t>(ids.begin(), ids.end()))});
  const int64_t segments = ids.empty() ? 0 : ids.back() + 1;
  REQUIRE(out.shape() == TensorShape({segments, inner}));
  CheckNear<T>(out, SegmentReference<R>(op, Vec(cast.begin(), cast.end()), inner, idx, ids), rel);
}

const char* kOps[] = {"SparseSegmentSum", "SparseSegmentMean", "SparseSegmentSqrtN"};

TEST_CASE("sparse segment combiners: repeated rows, empty segments, empty batch, one row") {
  // 4 rows of width 3; row 2 read twice, row 1 never; segment 1 empty.
  const Vec data = {0.5, -1, 2, 3, 4, 5, -0.25, 8, 1e-3, 7, 0, -7};
  const std::vector<int64_t> idx = {2, 0, 2, 3, 0}, ids = {0, 0, 2, 2, 3};
  for (const char* op : kOps) {
    RunSegments<float, double>(op, data, 4, idx, ids, 1e-6);
    RunSegments<double, double>(op, data, 4, idx, ids, 1e-14);
    RunSegments<double, double>(op, data, 4, {}, {}, 0);      // empty batch: [0, 3]
    RunSegments<double, double>(op, {2.5}, 1, {0}, {0}, 0);   // one row
    RunSegments<double, double>(op, data, 4, {1}, {5}, 0);    // segments 0..4 empty
  }
  const Tensor ints = RunOne("SparseSegmentSum", {{"T", DType::kInt32}},
                             {I32({1, 2, 3, 4}, TensorShape({2, 2})), I32({1, 1, 0}), I32({0, 0, 1})});
  CheckTensor(ints, DType::kInt32, TensorShape({2, 2}), {6, 8, 1, 2});
}

TEST_CASE("sparse segment combiners follow IEEE arithmetic at edge values") {
  // Every pair of edge values summed into one segment; the reference runs in
  // T, as numpy's float32 sum would.
  const auto run = [](auto zero) {
    using T = decltype(zero);
    using L = std::numeric_limits<T>;
    const Vec edges = {L::infinity(), -L::infinity(), L::quiet_NaN(), 0.0, -0.0,
                       L::denorm_min(), -L::denorm_min(), L::min(), L::max(), -L::max(), 1.0, -2.5};
    const int64_t n = static_cast<int64_t>(edges.size());
    std::vector<int64_t> idx, ids;
    for (int64_t a = 0; a < n; ++a) {
      for (int64_t b = 0; b < n; ++b) {
        idx.insert(idx.end(), {a, b});
        ids.insert(ids.end(), {a * n + b, a * n + b});
      }
    }
    for (const char* op : kOps) RunSegments<T, T>(op, edges, n, idx, ids, 4 * L::epsilon());
  };
  run(0.0f);
  run(0.0);
}

// The Grad op against output[indices[i]] += grad[ids[i]] * weight(ids[i]).
void RunGrad(const std::string& op, const Vec& grad, int64_t segments, int64_t inner,
             const std::vector<int64_t>& idx, const std::vector<int64_t>& ids, int32_t dim0) {
  INFO(op);
  std::vector<int64_t> count(segments, 0);
  for (int64_t id : ids) ++count[id];
  Vec want(dim0 * inner, 0.0);
  for (size_t i = 0; i < idx.size(); ++i) {
    double w = 1;
    if (op == "SparseSegmentMeanGrad") w = 1.0 / count[ids[i]];
    if (op == "SparseSegmentSqrtNGrad") w = 1.0 / std::sqrt(double(count[ids[i]]));
    for (int64_t k = 0; k < inner; ++k) want[idx[i] * inner + k] += grad[ids[i] * inner + k] * w;
  }
  const Tensor out = RunOne(op, {{"T", DType::kFloat64}},
                            {F64(grad, TensorShape({segments, inner})), I32(std::vector<int32_t>(idx.begin(), idx.end())),
                             I32(std::vector<int32_t>(ids.begin(), ids.end())),
                             Tensor::Scalar<int32_t>(dim0)});
  REQUIRE(out.shape() == TensorShape({dim0, inner}));
  CheckNear<double>(out, want, 1e-15);
}

TEST_CASE("sparse segment Grad ops spread each segment's gradient over its rows") {
  const Vec grad = {1, 2, 3, 4, 5, 6, 7, 8};  // 4 segments of width 2
  for (const char* op : {"SparseSegmentSumGrad", "SparseSegmentMeanGrad", "SparseSegmentSqrtNGrad"}) {
    RunGrad(op, grad, 4, 2, {2, 0, 2, 4, 0}, {0, 0, 1, 3, 3}, 6);
    RunGrad(op, grad, 4, 2, {}, {}, 3);
  }
}

TEST_CASE("sparse segment ops refuse bad indices and segment ids") {
  const Tensor data = Iota(TensorShape({3, 2}));
  AttrMap attrs{{"T", DType::kFloat64}};
  for (const char* op : kOps) {
    INFO(op);
    CheckInvalid(Run(op, attrs, {data, I32({0, 3}), I32({0, 0})}).status(),
                 "indices[1] = 3 is not in [0, 3)");
    CheckInvalid(Run(op, attrs, {data, I32({-1}), I32({0})}).status(), "indices[0] = -1");
    CheckInvalid(Run(op, attrs, {data, I32({0, 1}), I32({1, 0})}).status(),
                 "segment_ids must be sorted");
    CheckInvalid(Run(op, attrs, {data, I32({0}), I32({-1})}).status(), "segment_ids[0] = -1");
    CheckInvalid(Run(op, attrs, {data, I32({0, 1}), I32({0})}).status(),
                 "vectors of one length");
    CheckInvalid(Run(op, attrs, {Tensor::Scalar<double>(1), I32({0}), I32({0})}).status(),
                 "rank >= 1");
  }
  CheckInvalid(Run("SparseSegmentMeanGrad", attrs,
                   {data, I32({0, 1}), I32({0, 3}), Tensor::Scalar<int32_t>(2)})
                   .status(),
               "segment_ids[1] = 3 is not in [0, 3)");
  CheckInvalid(Run("SparseSegmentSqrtNGrad", attrs,
                   {data, I32({0, 2}), I32({0, 1}), Tensor::Scalar<int32_t>(2)})
                   .status(),
               "indices[1] = 2 is not in [0, 2)");
  CHECK(InferOne("SparseSegmentMean", attrs, {PartialShape({-1, 4}), PartialShape({-1}),
                                              PartialShape({-1})}) == PartialShape({-1, 4}));
  CHECK(InferOne("SparseSegmentSumGrad", attrs,
                 {PartialShape({-1, 4}), PartialShape({-1}), PartialShape({-1}), PartialShape({})},
                 {{3, Tensor::Scalar<int32_t>(9)}}) == PartialShape({9, 4}));
}

}  // namespace
}  // namespace tfd::array_test
