// ops::CollectiveReduce in a session in one process: the attrs it sets and
// the shape it infers; alone in its group it is the identity, and a larger
// group is FAILED_PRECONDITION naming the node (it needs a cluster).
#include <catch2/catch.hpp>

#include "api/ops.h"
#include "common/gradients.h"
#include "tests/api/api_test_util.h"

namespace tfd {
namespace {

using testing::ApiEnv;

TEST_CASE("CollectiveReduce in one process: the identity alone, else needs a cluster") {
  ApiEnv env;
  const Scope root = env.Root();
  const Output x = ops::Const(root.WithOpName("x"), Tensor::FromVector<double>({1.5, -3}));
  const Output alone = ops::CollectiveReduce(root.WithOpName("alone"), x,
                                             {.group_size = 1, .final_op = "Div"});
  const Output grouped = ops::CollectiveReduce(
      root.WithOpName("grouped"), x, {.group_size = 2, .group_key = 3, .instance_key = 4});
  REQUIRE(root.ok());
  CHECK(alone.dtype == DType::kFloat64);
  auto out = env.Run(root, {}, {"alone"});
  REQUIRE(out.ok());
  CHECK(TensorsEqual((*out)[0], Tensor::FromVector<double>({1.5, -3})));
  auto bad = env.Run(root, {}, {"grouped"});
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().code() == Code::kFailedPrecondition);
  CHECK(bad.status().message().find("'grouped'") != std::string::npos);
  CHECK(bad.status().message().find("needs a cluster") != std::string::npos);
}

// TensorFlow registers no gradient for CollectiveReduce (all-reduce
// training reduces the gradients, train::AllReduceGradients): asking for
// one through it is an error naming the op and the node, never a silent
// zero or missing gradient.
TEST_CASE("gradients through CollectiveReduce are NOT_FOUND naming the op and the node") {
  ApiEnv env;
  const Scope root = env.Root();
  const Output x = ops::Placeholder(root.WithOpName("x"), DType::kFloat32, {2});
  const Output reduced = ops::CollectiveReduce(root.WithOpName("reduced"), x, {.group_size = 2});
  auto g = AddGradients(root, {ops::Sum(root, reduced, 0)}, {x});
  REQUIRE_FALSE(g.ok());
  CHECK(g.status().code() == Code::kNotFound);
  CHECK(g.status().message().find("CollectiveReduce") != std::string::npos);
  CHECK(g.status().message().find("'reduced'") != std::string::npos);
}

}  // namespace
}  // namespace tfd
