// Gradient accumulator ops: averaging, stale gradients, one gradient per
// replica, the global step, takes that wait without a thread and end with
// the step, sharing by name.
#include <atomic>
#include <thread>

#include "common/graph.h"
#include "common/graph_io.h"
#include "kernels/data_flow/conditional_accumulator.h"
#include "tests/kernels/data_flow/queue_test_util.h"

namespace tfd::testing {
namespace {

using kernels::ConditionalAccumulator;

// The accumulator a ConditionalAccumulator kernel outputs.
std::shared_ptr<ResourceBase> NewAccumulator(QueueTestEnv& e, const std::string& name,
                                             PartialShape shape, DType dtype = DType::kFloat32) {
  auto out = e.Run("ConditionalAccumulator",
                   {{"dtype", dtype}, {"shape", std::move(shape)}, {"shared_name", name}}, {});
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  REQUIRE((*out)[0].is_ref());
  return (*out)[0].ref;
}

ConditionalAccumulator& Acc(const std::shared_ptr<ResourceBase>& r) {
  auto* acc = dynamic_cast<ConditionalAccumulator*>(r.get());
  REQUIRE(acc != nullptr);
  return *acc;
}

// `replica`: the task whose session runs the step (StepContext::master);
// empty, as for a session in one process, names none.
Status Apply(QueueTestEnv& e, const std::shared_ptr<ResourceBase>& acc, int64_t local_step,
             Tensor gradient, std::string replica = {}) {
  const DType dtype = gradient.dtype();
  return e
      .Run("AccumulatorApplyGradient", {{"dtype", dtype}},
           {Ref(acc), Val(Tensor::Scalar<int64_t>(local_step)), Val(std::move(gradient))}, nullptr,
           std::move(replica))
      .status();
}

const std::string kWorker0 = "/job:worker/replica:0/task:0";
const std::string kWorker1 = "/job:worker/replica:0/task:1";
const std::string kWorker2 = "/job:worker/replica:0/task:2";

Tensor Vec(std::vector<float> v) { return Tensor::FromVector<float>(v); }

std::vector<float> Floats(const Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.num_elements());
}

StatusOr<std::vector<Value>> Take(QueueTestEnv& e, const std::shared_ptr<ResourceBase>& acc,
                                  int32_t num_required, DType dtype = DType::kFloat32) {
  return e.Run("AccumulatorTakeGradient", {{"dtype", dtype}},
               {Ref(acc), Val(Tensor::Scalar<int32_t>(num_required))});
}

std::unique_ptr<AsyncCall> StartTake(QueueTestEnv& e, const std::shared_ptr<ResourceBase>& acc,
                                     int32_t num_required, CancellationManager* cm = nullptr) {
  return e.Start("AccumulatorTakeGradient", {{"dtype", DType::kFloat32}},
                 {Ref(acc), Val(Tensor::Scalar<int32_t>(num_required))}, cm);
}

int32_t NumAccumulated(QueueTestEnv& e, const std::shared_ptr<ResourceBase>& acc) {
  auto out = e.Run("AccumulatorNumAccumulated", {}, {Ref(acc)});
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  return (*out)[0].tensor.scalar<int32_t>();
}

Status SetGlobalStep(QueueTestEnv& e, const std::shared_ptr<ResourceBase>& acc, int64_t step) {
  return e.Run("AccumulatorSetGlobalStep", {}, {Ref(acc), Val(Tensor::Scalar<int64_t>(step))})
      .status();
}

TEST_CASE("a take averages the N gradients applied and empties the accumulator") {
  QueueTestEnv e;
  auto acc = NewAccumulator(e, "acc", PartialShape({2}));
  REQUIRE(Apply(e, acc, 0, Vec({1, 10})).ok());
  REQUIRE(Apply(e, acc, 0, Vec({2, 20})).ok());
  REQUIRE(Apply(e, acc, 0, Vec({6, 60})).ok());
  CHECK(NumAccumulated(e, acc) == 3);
  auto out = Take(e, acc, 3);
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  CHECK((*out)[0].tensor.shape() == TensorShape({2}));
  CHECK(Floats((*out)[0].tensor) == std::vector<float>{3, 30});
  CHECK(NumAccumulated(e, acc) == 0);
  CHECK(Acc(acc).global_step() == 1);

  SECTION("the inputs are not written to") {
    Tensor g = Vec({4, 4});
    REQUIRE(Apply(e, acc, 1, g).ok());
    REQUIRE(Apply(e, acc, 1, Vec({2, 2})).ok());
    REQUIRE(Take(e, acc, 2).ok());
    CHECK(Floats(g) == std::vector<float>{4, 4});
  }
  SECTION("more than num_required: the average of all of them") {
    REQUIRE(Apply(e, acc, 1, Vec({1, 1})).ok());
    REQUIRE(Apply(e, acc, 1, Vec({3, 5})).ok());
    auto avg = Take(e, acc, 1);
    REQUIRE(avg.ok());
    CHECK(Floats((*avg)[0].tensor) == std::vector<float>{2, 3});
  }
}

TEST_CASE("float64 gradients average as float64") {
  QueueTestEnv e;
  auto acc = NewAccumulator(e, "acc64", PartialShape({}), DType::kFloat64);
  REQUIRE(Apply(e, acc, 0, Tensor::Scalar<double>(1)).ok());
  REQUIRE(Apply(e, acc, 0, Tensor::Scalar<double>(2)).ok());
  auto out = Take(e, acc, 2, DType::kFloat64);
  REQUIRE(out.ok());
  CHECK((*out)[0].tensor.dtype() == DType::kFloat64);
  CHECK((*out)[0].tensor.scalar<double>() == 1.5);

  SECTION("a float32 op on it is refused") {
    Status s = Apply(e, acc, 1, Tensor::Scalar<float>(1));
    CHECK(s.code() == Code::kInvalidArgument);
    CHECK(Contains(s.message(), "accumulator 'acc64' holds float64"));
  }
}

TEST_CASE("a take advances the global step: gradients of the old step are stale") {
  QueueTestEnv e;
  auto acc = NewAccumulator(e, "steps", PartialShape({1}));
  REQUIRE(Apply(e, acc, 0, Vec({1})).ok());
  REQUIRE(Take(e, acc, 1).ok());
  CHECK(Acc(acc).global_step() == 1);

  // Computed against step 0, arriving after the take: dropped, not an error.
  CHECK(Apply(e, acc, 0, Vec({100})).ok());
  CHECK(NumAccumulated(e, acc) == 0);
  CHECK(Acc(acc).num_stale_dropped() == 1);
  CHECK(Contains(Acc(acc).DebugString(), "1 stale dropped"));

  // Current and future steps are accumulated.
  REQUIRE(Apply(e, acc, 1, Vec({2})).ok());
  REQUIRE(Apply(e, acc, 3, Vec({4})).ok());
  CHECK(NumAccumulated(e, acc) == 2);
  auto out = Take(e, acc, 2);
  REQUIRE(out.ok());
  CHECK(Floats((*out)[0].tensor) == std::vector<float>{3});
  CHECK(Acc(acc).global_step() == 2);
}

TEST_CASE("a take waits without a thread until the N-th gradient arrives") {
  QueueTestEnv e;
  auto acc = NewAccumulator(e, "waiting", PartialShape({2}));
  auto take = StartTake(e, acc, 2);
  // ComputeAsync returned with nothing to take: no thread waits.
  CHECK_FALSE(take->finished());
  REQUIRE(Apply(e, acc, 0, Vec({1, 2})).ok());
  CHECK_FALSE(take->finished());
  CHECK(NumAccumulated(e, acc) == 1);
  CHECK(Acc(acc).global_step() == 0);

  // Catch2's assertions are not thread-safe: the thread only records.
  Status applied;
  std::thread worker([&] { applied = Apply(e, acc, 0, Vec({3, 4})); });
  REQUIRE(take->Wait());
  worker.join();
  CHECK(applied.ok());
  INFO(take->status().ToString());
  REQUIRE(take->status().ok());
  CHECK(Floats(take->output(0)) == std::vector<float>{2, 3});
  CHECK(NumAccumulated(e, acc) == 0);
  CHECK(Acc(acc).global_step() == 1);
  CHECK(take->done_calls() == 1);
}

TEST_CASE("gradients applied from several threads are all counted in one take") {
  QueueTestEnv e;
  auto acc = NewAccumulator(e, "busy", PartialShape({}));
  constexpr int kPerThread = 100;
  auto take = StartTake(e, acc, 2 * kPerThread);
  std::atomic<int> failures{0};
  std::vector<std::thread> workers;
  for (int w = 0; w < 2; ++w) {
    workers.emplace_back([&, w] {
      // Worker 0 sends 1s and worker 1 sends 3s: the average is 2.
      for (int i = 0; i < kPerThread; ++i) {
        failures += !Apply(e, acc, 0, Tensor::Scalar<float>(w == 0 ? 1.f : 3.f)).ok();
      }
    });
  }
  REQUIRE(take->Wait());
  for (auto& t : workers) t.join();
  CHECK(failures == 0);
  REQUIRE(take->status().ok());
  CHECK(take->output(0).scalar<float>() == 2);
  CHECK(NumAccumulated(e, acc) == 0);
  CHECK(Acc(acc).global_step() == 1);
}

TEST_CASE("concurrent takers are served in arrival order") {
  QueueTestEnv e;
  auto acc = NewAccumulator(e, "ordered", PartialShape({}));
  auto first = StartTake(e, acc, 2);
  auto second = StartTake(e, acc, 1);
  REQUIRE(Apply(e, acc, 0, Tensor::Scalar<float>(1)).ok());
  // One gradient would do for the second, but the first came earlier.
  CHECK_FALSE(first->finished());
  CHECK_FALSE(second->finished());
  REQUIRE(Apply(e, acc, 0, Tensor::Scalar<float>(3)).ok());
  REQUIRE(first->finished());
  REQUIRE(first->status().ok());
  CHECK(first->output(0).scalar<float>() == 2);
  // The first take emptied the accumulator and moved it to step 1.
  CHECK_FALSE(second->finished());
  REQUIRE(Apply(e, acc, 0, Tensor::Scalar<float>(50)).ok());  // stale now
  CHECK_FALSE(second->finished());
  REQUIRE(Apply(e, acc, 1, Tensor::Scalar<float>(7)).ok());
  REQUIRE(second->finished());
  REQUIRE(second->status().ok());
  CHECK(second->output(0).scalar<float>() == 7);
  CHECK(Acc(acc).global_step() == 2);
}

TEST_CASE("a waiting take ends with the step's deadline or cancellation") {
  QueueTestEnv e;
  auto acc = NewAccumulator(e, "grads", PartialShape({2}));
  REQUIRE(Apply(e, acc, 0, Vec({1, 1})).ok());

  SECTION("deadline") {
    CancellationManager cm;
    auto take = StartTake(e, acc, 3, &cm);
    CHECK_FALSE(take->finished());
    cm.Cancel(errors::DeadlineExceeded("step 7 passed its deadline"));
    REQUIRE(take->finished());
    CHECK(take->status().code() == Code::kDeadlineExceeded);
    CHECK(take->status().message() ==
          "step 7 passed its deadline while taking the average gradient from accumulator "
          "'grads' (have 1 of 3 required, global step 0)");
    CHECK(take->done_calls() == 1);
  }
  SECTION("cancellation") {
    CancellationManager cm;
    auto take = StartTake(e, acc, 2, &cm);
    cm.Cancel(errors::Cancelled("step 3 was cancelled"));
    REQUIRE(take->finished());
    CHECK(take->status().code() == Code::kCancelled);
    CHECK(Contains(take->status().message(), "accumulator 'grads' (have 1 of 2 required"));
  }
  SECTION("a step already cancelled fails at once") {
    CancellationManager cm;
    cm.Cancel(errors::DeadlineExceeded("too late"));
    auto take = StartTake(e, acc, 1, &cm);
    CHECK(take->finished());
    CHECK(take->status().code() == Code::kDeadlineExceeded);
  }
  // The cancelled waiter is gone: it took nothing and blocks no later taker.
  CHECK(NumAccumulated(e, acc) == 1);
  CHECK(Acc(acc).global_step() == 0);
  REQUIRE(Apply(e, acc, 0, Vec({3, 3})).ok());
  auto out = Take(e, acc, 2);
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  CHECK(Floats((*out)[0].tensor) == std::vector<float>{2, 2});
}

TEST_CASE("SetGlobalStep discards the gradients it makes stale") {
  QueueTestEnv e;
  auto acc = NewAccumulator(e, "restored", PartialShape({}));
  REQUIRE(Apply(e, acc, 0, Tensor::Scalar<float>(1)).ok());
  REQUIRE(Apply(e, acc, 2, Tensor::Scalar<float>(2)).ok());
  REQUIRE(Apply(e, acc, 5, Tensor::Scalar<float>(5)).ok());
  REQUIRE(Apply(e, acc, 7, Tensor::Scalar<float>(9)).ok());
  REQUIRE(SetGlobalStep(e, acc, 5).ok());
  CHECK(Acc(acc).global_step() == 5);
  CHECK(NumAccumulated(e, acc) == 2);
  CHECK(Apply(e, acc, 4, Tensor::Scalar<float>(100)).ok());  // stale
  CHECK(NumAccumulated(e, acc) == 2);
  auto out = Take(e, acc, 2);
  REQUIRE(out.ok());
  CHECK((*out)[0].tensor.scalar<float>() == 7);
  CHECK(Acc(acc).global_step() == 6);

  SECTION("the step may also go back") {
    REQUIRE(SetGlobalStep(e, acc, 0).ok());
    REQUIRE(Apply(e, acc, 0, Tensor::Scalar<float>(4)).ok());
    CHECK(NumAccumulated(e, acc) == 1);
  }
  SECTION("a new_global_step that is not a scalar is refused") {
    auto bad = e.Run("AccumulatorSetGlobalStep", {},
                     {Ref(acc), Val(Tensor::FromVector<int64_t>({1, 2}))});
    CHECK(bad.status().code() == Code::kInvalidArgument);
  }
}

// The double count a restart caused: a replica pushed its gradient, its
// task died before the round's take, the restarted task's trainer read the
// same global step and pushed again. Each replica counts once per take.
TEST_CASE("a replica's second gradient before the take is dropped, not counted") {
  QueueTestEnv e;
  auto acc = NewAccumulator(e, "replicas", PartialShape({1}));
  REQUIRE(Apply(e, acc, 0, Vec({2}), kWorker0).ok());
  // Restarted twice within the round: both pushes are dropped.
  CHECK(Apply(e, acc, 0, Vec({100}), kWorker0).ok());
  CHECK(Apply(e, acc, 0, Vec({1000}), kWorker0).ok());
  CHECK(NumAccumulated(e, acc) == 1);
  CHECK(Acc(acc).num_duplicates_dropped() == 2);
  CHECK(Contains(Acc(acc).DebugString(), "2 duplicates dropped"));

  // A take of 2 still waits for a second replica.
  auto take = StartTake(e, acc, 2);
  CHECK_FALSE(take->finished());
  REQUIRE(Apply(e, acc, 0, Vec({4}), kWorker1).ok());
  REQUIRE(take->Wait());
  REQUIRE(take->status().ok());
  CHECK(Floats(take->output(0)) == std::vector<float>{3});  // (2 + 4) / 2: no 100, no 1000
  CHECK(Acc(acc).global_step() == 1);

  SECTION("after the take every replica counts again") {
    REQUIRE(Apply(e, acc, 1, Vec({10}), kWorker0).ok());
    REQUIRE(Apply(e, acc, 1, Vec({20}), kWorker1).ok());
    CHECK(NumAccumulated(e, acc) == 2);
    auto out = Take(e, acc, 2);
    REQUIRE(out.ok());
    CHECK(Floats((*out)[0].tensor) == std::vector<float>{15});
  }
  SECTION("a replica pushing again at a later step before the take counts once") {
    // worker:0 pushes at step 1 and, before the take, again at step 2.
    REQUIRE(Apply(e, acc, 1, Vec({10}), kWorker0).ok());
    CHECK(Apply(e, acc, 2, Vec({30}), kWorker0).ok());
    CHECK(NumAccumulated(e, acc) == 1);
    REQUIRE(Apply(e, acc, 1, Vec({20}), kWorker2).ok());
    auto out = Take(e, acc, 2);
    REQUIRE(out.ok());
    CHECK(Floats((*out)[0].tensor) == std::vector<float>{15});
  }
  SECTION("a stale gradient is stale, whoever sends it") {
    CHECK(Apply(e, acc, 0, Vec({7}), kWorker2).ok());
    CHECK(Acc(acc).num_stale_dropped() == 1);
    CHECK(NumAccumulated(e, acc) == 0);
  }
  SECTION("gradients naming no replica (a session in one process) all count") {
    REQUIRE(Apply(e, acc, 1, Vec({1})).ok());
    REQUIRE(Apply(e, acc, 1, Vec({3})).ok());
    CHECK(NumAccumulated(e, acc) == 2);
    CHECK(Acc(acc).num_duplicates_dropped() == 2);  // the two before the first take
  }
}

TEST_CASE("SetGlobalStep frees the replicas whose gradients it discards") {
  QueueTestEnv e;
  auto acc = NewAccumulator(e, "restored_replicas", PartialShape({}));
  REQUIRE(Apply(e, acc, 3, Tensor::Scalar<float>(1), kWorker0).ok());
  REQUIRE(Apply(e, acc, 5, Tensor::Scalar<float>(2), kWorker1).ok());
  // A chief restoring step 5: worker:0's step-3 gradient is discarded, so
  // worker:0 may send the restored step's; worker:1's is kept and counts.
  REQUIRE(SetGlobalStep(e, acc, 5).ok());
  REQUIRE(Apply(e, acc, 5, Tensor::Scalar<float>(6), kWorker0).ok());
  CHECK(Apply(e, acc, 5, Tensor::Scalar<float>(50), kWorker1).ok());  // its second
  CHECK(NumAccumulated(e, acc) == 2);
  CHECK(Acc(acc).num_duplicates_dropped() == 1);
  auto out = Take(e, acc, 2);
  REQUIRE(out.ok());
  CHECK((*out)[0].tensor.scalar<float>() == 4);
}

TEST_CASE("gradients must fit the declared shape and the ones already in") {
  QueueTestEnv e;
  SECTION("the declared shape") {
    auto acc = NewAccumulator(e, "fixed", PartialShape({2}));
    Status s = Apply(e, acc, 0, Vec({1, 2, 3}));
    CHECK(s.code() == Code::kInvalidArgument);
    CHECK(s.message() == "accumulator 'fixed' takes gradients of shape [2] but got shape [3]");
    CHECK(NumAccumulated(e, acc) == 0);
  }
  SECTION("the gradients already accumulated") {
    auto acc = NewAccumulator(e, "partial", PartialShape({-1}));
    REQUIRE(Apply(e, acc, 0, Vec({1, 2})).ok());
    Status s = Apply(e, acc, 0, Vec({1, 2, 3}));
    CHECK(s.code() == Code::kInvalidArgument);
    CHECK(s.message() ==
          "accumulator 'partial' holds 1 gradients of shape [2] but got shape [3]");
    // Stale or not: a wrong shape is a bug.
    CHECK(Apply(e, acc, -1, Vec({1, 2, 3})).code() == Code::kInvalidArgument);
    CHECK(NumAccumulated(e, acc) == 1);
    // Once emptied, another size fits the partial shape.
    REQUIRE(Take(e, acc, 1).ok());
    REQUIRE(Apply(e, acc, 1, Vec({1, 2, 3})).ok());
  }
  SECTION("a take declaring another shape than the accumulator's") {
    auto acc = NewAccumulator(e, "declared", PartialShape({2}));
    REQUIRE(Apply(e, acc, 0, Vec({1, 2})).ok());
    auto out = e.Run("AccumulatorTakeGradient",
                     {{"dtype", DType::kFloat32}, {"shape", PartialShape({3})}},
                     {Ref(acc), Val(Tensor::Scalar<int32_t>(1))});
    CHECK(out.status().code() == Code::kInvalidArgument);
    CHECK(Contains(out.status().message(), "[3]"));
    CHECK(NumAccumulated(e, acc) == 1);  // nothing was taken
  }
}

TEST_CASE("num_required must be at least 1") {
  QueueTestEnv e;
  auto acc = NewAccumulator(e, "acc", PartialShape({}));
  REQUIRE(Apply(e, acc, 0, Tensor::Scalar<float>(1)).ok());
  for (int32_t n : {0, -1}) {
    auto out = Take(e, acc, n);
    CHECK(out.status().code() == Code::kInvalidArgument);
    CHECK(Contains(out.status().message(), "num_required must be >= 1"));
  }
  CHECK(NumAccumulated(e, acc) == 1);
  CHECK(Acc(acc).global_step() == 0);
}

TEST_CASE("a constant num_required below 1 is refused when the graph is checked") {
  OpRegistry registry;
  REQUIRE(kernels::RegisterAll(registry).ok());
  auto def = ParseGraph(R"((nodes = [
      (name = "acc", op = "ConditionalAccumulator", attrs = [
         (name = "dtype", value = (type = float32)),
         (name = "shape", value = (shape = (dims = [])))]),
      (name = "n", op = "Const", attrs = [(name = "dtype", value = (type = int32)),
         (name = "value", value = (tensor = (dtype = int32, shape = [], int32Val = [0])))]),
      (name = "take", op = "AccumulatorTakeGradient", inputs = ["acc", "n"], attrs = [
         (name = "dtype", value = (type = float32))])]))",
                        "take.txt");
  REQUIRE(def.ok());
  auto graph = Graph::Build(std::move(def).value(), registry);
  INFO(graph.status().ToString());
  CHECK(graph.status().code() == Code::kInvalidArgument);
  CHECK(Contains(graph.status().message(),
                 "node 'take' (AccumulatorTakeGradient): num_required must be >= 1 but is 0"));
}

