// CollectiveReduce as a kernel in one process: group_size 1 is the identity
// (the final op included), a larger group is FAILED_PRECONDITION naming the
// node, and bad attrs are INVALID_ARGUMENT.
#include <catch2/catch.hpp>

#include "kernels/register_all.h"
#include "tests/util/kernel_runner.h"

namespace tfd::testing {
namespace {

AttrMap Attrs(int64_t group_size, const std::string& merge = "Add",
              const std::string& final_op = "Div") {
  return {{"T", DType::kFloat32},          {"group_size", group_size},
          {"group_key", int64_t{1}},       {"instance_key", int64_t{2}},
          {"merge_op", std::string(merge)}, {"final_op", std::string(final_op)}};
}

TEST_CASE("CollectiveReduce alone in its group is the identity") {
  OpRegistry reg;
  REQUIRE(kernels::RegisterAll(reg).ok());
  const Tensor x = Tensor::FromVector<float>({1.5f, -2, NAN}, TensorShape({3, 1}));
  auto out = RunOp(reg, "CollectiveReduce", Attrs(1), {x});
  REQUIRE(out.ok());
  CHECK((*out)[0].shape() == x.shape());
  CHECK((*out)[0].data<float>()[0] == 1.5f);
  CHECK((*out)[0].data<float>()[1] == -2.0f);
  CHECK(std::isnan((*out)[0].data<float>()[2]));
  auto empty = RunOp(reg, "CollectiveReduce", Attrs(1), {Tensor::FromVector<float>({})});
  REQUIRE(empty.ok());
  CHECK((*empty)[0].num_elements() == 0);
}

TEST_CASE("CollectiveReduce in one process with a larger group needs a cluster") {
  OpRegistry reg;
  REQUIRE(kernels::RegisterAll(reg).ok());
  auto out = RunOp(reg, "CollectiveReduce", Attrs(4), {Tensor::FromVector<float>({1})});
  REQUIRE_FALSE(out.ok());
  CHECK(out.status().code() == Code::kFailedPrecondition);
  CHECK(out.status().message().find("needs a cluster") != std::string::npos);
}

TEST_CASE("CollectiveReduce's bad attrs are INVALID_ARGUMENT") {
  OpRegistry reg;
  REQUIRE(kernels::RegisterAll(reg).ok());
  const Tensor x = Tensor::FromVector<float>({1});
  CHECK(RunOp(reg, "CollectiveReduce", Attrs(1, "Sum"), {x}).status().code() ==
        Code::kInvalidArgument);
  CHECK(RunOp(reg, "CollectiveReduce", Attrs(1, "Add", "Mean"), {x}).status().code() ==
        Code::kInvalidArgument);
  CHECK(RunOp(reg, "CollectiveReduce", Attrs(0), {x}).status().code() == Code::kInvalidArgument);
}

}  // namespace
}  // namespace tfd::testing
