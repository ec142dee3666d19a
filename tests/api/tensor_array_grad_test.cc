// Gradients through TensorArrays (kernels/data_flow/tensor_array_grad.cc),
// checked against central differences: a recurrent loop that reads its
// inputs from one array and writes its states to another, as dynamic_rnn
// does, iterations in parallel or not; gather with a repeated index (the
// gradient array adds its writes) and an index never gathered (zeros);
// split and concat; an array made in each iteration of an outer loop.
#include <catch2/catch.hpp>

#include "api/control_flow.h"
#include "common/gradients.h"
#include "tests/api/api_test_util.h"

namespace tfd {
namespace {

using testing::CheckGradients;
using testing::RandomTensor;
using testing::ShapeMode;

Output I32s(const Scope& s, std::vector<int32_t> v) {
  return ops::Const(s, Tensor::FromVector<int32_t>(v));
}

// A new float64 array of `size`: {handle, flow}.
std::pair<Output, Output> NewArray(const Scope& s, int32_t size, bool clear_after_read = true) {
  Operation ta =
      s.AddOperation("TensorArrayV3", {ops::Const(s, size)},
                     {{"dtype", DType::kFloat64}, {"clear_after_read", clear_after_read}});
  return {ta.output(0), ta.output(1)};
}

Output Scatter(const Scope& s, const Output& ta, const Output& indices, const Output& value,
               const Output& flow) {
  return s
      .AddOperation("TensorArrayScatterV3", {ta, indices, value, flow}, {{"T", DType::kFloat64}})
      .output(0);
}

Output Gather(const Scope& s, const Output& ta, const Output& indices, const Output& flow) {
  return s.AddOperation("TensorArrayGatherV3", {ta, indices, flow}, {{"dtype", DType::kFloat64}})
      .output(0);
}

// h <- tanh(h W + x[t]) for t < 4, x [4, 1, 2] read from an array, each h
// written to another; the stacked states [4, 1, 2].
Output Recurrence(const Scope& s, const Output& x, const Output& w, int parallel) {
  auto [in, in_flow] = NewArray(s, 4);
  in_flow = Scatter(s, in, I32s(s, {0, 1, 2, 3}), x, in_flow);
  auto [out, out_flow] = NewArray(s, 4);
  const Output h0 = ops::Const(s, Tensor::FromVector<double>({0.1, -0.2}, TensorShape{1, 2}));
  ops::WhileOptions options;
  options.parallel_iterations = parallel;
  const std::vector<Output> done = ops::WhileLoop(
      s, [](const Scope& c, const std::vector<Output>& v) { return ops::Less(c, v[0], 4); },
      [&](const Scope& b, const std::vector<Output>& v) {
        const Output xt =
            b.AddOperation("TensorArrayReadV3", {in, v[0], in_flow}, {{"dtype", DType::kFloat64}})
                .output(0);
        const Output h = ops::Tanh(b, ops::Add(b, ops::MatMul(b, v[1], w), xt));
        const Output flow =
            b.AddOperation("TensorArrayWriteV3", {out, v[0], h, v[2]}, {{"T", DType::kFloat64}})
                .output(0);
        return std::vector<Output>{ops::Add(b, v[0], 1), h, flow};
      },
      {ops::Const(s, 0), h0, out_flow}, options);
  return Gather(s, out, I32s(s, {0, 1, 2, 3}), done[2]);
}

TEST_CASE("a loop reading one tensor array and writing another differentiates") {
  for (int parallel : {1, 10}) {
    CheckGradients("recurrence over arrays, parallel_iterations " + std::to_string(parallel),
                   [parallel](const Scope& s, const std::vector<Output>& x) {
                     return Recurrence(s, x[0], x[1], parallel);
                   },
                   {RandomTensor({4, 1, 2}, 1), RandomTensor({2, 2}, 2)});
  }
}

TEST_CASE("a gather's gradient adds up repeated indices and leaves zeros where none went") {
  CheckGradients("gather 0, 0, 2 of 3 rows",
                 [](const Scope& s, const std::vector<Output>& x) {
                   auto [ta, flow] = NewArray(s, 3, /*clear_after_read=*/false);
                   flow = Scatter(s, ta, I32s(s, {0, 1, 2}), x[0], flow);
                   return Gather(s, ta, I32s(s, {0, 0, 2}), flow);
                 },
                 {RandomTensor({3, 2}, 3)});
}

TEST_CASE("split and concat differentiate, pieces of length zero included") {
  for (ShapeMode mode : {ShapeMode::kKnown, ShapeMode::kUnknownDims}) {
    CheckGradients(
        "split 1, 0, 2 then concat",
        [](const Scope& s, const std::vector<Output>& x) {
          auto [ta, flow] = NewArray(s, 3);
          flow = s.AddOperation(
                      "TensorArraySplitV3",
                      {ta, x[0], ops::Const(s, Tensor::FromVector<int64_t>({1, 0, 2})), flow},
                      {{"T", DType::kFloat64}})
                     .output(0);
          const Output joined =
              s.AddOperation("TensorArrayConcatV3", {ta, flow}, {{"dtype", DType::kFloat64}})
                  .output(0);
          return ops::Mul(s, joined, joined);
        },
        {RandomTensor({3, 2}, 4)}, mode);
  }
}

// For each row i of x [2, 3], an array made in the outer loop's body
// that an inner loop fills with row[j]^2; the outer loop sums each
// array's stack. The outer gradient loop gets each iteration's array back
// from a stack of references.
Output SquaresPerRow(const Scope& s, const Output& x) {
  return ops::WhileLoop(
      s, [](const Scope& c, const std::vector<Output>& v) { return ops::Less(c, v[0], 2); },
      [&x](const Scope& b, const std::vector<Output>& v) {
        const Output row = ops::Gather(b, x, v[0]);
        auto [ta, flow] = NewArray(b, 3);
        const Output filled = ops::WhileLoop(
            b, [](const Scope& c, const std::vector<Output>& w) { return ops::Less(c, w[0], 3); },
            [&](const Scope& ib, const std::vector<Output>& w) {
              const Output e = ops::Gather(ib, row, w[0]);
              const Output f =
                  ib.AddOperation("TensorArrayWriteV3", {ta, w[0], ops::Mul(ib, e, e), w[1]},
                                  {{"T", DType::kFloat64}})
                      .output(0);
              return std::vector<Output>{ops::Add(ib, w[0], 1), f};
            },
            {ops::Const(b, 0), flow})[1];
        const Output sum = ops::Sum(b, Gather(b, ta, I32s(b, {0, 1, 2}), filled), {0});
        return std::vector<Output>{ops::Add(b, v[0], 1), ops::Add(b, v[1], sum)};
      },
      {ops::Const(s, 0), ops::Const(s, 0.0)})[1];
}

TEST_CASE("an array made in each iteration of a loop and filled by an inner loop differentiates") {
  CheckGradients(
      "arrays per outer iteration",
      [](const Scope& s, const std::vector<Output>& x) { return SquaresPerRow(s, x[0]); },
      {RandomTensor({2, 3}, 5)});
}

}  // namespace
}  // namespace tfd
