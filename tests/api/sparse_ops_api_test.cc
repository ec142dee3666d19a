// The sparse update ops in a graph run by a session, as a ps runs them: a
// ScatterSub step on an embedding table (TF's sparse SGD), and a bad id
// refused with an error that names the node and the id.
#include <catch2/catch.hpp>

#include "api/variables.h"
#include "tests/api/api_test_util.h"

namespace tfd {
namespace {

using testing::ApiEnv;

TEST_CASE("ScatterSub in a session updates the rows named and names the node of a bad id") {
  ApiEnv env;
  const Scope root = env.Root();
  const ops::Variable emb(root.WithOpName("emb"), {4, 2}, DType::kFloat32,
                          ops::Initializer::Constant(1));
  const Output ids = ops::Placeholder(root.WithOpName("ids"), DType::kInt64);
  const Output rows = ops::Placeholder(root.WithOpName("rows"), DType::kFloat32);
  root.WithOpName("sparse_sgd").AddOp("ScatterSub", {emb.ref(), ids, rows});
  ops::GlobalVariablesInitializer(root.WithOpName("init"));
  INFO(root.status().ToString());
  REQUIRE(root.ok());
  auto session = env.Session(root);
  REQUIRE(session->Run({}, {}, {"init"}).ok());

  const Tensor grad = Tensor::FromVector<float>({0.5f, 0.25f, 1, 2}, TensorShape({2, 2}));
  // Row 3 twice: both updates land.
  auto ok = session->Run({{"ids", Tensor::FromVector<int64_t>({3, 3})}, {"rows", grad}}, {},
                         {"sparse_sgd"});
  INFO(ok.status().ToString());
  REQUIRE(ok.ok());
  auto value = session->Run({}, {"emb/read"}, {});
  REQUIRE(value.ok());
  const Tensor& table = value->fetches[0];
  const std::vector<float> got(table.data<float>(), table.data<float>() + 8);
  CHECK(got == std::vector<float>{1, 1, 1, 1, 1, 1, 1 - 1.5f, 1 - 2.25f});

  auto bad = session->Run({{"ids", Tensor::FromVector<int64_t>({0, 9})}, {"rows", grad}}, {},
                          {"sparse_sgd"});
  CHECK(bad.status().code() == Code::kInvalidArgument);
  CHECK(bad.status().message().find("node 'sparse_sgd'") != std::string::npos);
  CHECK(bad.status().message().find("indices[1] = 9 is not in [0, 4)") != std::string::npos);
}

}  // namespace
}  // namespace tfd
