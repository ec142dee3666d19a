// Assert and CheckNumerics: what passes, and the INVALID_ARGUMENT each gives
// (its message) for what does not, at the edge values of float32 and
// float64 and at every position of a vector across block sizes.
#include <cmath>
#include <cstring>
#include <limits>

#include <catch2/catch.hpp>

#include "kernels/register_all.h"
#include "tests/util/kernel_runner.h"

namespace tfd::testing {
namespace {

// Filled once; read-only afterwards.
const OpRegistry& Ops() {
  static const OpRegistry registry = [] {
    OpRegistry r;
    REQUIRE(kernels::RegisterAll(r).ok());
    return r;
  }();
  return registry;
}

Status Assert(bool ok, std::vector<Tensor> data, int64_t summarize = 3) {
  std::vector<DType> types;
  for (const Tensor& t : data) types.push_back(t.dtype());
  std::vector<Tensor> in{Tensor::Scalar<bool>(ok)};
  in.insert(in.end(), data.begin(), data.end());
  return RunOp(Ops(), "Assert", {{"T", types}, {"summarize", summarize}}, std::move(in)).status();
}

template <typename T>
StatusOr<std::vector<Tensor>> Check(std::vector<T> v) {
  return RunOp(Ops(), "CheckNumerics",
               {{"T", DTypeOf<T>::value}, {"message", std::string("logits")}},
               {Tensor::FromVector<T>(v)});
}

TEST_CASE("Assert passes when true and names its data when false") {
  CHECK(Assert(true, {Tensor::Scalar<std::string>("never shown")}).ok());
  const Status s = Assert(
      false,
      {Tensor::Scalar<std::string>("x > 0 failed:"), Tensor::FromVector<int32_t>({-1, 2, 3, 4})},
      /*summarize=*/3);
  CHECK(s.code() == Code::kInvalidArgument);
  CHECK(s.message() == "assertion failed: [x > 0 failed:] [-1 2 3...]");
  CHECK(Assert(false, {}).message() == "assertion failed:");
  CHECK(Assert(false, {Tensor::FromVector<std::string>({"a", "b", "c"}), Tensor::Scalar(2.5)},
               /*summarize=*/2)
            .message() == "assertion failed: [a b...] [2.5]");
  auto not_scalar = RunOp(Ops(), "Assert", {{"T", std::vector<DType>{}}},
                          {Tensor::FromVector<bool>({true, true})});
  CHECK(not_scalar.status().code() == Code::kInvalidArgument);
  CHECK(not_scalar.status().message().find("bool scalar") != std::string::npos);
}

template <typename T>
void ChecksEveryValue() {
  using L = std::numeric_limits<T>;
  const T finite[] = {T(0),     -T(0),    L::denorm_min(), -L::denorm_min(),
                      L::min(), L::max(), L::lowest(),     T(1)};
  const T inf = L::infinity(), nan = L::quiet_NaN();
  // Every length across the vector blocks, with the bad value at each place.
  for (size_t n = 1; n <= 33; ++n) {
    std::vector<T> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = finite[i % 8];
    auto ok = Check<T>(v);
    REQUIRE(ok.ok());
    CHECK(std::memcmp((*ok)[0].template data<T>(), v.data(), n * sizeof(T)) == 0);
    for (size_t at = 0; at < n; ++at) {
      for (auto [bad, found] : {std::pair{inf, "Inf"}, std::pair{-inf, "Inf"},
                                std::pair{nan, "NaN"}, std::pair{-nan, "NaN"}}) {
        std::vector<T> w = v;
        w[at] = bad;
        // The float64 reference: the value is not finite.
        REQUIRE_FALSE(std::isfinite(static_cast<double>(bad)));
        const Status s = Check<T>(w).status();
        REQUIRE(s.code() == Code::kInvalidArgument);
        CHECK(s.message() == std::string("logits : Tensor had ") + found + " values");
      }
    }
  }
  CHECK(Check<T>({nan, T(1), inf}).status().message() == "logits : Tensor had Inf and NaN values");
  CHECK(Check<T>({}).ok());
}

TEST_CASE("CheckNumerics passes finite values through and names what is not") {
  ChecksEveryValue<float>();
  ChecksEveryValue<double>();
}

}  // namespace
}  // namespace tfd::testing
