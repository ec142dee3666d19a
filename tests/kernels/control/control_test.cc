// Control ops: NoOp and ControlTrigger do nothing; Print passes its input
// through and logs TensorFlow's "message[values][values]" line.
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <catch2/catch.hpp>
#include <sstream>

#include "kernels/register_all.h"
#include "tests/util/kernel_runner.h"

namespace tfd::testing {
namespace {

struct PrintEnv {
  PrintEnv() {
    REQUIRE(kernels::RegisterAll(registry).ok());
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(log);
    sink->set_pattern("%v");  // the message alone, one per line
    env.logger = std::make_shared<spdlog::logger>("print_test", sink);
    env.resources = &resources;
  }
  StatusOr<std::vector<Tensor>> Run(const std::string& op, AttrMap attrs, std::vector<Tensor> in) {
    RunOpOptions options;
    options.env = &env;
    return RunOp(registry, op, std::move(attrs), std::move(in), options);
  }
  OpRegistry registry;
  ResourceMgr resources;
  KernelEnv env;
  std::ostringstream log;
};

TEST_CASE("Print passes its input through and logs message and data") {
  PrintEnv e;
  const Tensor input = Tensor::FromVector<float>({1.5f, 2.5f});
  auto out = e.Run("Print",
                   {{"T", DType::kFloat32},
                    {"U", std::vector<DType>{DType::kInt32, DType::kString, DType::kFloat64}},
                    {"message", std::string("loss: ")}},
                   {input, Tensor::FromVector<int32_t>({1, 2, 3, 4, 5}), Tensor::Scalar("hi"),
                    Tensor::FromVector<double>({1, 2, 3, 4}, {2, 2})});
  REQUIRE(out.ok());
  REQUIRE(out->size() == 1);
  CHECK(TensorsEqual((*out)[0], input));
  CHECK((*out)[0].buffer() == input.buffer());  // passed through, not copied
  // summarize = 3 by default: the first three values, then "...".
  CHECK(e.log.str() == "loss: [1 2 3...][\"hi\"][[1 2] [3...]]\n");
}

TEST_CASE("Print logs only the first first_n runs of a kernel") {
  PrintEnv e;
  auto reg = e.registry.Find("Print");
  REQUIRE(reg != nullptr);
  AttrMap attrs{{"T", DType::kInt32},
                {"U", std::vector<DType>{DType::kInt32}},
                {"message", std::string("step")},
                {"first_n", int64_t{2}},
                {"summarize", int64_t{-1}}};
  REQUIRE(CompleteAndCheckAttrs(reg->def, attrs).ok());
  NodeInfo node{"p", "Print", e.env.task + "/device:CPU:0"};
  OpKernelConstruction c(node, reg->def, attrs, {DType::kInt32, DType::kInt32}, {DType::kInt32},
                         e.env);
  auto kernel = reg->kernels.at(kDeviceCpu)(c);
  REQUIRE(kernel.ok());
  CancellationManager cm;
  StepContext step;
  step.cancellation = &cm;
  for (int i = 0; i < 4; ++i) {
    OpKernelContext ctx(**kernel, e.env, step,
                        {Value{Tensor::Scalar<int32_t>(i), nullptr},
                         Value{Tensor::FromVector<int32_t>({i, i, i, i}), nullptr}},
                        {DType::kInt32});
    (*kernel)->Compute(ctx);
    REQUIRE(ctx.status().ok());
    CHECK(ctx.outputs()[0].tensor.scalar<int32_t>() == i);
  }
  // summarize = -1 shows every value.
  CHECK(e.log.str() == "step[0 0 0 0]\nstep[1 1 1 1]\n");
}

TEST_CASE("Print handles scalars, empty tensors and no data") {
  PrintEnv e;
  auto out = e.Run("Print",
                   {{"T", DType::kBool}, {"U", std::vector<DType>{DType::kInt64, DType::kFloat32}}},
                   {Tensor::Scalar<bool>(true), Tensor::Scalar<int64_t>(7),
                    *Tensor::Allocate(DType::kFloat32, TensorShape({0}))});
  REQUIRE(out.ok());
  CHECK((*out)[0].scalar<bool>() == true);
  out = e.Run("Print",
              {{"T", DType::kInt32}, {"U", std::vector<DType>{}}, {"message", std::string("bare")}},
              {Tensor::Scalar<int32_t>(1)});
  REQUIRE(out.ok());
  CHECK(e.log.str() == "[7][]\nbare\n");
}

TEST_CASE("NoOp and ControlTrigger run and produce nothing") {
  PrintEnv e;
  for (const char* op : {"NoOp", "ControlTrigger"}) {
    auto out = e.Run(op, {}, {});
    REQUIRE(out.ok());
    CHECK(out->empty());
  }
  CHECK(e.registry.Find("ControlTrigger")->def.stateful);
  CHECK_FALSE(e.registry.Find("NoOp")->def.stateful);
}

}  // namespace
}  // namespace tfd::testing