TEST_CASE("kernels naming the same shared_name share one accumulator") {
  QueueTestEnv e;
  auto a = NewAccumulator(e, "shared_grad", PartialShape({2}));
  auto b = NewAccumulator(e, "shared_grad", PartialShape({2}));
  CHECK(a == b);
  REQUIRE(Apply(e, a, 0, Vec({1, 1})).ok());
  CHECK(NumAccumulated(e, b) == 1);
  CHECK(e.resources().Lookup<ConditionalAccumulator>("", "shared_grad").ok());

  SECTION("declared differently elsewhere: refused") {
    auto other = e.Run("ConditionalAccumulator",
                       {{"dtype", DType::kFloat64},
                        {"shape", PartialShape({2})},
                        {"shared_name", std::string("shared_grad")}},
                       {});
    CHECK(other.status().code() == Code::kInvalidArgument);
    CHECK(Contains(other.status().message(), "accumulator 'shared_grad'"));
  }
  SECTION("another container holds another accumulator") {
    auto other = e.Run("ConditionalAccumulator",
                       {{"dtype", DType::kFloat32},
                        {"shape", PartialShape({2})},
                        {"container", std::string("c2")},
                        {"shared_name", std::string("shared_grad")}},
                       {});
    REQUIRE(other.ok());
    CHECK((*other)[0].ref != a);
  }
  SECTION("without a shared_name, the node name") {
    auto unnamed = e.Run("ConditionalAccumulator",
                         {{"dtype", DType::kFloat32}, {"shape", PartialShape({2})}}, {});
    REQUIRE(unnamed.ok());
    CHECK(e.resources().Lookup<ConditionalAccumulator>("", "test_ConditionalAccumulator").ok());
  }
  SECTION("a queue is not an accumulator") {
    auto q = e.NewQueue("q", {DType::kFloat32}, {}, -1);
    CHECK(NumAccumulated(e, a) == 1);
    auto out = e.Run("AccumulatorNumAccumulated", {}, {Ref(q)});
    CHECK(out.status().code() == Code::kInvalidArgument);
  }
}

}  // namespace
}  // namespace tfd::testing
