// L2Loss and the softmax cross-entropies: values against naive float64
// formulas, backprop outputs against finite differences of the loss, and
// the errors for bad labels and shapes.
#include <cmath>

#include "tests/kernels/nn/nn_test_util.h"

namespace tfd::testing::nn {
namespace {

// -sum_j labels[j] * log(softmax(x)[j]) per row, computed naively.
std::vector<double> NaiveXent(const std::vector<double>& x, const std::vector<double>& labels,
                              int64_t cols) {
  std::vector<double> loss(x.size() / cols);
  for (size_t r = 0; r < loss.size(); ++r) {
    double sum = 0;
    for (int64_t j = 0; j < cols; ++j) sum += std::exp(x[r * cols + j]);
    for (int64_t j = 0; j < cols; ++j) {
      loss[r] -= labels[r * cols + j] * std::log(std::exp(x[r * cols + j]) / sum);
    }
  }
  return loss;
}

std::vector<double> NaiveSoftmaxMinus(const std::vector<double>& x,
                                      const std::vector<double>& labels, int64_t cols) {
  std::vector<double> out(x.size());
  for (size_t r = 0; r < x.size() / cols; ++r) {
    double sum = 0;
    for (int64_t j = 0; j < cols; ++j) sum += std::exp(x[r * cols + j]);
    for (int64_t j = 0; j < cols; ++j) {
      out[r * cols + j] = std::exp(x[r * cols + j]) / sum - labels[r * cols + j];
    }
  }
  return out;
}

std::vector<double> OneHot(const std::vector<int64_t>& labels, int64_t cols) {
  std::vector<double> out(labels.size() * cols, 0.0);
  for (size_t r = 0; r < labels.size(); ++r) out[r * cols + labels[r]] = 1;
  return out;
}

const std::vector<double> kLogits = {0.5,  -1.0, 2.0,  0.0,  3.0, 3.0,
                                     -2.0, 1.0,  -0.5, 0.25, 1.5, -3.0};
const std::vector<double> kLabels = {0.2, 0.3, 0.5, 0.0, 1.0, 0.0, 0.1, 0.1, 0.8, 0.25, 0.25, 0.5};

TEST_CASE("L2Loss is half the sum of squares") {
  for (DType t : {DType::kFloat32, DType::kFloat64}) {
    INFO(DTypeName(t));
    auto out = MustRun("L2Loss", TypeAttr(t), {Make(t, {1, -2, 3, 0.5, -0.25, 4}, {2, 3})});
    CheckClose(out[0], TensorShape(), {(1 + 4 + 9 + 0.25 + 0.0625 + 16) / 2}, Tolerance(t),
               Tolerance(t));
    auto scalar = MustRun("L2Loss", TypeAttr(t), {Make(t, {-3}, {})});
    CheckClose(scalar[0], TensorShape(), {4.5}, 0);
    auto empty = MustRun("L2Loss", TypeAttr(t), {Make(t, {}, {0, 4})});
    CheckClose(empty[0], TensorShape(), {0}, 0);
  }
}

TEST_CASE("SoftmaxCrossEntropyWithLogits matches the naive loss and softmax - labels") {
  const TensorShape shape({4, 3});
  for (DType t : {DType::kFloat32, DType::kFloat64}) {
    INFO(DTypeName(t));
    auto out = MustRun("SoftmaxCrossEntropyWithLogits", TypeAttr(t),
                       {Make(t, kLogits, shape), Make(t, kLabels, shape)});
    REQUIRE(out.size() == 2);
    CheckClose(out[0], TensorShape({4}), NaiveXent(kLogits, kLabels, 3), Tolerance(t),
               Tolerance(t));
    CheckClose(out[1], shape, NaiveSoftmaxMinus(kLogits, kLabels, 3), Tolerance(t), Tolerance(t));
  }
}

TEST_CASE("SoftmaxCrossEntropyWithLogits backprop is the derivative of its loss") {
  const TensorShape shape({4, 3});
  const Tensor logits = Doubles(kLogits, shape);
  const Tensor labels = Doubles(kLabels, shape);  // each row sums to 1
  const Tensor dloss = Doubles({0.5, -1.0, 2.0, 1.5}, {4});
  auto out = MustRun("SoftmaxCrossEntropyWithLogits", TypeAttr(DType::kFloat64), {logits, labels});
  // d/dlogits of sum_b dloss[b] * loss[b] = backprop scaled by its row's dloss.
  std::vector<double> analytic = Values(out[1]);
  for (size_t i = 0; i < analytic.size(); ++i) analytic[i] *= dloss.data<double>()[i / 3];
  Status s = CheckGradient(OpFunction("SoftmaxCrossEntropyWithLogits", TypeAttr(DType::kFloat64)),
                           {logits, labels}, 0, dloss, Doubles(analytic, shape));
  INFO(s.message());
  CHECK(s.ok());
}

TEST_CASE("SparseSoftmaxCrossEntropyWithLogits matches the dense op on one-hot labels") {
  const TensorShape shape({4, 3});
  const std::vector<int64_t> classes = {2, 1, 0, 1};
  const auto onehot = OneHot(classes, 3);
  for (DType t : {DType::kFloat32, DType::kFloat64}) {
    for (DType l : {DType::kInt32, DType::kInt64}) {
      INFO(DTypeName(t) << " labels " << DTypeName(l));
      Tensor labels = l == DType::kInt64 ? Tensor::FromVector<int64_t>(classes)
                                         : Tensor::FromVector<int32_t>({2, 1, 0, 1});
      auto out = MustRun("SparseSoftmaxCrossEntropyWithLogits", {{"T", t}, {"Tlabels", l}},
                         {Make(t, kLogits, shape), labels});
      CheckClose(out[0], TensorShape({4}), NaiveXent(kLogits, onehot, 3), Tolerance(t),
                 Tolerance(t));
      CheckClose(out[1], shape, NaiveSoftmaxMinus(kLogits, onehot, 3), Tolerance(t), Tolerance(t));
    }
  }
}

TEST_CASE("SparseSoftmaxCrossEntropyWithLogits backprop is the derivative of its loss") {
  const TensorShape shape({4, 3});
  const Tensor logits = Doubles(kLogits, shape);
  const Tensor labels = Tensor::FromVector<int64_t>({0, 2, 2, 1});
  const Tensor dloss = Doubles({1.0, -0.5, 0.75, 2.0}, {4});
  const AttrMap attrs = {{"T", DType::kFloat64}};
  auto out = MustRun("SparseSoftmaxCrossEntropyWithLogits", attrs, {logits, labels});
  std::vector<double> analytic = Values(out[1]);
  for (size_t i = 0; i < analytic.size(); ++i) analytic[i] *= dloss.data<double>()[i / 3];
  Status s = CheckGradient(OpFunction("SparseSoftmaxCrossEntropyWithLogits", attrs),
                           {logits, labels}, 0, dloss, Doubles(analytic, shape));
  INFO(s.message());
  CHECK(s.ok());
}

TEST_CASE("cross-entropies stay finite for logits that overflow a naive softmax") {
  // Row 0: the labelled class wins by 1000 -> loss ~0; row 1: it loses by
  // 2000 -> loss ~2000, with softmax saturated to one-hot.
  const std::vector<double> logits = {1000, 0, -1000, -1000, 0, 1000};
  const std::vector<double> labels = {1, 0, 0, 1, 0, 0};
  for (DType t : {DType::kFloat32, DType::kFloat64}) {
    INFO(DTypeName(t));
    auto dense = MustRun("SoftmaxCrossEntropyWithLogits", TypeAttr(t),
                         {Make(t, logits, {2, 3}), Make(t, labels, {2, 3})});
    CheckClose(dense[0], TensorShape({2}), {0, 2000}, 1e-3);
    CheckClose(dense[1], TensorShape({2, 3}), {0, 0, 0, -1, 0, 1}, 1e-6);
    auto sparse = MustRun("SparseSoftmaxCrossEntropyWithLogits", {{"T", t}},
                          {Make(t, logits, {2, 3}), Tensor::FromVector<int64_t>({0, 0})});
    CheckClose(sparse[0], TensorShape({2}), {0, 2000}, 1e-3);
    CheckClose(sparse[1], TensorShape({2, 3}), {0, 0, 0, -1, 0, 1}, 1e-6);
  }
}

TEST_CASE("cross-entropies take an empty batch") {
  auto dense = MustRun("SoftmaxCrossEntropyWithLogits", TypeAttr(DType::kFloat32),
                       {Make(DType::kFloat32, {}, {0, 3}), Make(DType::kFloat32, {}, {0, 3})});
  CHECK(dense[0].shape() == TensorShape({0}));
  CHECK(dense[1].shape() == TensorShape({0, 3}));
  auto sparse = MustRun("SparseSoftmaxCrossEntropyWithLogits", {{"T", DType::kFloat64}},
                        {Doubles({}, {0, 3}), Tensor::FromVector<int64_t>({})});
  CHECK(sparse[0].shape() == TensorShape({0}));
  CHECK(sparse[1].shape() == TensorShape({0, 3}));
}

TEST_CASE("SparseSoftmaxCrossEntropyWithLogits refuses labels outside [0, classes)") {
  const Tensor logits = Doubles(kLogits, {4, 3});
  for (int32_t bad : {3, -1}) {
    INFO("bad label " << bad);
    auto out = RunOp(Registry(), "SparseSoftmaxCrossEntropyWithLogits",
                     {{"T", DType::kFloat64}, {"Tlabels", DType::kInt32}},
                     {logits, Tensor::FromVector<int32_t>({0, 2, bad, 1})});
    REQUIRE(out.status().code() == Code::kInvalidArgument);
    const std::string& m = out.status().message();
    CHECK(m.find("labels[2] = " + std::to_string(bad)) != std::string::npos);
    CHECK(m.find("3 classes") != std::string::npos);
  }
  auto wrong_batch = RunOp(Registry(), "SparseSoftmaxCrossEntropyWithLogits",
                           {{"T", DType::kFloat64}}, {logits, Tensor::FromVector<int64_t>({0, 1})});
  REQUIRE(wrong_batch.status().code() == Code::kInvalidArgument);
  CHECK(wrong_batch.status().message().find("[2]") != std::string::npos);
}

TEST_CASE("SoftmaxCrossEntropyWithLogits refuses mismatched or non-matrix inputs") {
  auto mismatch = RunOp(Registry(), "SoftmaxCrossEntropyWithLogits", TypeAttr(DType::kFloat64),
                        {Doubles(kLogits, {4, 3}), Doubles(kLogits, {3, 4})});
  REQUIRE(mismatch.status().code() == Code::kInvalidArgument);
  CHECK(mismatch.status().message().find("[3, 4]") != std::string::npos);
  auto vector = RunOp(Registry(), "SoftmaxCrossEntropyWithLogits", TypeAttr(DType::kFloat64),
                      {Doubles({1, 2}, {2}), Doubles({1, 0}, {2})});
  CHECK(vector.status().code() == Code::kInvalidArgument);

  // The shape function catches the same at graph time and infers the rest.
  const OpRegistration* reg = Registry().Find("SparseSoftmaxCrossEntropyWithLogits");
  REQUIRE(reg != nullptr);
  AttrMap attrs = {{"T", DType::kFloat32}, {"Tlabels", DType::kInt64}};
  InferenceContext ok(attrs, {PartialShape({-1, 10}), PartialShape({32})},
                      {DType::kFloat32, DType::kInt64}, {nullptr, nullptr}, 2);
  REQUIRE(reg->shape_fn(ok).ok());
  CHECK(ok.output(0) == PartialShape({32}));
  CHECK(ok.output(1) == PartialShape({32, 10}));
  InferenceContext bad(attrs, {PartialShape({16, 10}), PartialShape({32})},
                       {DType::kFloat32, DType::kInt64}, {nullptr, nullptr}, 2);
  CHECK(reg->shape_fn(bad).code() == Code::kInvalidArgument);
}

}  // namespace
}  // namespace tfd::testing::nn
