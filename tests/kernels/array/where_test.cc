// Where with one input: the coordinates of true elements, row-major, for
// every dtype it takes; NaN and -0 as C++ (and numpy's nonzero) count them.
#include <cmath>
#include <limits>

#include "tests/kernels/array/array_test_util.h"

namespace tfd::array_test {
namespace {

TEST_CASE("Where lists the coordinates of the true elements in row-major order") {
  auto out = Run("Where", {{"T", DType::kBool}},
                 {Tensor::FromVector<bool>({true, false, false, true, true, false}, {2, 3})});
  REQUIRE(out.ok());
  CheckTensor((*out)[0], DType::kInt64, TensorShape({3, 2}), {0, 0, 1, 0, 1, 1});
  auto cube =
      Run("Where", {{"T", DType::kInt32}}, {I32({0, 0, 0, 0, 0, 0, 0, 5}, TensorShape({2, 2, 2}))});
  REQUIRE(cube.ok());
  CheckTensor((*cube)[0], DType::kInt64, TensorShape({1, 3}), {1, 1, 1});
  auto scalar = Run("Where", {{"T", DType::kBool}}, {Tensor::Scalar<bool>(true)});
  REQUIRE(scalar.ok());
  CHECK((*scalar)[0].shape() == TensorShape({1, 0}));
  auto none =
      Run("Where", {{"T", DType::kUInt8}}, {Tensor::FromVector<uint8_t>({0, 0, 0, 0}, {0, 4})});
  REQUIRE(none.ok());
  CHECK((*none)[0].shape() == TensorShape({0, 2}));
}

TEST_CASE("Where counts NaN, denormals and infinities as true, zeros of both signs as false") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double tiny = std::numeric_limits<double>::denorm_min();
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> v = {0.0, -0.0, nan, tiny, -inf, -tiny, 0.0, 1.0, 0.0};
  std::vector<double> expected;  // the reference: x != 0, as numpy's nonzero
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] != 0.0) expected.push_back(static_cast<double>(i));
  }
  auto f64 = Run("Where", {{"T", DType::kFloat64}}, {F64(v, TensorShape({9}))});
  REQUIRE(f64.ok());
  REQUIRE(expected.size() == 5);
  CheckTensor((*f64)[0], DType::kInt64, TensorShape({5, 1}), expected);
  std::vector<float> vf(v.begin(), v.end());  // float's own denormals: double's round to 0
  vf[3] = std::numeric_limits<float>::denorm_min();
  vf[5] = -std::numeric_limits<float>::denorm_min();
  auto f32 = Run("Where", {{"T", DType::kFloat32}}, {F32(vf, TensorShape({9}))});
  REQUIRE(f32.ok());
  CheckTensor((*f32)[0], DType::kInt64, TensorShape({5, 1}), expected);
}

TEST_CASE("Where's shape: unknown rows, the input's rank as columns") {
  auto known = InferShapes("Where", {{"T", DType::kBool}}, {PartialShape({3, -1})});
  REQUIRE(known.ok());
  CHECK((*known)[0] == PartialShape({-1, 2}));
  auto unknown = InferShapes("Where", {{"T", DType::kBool}}, {PartialShape::Unknown()});
  REQUIRE(unknown.ok());
  CHECK((*unknown)[0] == PartialShape({-1, -1}));
}

}  // namespace
}  // namespace tfd::array_test
