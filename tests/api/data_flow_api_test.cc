// The queue and accumulator wrappers (api/ops.h) in graphs run by a session:
// the attrs they set, the shapes they infer, errors that name the node.
#include <catch2/catch.hpp>

#include "api/ops.h"
#include "tests/api/api_test_util.h"

namespace tfd {
namespace {

using testing::ApiEnv;

std::vector<float> Floats(const Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.num_elements());
}

TEST_CASE("queue wrappers: tokens in as a batch, out one at a time") {
  ApiEnv env;
  const Scope root = env.Root();
  const Output q = ops::FIFOQueue(root.WithOpName("tokens"), {DType::kInt64},
                                  {PartialShape(std::vector<int64_t>{})}, 10, "token_queue");
  const Output step = ops::Placeholder(root.WithOpName("step"), DType::kInt64, {});
  ops::QueueEnqueueMany(root.WithOpName("release"), q, {ops::Fill(root, {3}, step)});
  ops::QueueEnqueue(root.WithOpName("one"), q, {step});
  const std::vector<Output> token = ops::QueueDequeue(root.WithOpName("token"), q, {DType::kInt64});
  REQUIRE(root.ok());
  REQUIRE(token.size() == 1);
  CHECK(q.is_ref);
  CHECK(token[0].dtype == DType::kInt64);

  REQUIRE(env.Run(root, {{"step", Tensor::Scalar<int64_t>(7)}}, {}, {"release"}).ok());
  REQUIRE(env.Run(root, {{"step", Tensor::Scalar<int64_t>(8)}}, {}, {"one"}).ok());
  for (int64_t want : {7, 7, 7, 8}) {
    auto out = env.Run(root, {}, {"token"});
    INFO(out.status().ToString());
    REQUIRE(out.ok());
    CHECK((*out)[0].scalar<int64_t>() == want);
  }
}

TEST_CASE("accumulator wrappers: apply, take with the accumulator's shape, set the step") {
  ApiEnv env;
  const Scope root = env.Root();
  const Output acc =
      ops::ConditionalAccumulator(root.WithOpName("acc"), DType::kFloat32, {-1, 2}, "w_grad");
  const Output grad = ops::Placeholder(root.WithOpName("grad"), DType::kFloat32);
  const Output step = ops::Placeholder(root.WithOpName("local_step"), DType::kInt64, {});
  ops::AccumulatorApplyGradient(root.WithOpName("apply"), acc, step, grad);
  const Output avg =
      ops::AccumulatorTakeGradient(root.WithOpName("average"), acc, 2, DType::kFloat32);
  ops::AccumulatorNumAccumulated(root.WithOpName("num"), acc);
  ops::AccumulatorSetGlobalStep(root.WithOpName("set_step"), acc, int64_t{5});
  INFO(root.status().ToString());
  REQUIRE(root.ok());
  // The take's output shape comes from the accumulator node.
  CHECK(avg.dtype == DType::kFloat32);
  CHECK(avg.shape == PartialShape({-1, 2}));

  auto apply = [&](int64_t local_step, std::vector<float> g) {
    return env
        .Run(root,
             {{"local_step", Tensor::Scalar(local_step)},
              {"grad", Tensor::FromVector<float>(g, TensorShape({1, 2}))}},
             {}, {"apply"})
        .status();
  };
  auto num = [&] {
    auto out = env.Run(root, {}, {"num"});
    REQUIRE(out.ok());
    return (*out)[0].scalar<int32_t>();
  };
  REQUIRE(apply(0, {1, 2}).ok());
  REQUIRE(apply(0, {3, 6}).ok());
  auto out = env.Run(root, {}, {"average"});
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  CHECK(Floats((*out)[0]) == std::vector<float>{2, 4});
  CHECK(num() == 0);

  REQUIRE(env.Run(root, {}, {}, {"set_step"}).ok());
  CHECK(apply(4, {1, 1}).ok());  // stale: dropped
  CHECK(num() == 0);
  CHECK(apply(5, {1, 1}).ok());
  CHECK(num() == 1);

  SECTION("a gradient of another shape: INVALID_ARGUMENT naming the node and both shapes") {
    Status s = env.Run(root,
                       {{"local_step", Tensor::Scalar<int64_t>(5)},
                        {"grad", Tensor::FromVector<float>({1, 2, 3}, TensorShape({1, 3}))}},
                       {}, {"apply"})
                   .status();
    CHECK(s.code() == Code::kInvalidArgument);
    INFO(s.message());
    CHECK(s.message().find("'apply'") != std::string::npos);
    CHECK(s.message().find("[?, 2]") != std::string::npos);
    CHECK(s.message().find("[1, 3]") != std::string::npos);
  }
}

TEST_CASE("sparse accumulator wrappers: rows of two replicas averaged, kept sparse") {
  ApiEnv env;
  const Scope root = env.Root();
  const Output acc = ops::SparseConditionalAccumulator(root.WithOpName("acc"), DType::kFloat32,
                                                       {10, 2}, "table_grad");
  const Output indices = ops::Placeholder(root.WithOpName("indices"), DType::kInt64, {-1});
  const Output rows = ops::Placeholder(root.WithOpName("rows"), DType::kFloat32, {-1, 2});
  ops::SparseAccumulatorApplyGradient(root.WithOpName("apply"), acc, int64_t{0}, indices, rows,
                                      {10, 2});
  const ops::SparseAccumulated taken =
      ops::SparseAccumulatorTakeGradient(root.WithOpName("average"), acc, 2, DType::kFloat32);
  INFO(root.status().ToString());
  REQUIRE(root.ok());
  // The rows' shape comes from the accumulator node.
  CHECK(taken.values.dtype == DType::kFloat32);
  CHECK(taken.values.shape == PartialShape({-1, 2}));
  CHECK(taken.indices.dtype == DType::kInt64);

  auto apply = [&](std::vector<int64_t> at, std::vector<float> r) {
    const int64_t n = static_cast<int64_t>(at.size());
    return env
        .Run(root,
             {{"indices", Tensor::FromVector<int64_t>(at, TensorShape({n}))},
              {"rows", Tensor::FromVector<float>(r, TensorShape({n, 2}))}},
             {}, {"apply"})
        .status();
  };
  REQUIRE(apply({7, 1}, {1, 2, 3, 4}).ok());
  REQUIRE(apply({1}, {5, 6}).ok());
  auto out = env.Run(root, {}, {"average:0", "average:1", "average:2"});
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  const Tensor& got_indices = (*out)[0];
  CHECK(std::vector<int64_t>(got_indices.data<int64_t>(),
                             got_indices.data<int64_t>() + got_indices.num_elements()) ==
        std::vector<int64_t>{1, 7});
  // MEAN over the two gradients taken: row 1 is (3+5)/2, (4+6)/2; row 7 is 1/2, 2/2.
  CHECK(Floats((*out)[1]) == std::vector<float>{4, 5, 0.5f, 1});
  CHECK((*out)[2].data<int64_t>()[0] == 10);
}

TEST_CASE("Auc wrapper: the area under the ROC curve of float32 or float64 scores") {
  ApiEnv env;
  const Scope root = env.Root();
  ops::Auc(root.WithOpName("auc32"), {0, 0, 1, 1}, {0.1f, 0.4f, 0.35f, 0.8f});
  const Output auc64 = ops::Auc(root.WithOpName("auc64"), {0.0f, 1.0f, 1.0f}, {0.9, 0.5, 0.2});
  INFO(root.status().ToString());
  REQUIRE(root.ok());
  CHECK(auc64.dtype == DType::kFloat64);
  CHECK(auc64.shape == PartialShape(std::vector<int64_t>{}));
  auto out = env.Run(root, {}, {"auc32", "auc64"});
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  // Of the four (positive, negative) pairs, three rank the positive higher.
  CHECK((*out)[0].scalar<double>() == 0.75);
  CHECK((*out)[1].scalar<double>() == 0.0);
}

TEST_CASE("a num_required that is not a scalar is refused when the graph is built") {
  const Scope root = Scope::NewRootScope(testing::AllOps());
  const Output acc = ops::ConditionalAccumulator(root, DType::kFloat32, {3});
  ops::AccumulatorTakeGradient(root, acc, {1, 2}, DType::kFloat32);
  CHECK(root.status().code() == Code::kInvalidArgument);
}

}  // namespace
}  // namespace tfd
