// Range against numpy.arange's definition (start + i * delta, ceil of the
// span over delta elements) and its INVALID_ARGUMENT cases; Cumsum against a
// float64 running sum for every axis and every exclusive/reverse
// combination, with IEEE specials propagating as numpy's cumsum does.
#include <cmath>
#include <cstdint>
#include <limits>

#include <catch2/catch.hpp>

#include "tests/kernels/math/math_test_util.h"

namespace tfd {
namespace {

using namespace math_test;  // NOLINT: test helpers
using Dims = std::vector<int64_t>;

Tensor RunRange(DType d, double start, double limit, double delta) {
  return Run1("Range", {{"Tidx", d}},
              {MakeOf(d, {}, {start}), MakeOf(d, {}, {limit}), MakeOf(d, {}, {delta})});
}

TEST_CASE("Range gives start + i * delta short of limit, for every dtype") {
  struct Case {
    double start, limit, delta;
  };
  const Case cases[] = {{0, 5, 1}, {3, 18, 3}, {3, 19, 3}, {-4, 4, 3}, {10, 2, -2},
                        {10, 1, -2}, {5, 5, 1}, {5, 5, -1}, {-7, -1, 2}};
  for (DType d : {DType::kInt32, DType::kInt64, DType::kFloat32, DType::kFloat64}) {
    for (const Case& c : cases) {
      INFO(DTypeName(d) << " range(" << c.start << ", " << c.limit << ", " << c.delta << ")");
      const auto n = static_cast<int64_t>(std::ceil((c.limit - c.start) / c.delta));
      std::vector<double> want;
      for (int64_t i = 0; i < n; ++i) want.push_back(c.start + static_cast<double>(i) * c.delta);
      const Tensor y = RunRange(d, c.start, c.limit, c.delta);
      CHECK(y.dtype() == d);
      ExpectTensor(y, {n}, want, 0);
    }
  }
}

TEST_CASE("float Range counts the partial last step and does not drift") {
  // ceil(1 / 0.1) = 10 elements (numpy.arange(0, 1, 0.1)); element i is
  // i * 0.1, not a running sum.
  const Tensor y = RunRange(DType::kFloat64, 0, 1, 0.1);
  REQUIRE(y.num_elements() == 10);
  for (int i = 0; i < 10; ++i) CHECK(y.data<double>()[i] == i * 0.1);
  CHECK(RunRange(DType::kFloat32, 0.5, 2.25, 0.5).num_elements() == 4);
}

TEST_CASE("Range spans that overflow the dtype are counted exactly") {
  const int32_t lo = std::numeric_limits<int32_t>::min(), hi = std::numeric_limits<int32_t>::max();
  const Tensor y = Run1("Range", {{"Tidx", DType::kInt32}},
                        {Tensor::Scalar<int32_t>(lo), Tensor::Scalar<int32_t>(hi),
                         Tensor::Scalar<int32_t>(1 << 30)});
  ExpectTensor(y, {4}, {double(lo), double(lo) + (1 << 30), 0, double(1 << 30)}, 0);
}

TEST_CASE("Range refuses a zero delta, a delta of the wrong sign and non-scalars") {
  for (DType d : {DType::kInt32, DType::kFloat64}) {
    INFO(DTypeName(d));
    auto inputs = [&](double s, double l, double dl) {
      return std::vector<Tensor>{MakeOf(d, {}, {s}), MakeOf(d, {}, {l}), MakeOf(d, {}, {dl})};
    };
    ExpectInvalid("Range", {{"Tidx", d}}, inputs(0, 5, 0), {"delta != 0"});
    ExpectInvalid("Range", {{"Tidx", d}}, inputs(5, 0, 1), {"start <= limit", "delta > 0"});
    ExpectInvalid("Range", {{"Tidx", d}}, inputs(0, 5, -1), {"start >= limit", "delta < 0"});
    ExpectInvalid("Range", {{"Tidx", d}},
                  {MakeOf(d, {2}, {0, 1}), MakeOf(d, {}, {5}), MakeOf(d, {}, {1})},
                  {"start must be a scalar"});
  }
  ExpectInvalid("Range", {{"Tidx", DType::kFloat64}},
                {Make<double>({}, {0}), Make<double>({}, {INFINITY}), Make<double>({}, {1})},
                {"elements"});
  ExpectInvalid("Range", {{"Tidx", DType::kFloat32}},
                {Make<float>({}, {0}), Make<float>({}, {NAN}), Make<float>({}, {1})},
                {"elements"});
}

TEST_CASE("Range's shape function knows the length from constant inputs") {
  const Tensor s = Tensor::Scalar<int32_t>(2), l = Tensor::Scalar<int32_t>(11),
               d = Tensor::Scalar<int32_t>(3);
  auto r = InferShapes("Range", {{"Tidx", DType::kInt32}}, {{}, {}, {}}, {&s, &l, &d});
  REQUIRE(r.status.ok());
  CHECK(r.outputs[0] == PartialShape({3}));
  r = InferShapes("Range", {{"Tidx", DType::kInt32}}, {{}, {}, {}});
  REQUIRE(r.status.ok());
  CHECK(r.outputs[0] == PartialShape({-1}));
  const Tensor zero = Tensor::Scalar<int32_t>(0);
  r = InferShapes("Range", {{"Tidx", DType::kInt32}}, {{}, {}, {}}, {&s, &l, &zero});
  CHECK(r.status.code() == Code::kInvalidArgument);
}

// numpy.cumsum along axis, in float64, then TensorFlow's exclusive and
// reverse by definition: reverse flips the axis before and after; exclusive
// shifts by one, putting 0 first.
std::vector<double> RefCumsum(const std::vector<double>& x, const Dims& dims, int axis,
                              bool exclusive, bool reverse) {
  std::vector<double> out(x.size());
  const int64_t n = dims[axis];
  for (int64_t flat = 0; flat < Count(dims); ++flat) {
    std::vector<int64_t> idx = Unflatten(flat, dims);
    const int64_t k = idx[axis];
    double sum = 0;
    for (int64_t j = 0; j < n; ++j) {
      const bool before = reverse ? j > k : j < k;
      if (before || (!exclusive && j == k)) {
        idx[axis] = j;
        sum += x[Flatten(idx, dims)];
      }
    }
    out[flat] = sum;
  }
  return out;
}

TEST_CASE("Cumsum matches a float64 reference on every axis and attr combination") {
  const std::vector<Dims> shapes = {{7}, {3, 4}, {2, 3, 5}, {1, 4, 1}, {4, 0, 2}};
  for (const Dims& dims : shapes) {
    const std::vector<double> x = Ramp(Count(dims), 0.75, -3.5);
    for (int axis = -static_cast<int>(dims.size()); axis < static_cast<int>(dims.size()); ++axis) {
      const int a = axis < 0 ? axis + static_cast<int>(dims.size()) : axis;
      for (bool exclusive : {false, true}) {
        for (bool reverse : {false, true}) {
          for (DType d : {DType::kFloat64, DType::kFloat32, DType::kInt32, DType::kInt64}) {
            INFO(TensorShape(dims).ToString() << " axis " << axis << " exclusive " << exclusive
                                               << " reverse " << reverse << " " << DTypeName(d));
            // Integers: the ramp's steps of 0.75 truncated stay integers.
            std::vector<double> xs = Values(MakeOf(d, dims, x));
            const Tensor y = Run1("Cumsum", {{"T", d}, {"exclusive", exclusive},
                                             {"reverse", reverse}},
                                  {MakeOf(d, dims, xs), Tensor::Scalar<int32_t>(axis)});
            CHECK(y.dtype() == d);
            ExpectTensor(y, dims, RefCumsum(xs, dims, a, exclusive, reverse), 1e-6);
          }
        }
      }
    }
  }
}

TEST_CASE("Cumsum carries inf and NaN forward as numpy's cumsum does") {
  const Tensor x = Make<double>({5}, {1, INFINITY, 2, -INFINITY, 3});
  const Tensor axis = Tensor::Scalar<int64_t>(0);
  ExpectTensor(Run1("Cumsum", {{"T", DType::kFloat64}, {"Tidx", DType::kInt64}}, {x, axis}),
               {5}, {1, INFINITY, INFINITY, NAN, NAN});
  ExpectTensor(Run1("Cumsum", {{"T", DType::kFloat64}, {"Tidx", DType::kInt64},
                               {"reverse", true}}, {x, axis}),
               {5}, {NAN, NAN, -INFINITY, -INFINITY, 3});
  // A float32 sum that overflows is inf, and a denormal survives.
  const float big = std::numeric_limits<float>::max(), tiny = 1e-45f;
  const Tensor y = Run1("Cumsum", {{"T", DType::kFloat32}},
                        {Tensor::FromVector<float>({big, big, tiny}), Tensor::Scalar<int32_t>(0)});
  CHECK(y.data<float>()[1] == INFINITY);
  const Tensor z = Run1("Cumsum", {{"T", DType::kFloat32}},
                        {Tensor::FromVector<float>({tiny, tiny}), Tensor::Scalar<int32_t>(0)});
  CHECK(z.data<float>()[1] == 2 * tiny);
}

TEST_CASE("Cumsum refuses an axis out of range or not a scalar") {
  const Tensor x = Make<double>({2, 3}, {1, 2, 3, 4, 5, 6});
  ExpectInvalid("Cumsum", {{"T", DType::kFloat64}}, {x, Tensor::Scalar<int32_t>(2)},
                {"axis 2", "rank 2"});
  ExpectInvalid("Cumsum", {{"T", DType::kFloat64}}, {x, Tensor::Scalar<int32_t>(-3)},
                {"axis -3"});
  ExpectInvalid("Cumsum", {{"T", DType::kFloat64}}, {x, Tensor::FromVector<int32_t>({0})},
                {"scalar"});
}

}  // namespace
}  // namespace tfd
