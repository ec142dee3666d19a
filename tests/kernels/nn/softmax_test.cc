// Softmax and LogSoftmax against naive float64 formulas, including logits
// large enough to overflow a naive implementation.
#include <cmath>

#include "tests/kernels/nn/nn_test_util.h"

namespace tfd::testing::nn {
namespace {

// Naive softmax of each row of `cols` values: fine for small logits only.
std::vector<double> NaiveSoftmax(const std::vector<double>& x, int64_t cols) {
  std::vector<double> y(x.size());
  for (size_t r = 0; r < x.size() / cols; ++r) {
    double sum = 0;
    for (int64_t j = 0; j < cols; ++j) sum += std::exp(x[r * cols + j]);
    for (int64_t j = 0; j < cols; ++j) y[r * cols + j] = std::exp(x[r * cols + j]) / sum;
  }
  return y;
}

std::vector<double> Log(std::vector<double> v) {
  for (double& x : v) x = std::log(x);
  return v;
}

TEST_CASE("Softmax and LogSoftmax normalise the last axis") {
  const std::vector<double> x = {1, 2, 3, -1, 0, 0.5, 2, 2, 2, -3, 4, 0.25};
  for (DType t : {DType::kFloat32, DType::kFloat64}) {
    INFO(DTypeName(t));
    // The last axis is 3 whatever the rank: rows are its slices.
    for (const TensorShape& shape :
         {TensorShape({12, 1}), TensorShape({4, 3}), TensorShape({2, 2, 3})}) {
      INFO(shape.ToString());
      const int64_t cols = shape.dim(shape.rank() - 1);
      const auto want = NaiveSoftmax(x, cols);
      auto sm = MustRun("Softmax", TypeAttr(t), {Make(t, x, shape)});
      CheckClose(sm[0], shape, want, Tolerance(t), Tolerance(t));
      auto lsm = MustRun("LogSoftmax", TypeAttr(t), {Make(t, x, shape)});
      CheckClose(lsm[0], shape, Log(want), Tolerance(t), Tolerance(t));
    }
  }
  // Rank 1: the whole vector is one row.
  auto v = MustRun("Softmax", TypeAttr(DType::kFloat64), {Doubles({0, std::log(3.0)}, {2})});
  CheckClose(v[0], TensorShape({2}), {0.25, 0.75}, 1e-15);
}

TEST_CASE("Softmax and LogSoftmax survive logits that overflow a naive softmax") {
  // Softmax is invariant to shifting a row, so the naive formula on the
  // shifted logits is the reference for the huge ones.
  const std::vector<double> huge = {1000, 1001, 1002, -1000, -1001, -1002};
  const std::vector<double> small = {0, 1, 2, 2, 1, 0};
  const auto want = NaiveSoftmax(small, 3);
  for (DType t : {DType::kFloat32, DType::kFloat64}) {
    INFO(DTypeName(t));
    auto sm = MustRun("Softmax", TypeAttr(t), {Make(t, huge, {2, 3})});
    CheckClose(sm[0], TensorShape({2, 3}), want, Tolerance(t), Tolerance(t));
    auto lsm = MustRun("LogSoftmax", TypeAttr(t), {Make(t, huge, {2, 3})});
    CheckClose(lsm[0], TensorShape({2, 3}), Log(want), 1e-5, 1e-6);
  }
  // Entries whose probability underflows still get a finite log.
  auto lsm = MustRun("LogSoftmax", TypeAttr(DType::kFloat32),
                     {Make(DType::kFloat32, {-1000, 0, 1000}, {3})});
  CheckClose(lsm[0], TensorShape({3}), {-2000, -1000, 0}, 1e-3);
}

TEST_CASE("Softmax takes empty tensors and refuses scalars") {
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    INFO(op);
    for (const TensorShape& shape : {TensorShape({0, 3}), TensorShape({2, 0}), TensorShape({0})}) {
      auto out = MustRun(op, TypeAttr(DType::kFloat32), {Make(DType::kFloat32, {}, shape)});
      CHECK(out[0].shape() == shape);
    }
    auto scalar = RunOp(Registry(), op, TypeAttr(DType::kFloat64), {Tensor::Scalar<double>(1)});
    REQUIRE(scalar.status().code() == Code::kInvalidArgument);
    CHECK(scalar.status().message().find("rank >= 1") != std::string::npos);

    const OpRegistration* reg = Registry().Find(op);
    REQUIRE(reg != nullptr);
    AttrMap attrs = TypeAttr(DType::kFloat32);
    InferenceContext c(attrs, {PartialShape(std::vector<int64_t>{})}, {DType::kFloat32}, {nullptr},
                       1);
    CHECK(reg->shape_fn(c).code() == Code::kInvalidArgument);
  }
}

}  // namespace
}  // namespace tfd::testing::nn
