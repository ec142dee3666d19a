// Select (all three condition shapes) and AddN.
#include <catch2/catch.hpp>

#include "tests/kernels/math/math_test_util.h"

namespace tfd {
namespace {

using namespace math_test;  // NOLINT: test helpers

TEST_CASE("Select with a condition of t's shape picks element by element") {
  const Tensor cond = Make<bool>({2, 3}, {1, 0, 1, 0, 0, 1});
  const Tensor t = Make<double>({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor e = Make<double>({2, 3}, {-1, -2, -3, -4, -5, -6});
  ExpectTensor(Run1("Select", {{"T", DType::kFloat64}}, {cond, t, e}), {2, 3},
               {1, -2, 3, -4, -5, 6});
  // Other dtypes, strings included.
  ExpectTensor(Run1("Select", {{"T", DType::kInt64}},
                    {cond, Make<int64_t>({2, 3}, {1, 2, 3, 4, 5, 6}), Make<int64_t>({2, 3}, {0, 0, 0, 0, 0, 0})}),
               {2, 3}, {1, 0, 3, 0, 0, 6});
  Tensor ts = Tensor::FromVector<std::string>({"a", "b"});
  Tensor es = Tensor::FromVector<std::string>({"x", "y"});
  Tensor s = Run1("Select", {{"T", DType::kString}}, {Make<bool>({2}, {0, 1}), ts, es});
  CHECK(s.data<std::string>()[0] == "x");
  CHECK(s.data<std::string>()[1] == "b");
}

TEST_CASE("Select with a vector condition picks whole rows") {
  const Tensor cond = Make<bool>({3}, {0, 1, 0});
  const Tensor t = Make<float>({3, 2}, {1, 2, 3, 4, 5, 6});
  const Tensor e = Make<float>({3, 2}, {10, 20, 30, 40, 50, 60});
  ExpectTensor(Run1("Select", {{"T", DType::kFloat32}}, {cond, t, e}), {3, 2},
               {10, 20, 3, 4, 50, 60});
}

TEST_CASE("Select with a scalar condition picks a whole input") {
  const Tensor t = Make<int32_t>({2}, {1, 2});
  const Tensor e = Make<int32_t>({2}, {3, 4});
  ExpectTensor(Run1("Select", {{"T", DType::kInt32}}, {Make<bool>({}, {1}), t, e}), {2}, {1, 2});
  ExpectTensor(Run1("Select", {{"T", DType::kInt32}}, {Make<bool>({}, {0}), t, e}), {2}, {3, 4});
  ExpectTensor(Run1("Select", {{"T", DType::kInt32}},
                    {Make<bool>({0}, {}), Make<int32_t>({0}, {}), Make<int32_t>({0}, {})}),
               {0}, {});
}

TEST_CASE("Select refuses mismatched shapes") {
  ExpectInvalid("Select", {{"T", DType::kFloat32}},
                {Make<bool>({2}, {1, 0}), Make<float>({2}, {1, 2}), Make<float>({3}, {1, 2, 3})},
                {"same shape", "[2]", "[3]"});
  ExpectInvalid("Select", {{"T", DType::kFloat32}},
                {Make<bool>({3}, {1, 0, 1}), Make<float>({2, 3}, Ramp(6)), Make<float>({2, 3}, Ramp(6))},
                {"condition", "[3]", "[2, 3]"});
}

TEST_CASE("AddN sums any number of same-shaped inputs") {
  for (int n : {1, 2, 3, 4, 5}) {
    std::vector<Tensor> inputs;
    std::vector<double> want(6, 0.0);
    for (int i = 0; i < n; ++i) {
      std::vector<double> v = Ramp(6, 0.5 * (i + 1), -1.0 * i);
      for (int k = 0; k < 6; ++k) want[k] += v[k];
      inputs.push_back(Make<double>({2, 3}, v));
    }
    INFO("N = " << n);
    ExpectTensor(Run1("AddN", {{"N", int64_t{n}}, {"T", DType::kFloat64}}, inputs), {2, 3}, want);
  }
  ExpectTensor(Run1("AddN", {{"N", int64_t{2}}, {"T", DType::kInt32}},
                    {Make<int32_t>({}, {3}), Make<int32_t>({}, {-5})}),
               {}, {-2});
  ExpectTensor(Run1("AddN", {{"N", int64_t{3}}, {"T", DType::kFloat32}},
                    {Make<float>({0, 2}, {}), Make<float>({0, 2}, {}), Make<float>({0, 2}, {})}),
               {0, 2}, {});
}

TEST_CASE("AddN refuses inputs of different shapes, naming them") {
  ExpectInvalid("AddN", {{"N", int64_t{3}}, {"T", DType::kFloat32}},
                {Make<float>({2}, {1, 2}), Make<float>({2}, {1, 2}), Make<float>({3}, {1, 2, 3})},
                {"input 2", "[3]", "[2]"});
}

}  // namespace
}  // namespace tfd
