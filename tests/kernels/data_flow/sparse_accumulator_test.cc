// Sparse gradient accumulator ops: rows of equal index summed, MEAN over
// the gradients taken or SUM, stale and second gradients dropped, takes that
// wait and end with the step, hostile input refused, and the ops for either
// kind of accumulator.
#include <thread>

#include "kernels/data_flow/sparse_conditional_accumulator.h"
#include "tests/kernels/data_flow/queue_test_util.h"

namespace tfd::testing {
namespace {

using kernels::SparseConditionalAccumulator;

std::shared_ptr<ResourceBase> NewSparse(QueueTestEnv& e, const std::string& name,
                                        PartialShape shape, std::string reduction = "MEAN") {
  auto out = e.Run("SparseConditionalAccumulator", {{"dtype", DType::kFloat32},
                                                    {"shape", std::move(shape)},
                                                    {"shared_name", name},
                                                    {"reduction_type", std::move(reduction)}},
                   {});
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  REQUIRE((*out)[0].is_ref());
  return (*out)[0].ref;
}

SparseConditionalAccumulator& Acc(const std::shared_ptr<ResourceBase>& r) {
  auto* acc = dynamic_cast<SparseConditionalAccumulator*>(r.get());
  REQUIRE(acc != nullptr);
  return *acc;
}

Tensor Rows(std::vector<float> v, int64_t width) {
  return Tensor::FromVector<float>(v, TensorShape({static_cast<int64_t>(v.size()) / width, width}));
}

Tensor Ids(std::vector<int64_t> v) { return Tensor::FromVector<int64_t>(v); }

// Rows at `ids`; `dense_shape` empty: not known to the sender.
Status Apply(QueueTestEnv& e, const std::shared_ptr<ResourceBase>& acc, int64_t local_step,
             Tensor ids, Tensor rows, std::vector<int64_t> dense_shape = {},
             std::string replica = {}) {
  const bool known = !dense_shape.empty();
  return e
      .Run("SparseAccumulatorApplyGradient",
           {{"dtype", DType::kFloat32}, {"has_known_shape", known}},
           {Ref(acc), Val(Tensor::Scalar<int64_t>(local_step)), Val(std::move(ids)),
            Val(std::move(rows)), Val(Tensor::FromVector<int64_t>(dense_shape))},
           nullptr, std::move(replica))
      .status();
}

StatusOr<std::vector<Value>> Take(QueueTestEnv& e, const std::shared_ptr<ResourceBase>& acc,
                                  int32_t num_required) {
  return e.Run("SparseAccumulatorTakeGradient", {{"dtype", DType::kFloat32}},
               {Ref(acc), Val(Tensor::Scalar<int32_t>(num_required))});
}

template <typename T>
std::vector<T> Elements(const Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.num_elements());
}

TEST_CASE("a sparse take sums rows of equal index and averages over the gradients taken") {
  QueueTestEnv e;
  auto acc = NewSparse(e, "emb", PartialShape({100, 2}));
  // Index 7 twice in one gradient and once in the other; 3 and 42 once each.
  REQUIRE(Apply(e, acc, 0, Ids({7, 3, 7}), Rows({1, 2, 10, 20, 3, 4}, 2), {100, 2}).ok());
  REQUIRE(Apply(e, acc, 0, Ids({42, 7}), Rows({6, 8, 2, 2}, 2), {100, 2}).ok());
  auto out = Take(e, acc, 2);
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  CHECK(Elements<int64_t>((*out)[0].tensor) == std::vector<int64_t>{3, 7, 42});
  CHECK((*out)[1].tensor.shape() == TensorShape({3, 2}));
  // Divided by the 2 gradients, also for rows only one of them touched.
  CHECK(Elements<float>((*out)[1].tensor) == std::vector<float>{5, 10, 3, 4, 3, 4});
  CHECK(Elements<int64_t>((*out)[2].tensor) == std::vector<int64_t>{100, 2});
  CHECK(Acc(acc).num_accumulated() == 0);
  CHECK(Acc(acc).global_step() == 1);

  SECTION("SUM does not divide") {
    auto sum = NewSparse(e, "emb_sum", PartialShape({100, 2}), "SUM");
    REQUIRE(Apply(e, sum, 0, Ids({1}), Rows({1, 1}, 2)).ok());
    REQUIRE(Apply(e, sum, 0, Ids({1}), Rows({2, 4}, 2)).ok());
    auto taken = Take(e, sum, 2);
    REQUIRE(taken.ok());
    CHECK(Elements<float>((*taken)[1].tensor) == std::vector<float>{3, 5});
  }
  SECTION("an unknown dense shape is reported from the gradients") {
    auto open = NewSparse(e, "open", PartialShape({-1, 2}));
    REQUIRE(Apply(e, open, 0, Ids({4}), Rows({1, 1}, 2)).ok());
    auto taken = Take(e, open, 1);
    REQUIRE(taken.ok());
    CHECK(Elements<int64_t>((*taken)[2].tensor) == std::vector<int64_t>{5, 2});
  }
}

TEST_CASE("a sparse take drops stale gradients and a replica's second one") {
  QueueTestEnv e;
  auto acc = NewSparse(e, "emb", PartialShape({10, 1}));
  const std::string w0 = "/job:worker/replica:0/task:0";
  REQUIRE(Apply(e, acc, 0, Ids({1}), Rows({1}, 1), {}, w0).ok());
  REQUIRE(Apply(e, acc, 0, Ids({1}), Rows({100}, 1), {}, w0).ok());  // second: dropped
  CHECK(Acc(acc).num_accumulated() == 1);
  CHECK(Acc(acc).num_duplicates_dropped() == 1);
  // What /metrics shows of it: its kind, the gradients in and its step.
  const kernels::ResourceDescription d = Acc(acc).Describe();
  CHECK(d.kind == "sparse_accumulator");
  REQUIRE(d.gauges.size() == 2);
  CHECK((d.gauges[0].name == "gradients" && d.gauges[0].value == 1));
  CHECK((d.gauges[1].name == "global_step" && d.gauges[1].value == 0));
  REQUIRE(Take(e, acc, 1).ok());
  REQUIRE(Apply(e, acc, 0, Ids({2}), Rows({5}, 1), {}, w0).ok());  // step 0 < 1: stale
  CHECK(Acc(acc).num_stale_dropped() == 1);
  CHECK(Acc(acc).num_accumulated() == 0);

  SECTION("the generic ops see the sparse accumulator") {
    REQUIRE(Apply(e, acc, 1, Ids({2}), Rows({5}, 1), {}, w0).ok());
    auto n = e.Run("AccumulatorNumAccumulated", {}, {Ref(acc)});
    REQUIRE(n.ok());
    CHECK((*n)[0].tensor.scalar<int32_t>() == 1);
    REQUIRE(e.Run("AccumulatorSetGlobalStep", {}, {Ref(acc), Val(Tensor::Scalar<int64_t>(5))})
                .ok());
    CHECK(Acc(acc).global_step() == 5);
    CHECK(Acc(acc).num_accumulated() == 0);
  }
}

TEST_CASE("a sparse take waits for the N-th gradient and ends with the step") {
  QueueTestEnv e;
  auto acc = NewSparse(e, "emb", PartialShape({10, 1}));
  CancellationManager cm;
  auto take = e.Start("SparseAccumulatorTakeGradient", {{"dtype", DType::kFloat32}},
                      {Ref(acc), Val(Tensor::Scalar<int32_t>(2))}, &cm);
  CHECK_FALSE(take->finished());
  REQUIRE(Apply(e, acc, 0, Ids({3}), Rows({2}, 1)).ok());
  CHECK_FALSE(take->finished());

  SECTION("the second gradient completes it") {
    Status applied;
    std::thread worker([&] { applied = Apply(e, acc, 0, Ids({3}), Rows({4}, 1)); });
    REQUIRE(take->Wait());
    worker.join();
    CHECK(applied.ok());
    REQUIRE(take->status().ok());
    CHECK(Elements<float>(take->output(1)) == std::vector<float>{3});
  }
  SECTION("the deadline ends it") {
    cm.Cancel(errors::DeadlineExceeded("step 2 passed its deadline"));
    REQUIRE(take->finished());
    CHECK(take->status().code() == Code::kDeadlineExceeded);
    CHECK(Contains(take->status().message(), "accumulator 'emb' (have 1 of 2 required"));
    CHECK(Acc(acc).num_accumulated() == 1);
  }
}

TEST_CASE("hostile sparse gradients are refused, naming the accumulator") {
  QueueTestEnv e;
  auto acc = NewSparse(e, "emb", PartialShape({10, 2}));
  auto refused = [&](Status s, const std::string& says) {
    INFO(s.ToString());
    CHECK(s.code() == Code::kInvalidArgument);
    CHECK(Contains(s.message(), "sparse accumulator 'emb'"));
    CHECK(Contains(s.message(), says));
  };
  refused(Apply(e, acc, 0, Ids({10}), Rows({1, 1}, 2)), "index 10");
  refused(Apply(e, acc, 0, Ids({-1}), Rows({1, 1}, 2)), "index -1");
  refused(Apply(e, acc, 0, Ids({1, 2}), Rows({1, 1}, 2)), "2 indices");
  refused(Apply(e, acc, 0, Ids({1}), Rows({1, 1, 1}, 3)), "values of shape [1, 3]");
  refused(Apply(e, acc, 0, Ids({1}), Rows({1, 1}, 2), {20, 2}), "dense shape [20, 2]");
  refused(Apply(e, acc, 0, Tensor::FromVector<int64_t>({1}, TensorShape({1, 1})), Rows({1, 1}, 2)),
          "indices of shape [n]");
  CHECK(Acc(acc).num_accumulated() == 0);
  // A stale gradient is checked all the same: a wrong row is a bug whatever the step.
  REQUIRE(Apply(e, acc, 0, Ids({1}), Rows({1, 1}, 2)).ok());
  REQUIRE(Take(e, acc, 1).ok());
  refused(Apply(e, acc, 0, Ids({11}), Rows({1, 1}, 2)), "index 11");
  CHECK(Acc(acc).num_stale_dropped() == 0);
}

TEST_CASE("a sparse accumulator declared differently under one name is refused") {
  QueueTestEnv e;
  NewSparse(e, "emb", PartialShape({10, 2}));
  auto other = e.Run("SparseConditionalAccumulator", {{"dtype", DType::kFloat32},
                                                      {"shape", PartialShape({10, 2})},
                                                      {"shared_name", std::string("emb")},
                                                      {"reduction_type", std::string("SUM")}},
                     {});
  CHECK(other.status().code() == Code::kInvalidArgument);
  auto bad = e.Run("SparseConditionalAccumulator", {{"dtype", DType::kFloat32},
                                                    {"shape", PartialShape({10, 2})},
                                                    {"reduction_type", std::string("MAX")}},
                   {});
  CHECK(bad.status().code() == Code::kInvalidArgument);
}

}  // namespace
}  // namespace tfd::testing
