// RandomShuffleQueue (every element once, in a seeded random order, with
// min_after_dequeue held back while open), QueueDequeueUpTo and
// QueueIsClosed. The waiting and cancellation they share with FIFOQueue are
// queue_test.cc's.
#include <algorithm>
#include <numeric>

#include "tests/kernels/data_flow/queue_test_util.h"

namespace tfd::testing {
namespace {

const std::vector<DType> kInt = {DType::kInt32};

std::shared_ptr<ResourceBase> ShuffleQueue(QueueTestEnv& e, const std::string& name,
                                           int64_t capacity, int64_t keep, int64_t seed) {
  return e.NewQueue(name, kInt, {PartialShape({})}, capacity, "RandomShuffleQueue",
                    {{"min_after_dequeue", keep}, {"seed", seed}, {"seed2", int64_t{7}}});
}

Status EnqueueRange(QueueTestEnv& e, const std::shared_ptr<ResourceBase>& q, int from, int to) {
  std::vector<int32_t> v(to - from);
  std::iota(v.begin(), v.end(), from);
  return e
      .Run("QueueEnqueueMany", {{"Tcomponents", kInt}},
           {Ref(q), Val(Tensor::FromVector<int32_t>(v, {static_cast<int64_t>(v.size())}))})
      .status();
}

StatusOr<std::vector<int32_t>> Many(QueueTestEnv& e, const std::shared_ptr<ResourceBase>& q,
                                    int32_t n, const std::string& op = "QueueDequeueMany") {
  auto out = e.Run(op, {{"component_types", kInt}}, {Ref(q), Val(Tensor::Scalar<int32_t>(n))});
  if (!out.ok()) return out.status();
  const Tensor& t = (*out)[0].tensor;
  return std::vector<int32_t>(t.data<int32_t>(), t.data<int32_t>() + t.num_elements());
}

std::unique_ptr<AsyncCall> StartMany(QueueTestEnv& e, const std::shared_ptr<ResourceBase>& q,
                                     const std::string& op, int32_t n) {
  return e.Start(op, {{"component_types", kInt}}, {Ref(q), Val(Tensor::Scalar<int32_t>(n))});
}

bool IsClosed(QueueTestEnv& e, const std::shared_ptr<ResourceBase>& q) {
  auto out = e.Run("QueueIsClosed", {}, {Ref(q)});
  REQUIRE(out.ok());
  return (*out)[0].tensor.scalar<bool>();
}

TEST_CASE("a shuffle queue hands out every element once, in an order its seeds fix") {
  QueueTestEnv e;
  auto a = ShuffleQueue(e, "a", 100, 0, 1);
  auto b = ShuffleQueue(e, "b", 100, 0, 1);
  auto c = ShuffleQueue(e, "c", 100, 0, 2);
  for (const auto& q : {a, b, c}) REQUIRE(EnqueueRange(e, q, 0, 64).ok());
  auto from_a = Many(e, a, 64), from_b = Many(e, b, 64), from_c = Many(e, c, 64);
  REQUIRE(from_a.ok());
  REQUIRE(from_b.ok());
  REQUIRE(from_c.ok());
  std::vector<int32_t> in_order(64);
  std::iota(in_order.begin(), in_order.end(), 0);
  CHECK(*from_a != in_order);  // 1 in 64! to fail by chance
  CHECK(*from_a == *from_b);   // the same seeds, the same order
  CHECK(*from_a != *from_c);
  std::sort(from_a->begin(), from_a->end());
  CHECK(*from_a == in_order);
}

TEST_CASE("an open shuffle queue keeps min_after_dequeue; once closed it hands out the rest") {
  QueueTestEnv e;
  auto q = ShuffleQueue(e, "mixing", 10, 3, 5);
  REQUIRE(EnqueueRange(e, q, 0, 4).ok());
  auto first = Many(e, q, 1);  // four held, three kept: one may go
  REQUIRE(first.ok());
  auto waiting = StartMany(e, q, "QueueDequeueMany", 2);
  CHECK_FALSE(waiting->finished());  // three held: nothing may go
  REQUIRE(EnqueueRange(e, q, 4, 5).ok());
  CHECK_FALSE(waiting->finished());  // one taken, the second waits
  REQUIRE(EnqueueRange(e, q, 5, 6).ok());
  REQUIRE(waiting->Wait());
  REQUIRE(waiting->status().ok());
  CHECK(waiting->output(0).num_elements() == 2);
  CHECK_FALSE(IsClosed(e, q));
  REQUIRE(e.Run("QueueClose", {}, {Ref(q)}).ok());
  CHECK(IsClosed(e, q));
  auto rest = Many(e, q, 3);
  REQUIRE(rest.ok());
  std::vector<int32_t> all = *first;
  all.insert(all.end(), waiting->output(0).data<int32_t>(), waiting->output(0).data<int32_t>() + 2);
  all.insert(all.end(), rest->begin(), rest->end());
  std::sort(all.begin(), all.end());
  CHECK(all == std::vector<int32_t>{0, 1, 2, 3, 4, 5});
  CHECK(Many(e, q, 1).status().code() == Code::kOutOfRange);
}

TEST_CASE("a cancelled dequeue puts back what it took from a shuffle queue") {
  QueueTestEnv e;
  auto q = ShuffleQueue(e, "back", 10, 1, 3);
  REQUIRE(EnqueueRange(e, q, 0, 3).ok());
  CancellationManager cm;
  auto waiting = e.Start("QueueDequeueMany", {{"component_types", kInt}},
                         {Ref(q), Val(Tensor::Scalar<int32_t>(5))}, &cm);
  CHECK_FALSE(waiting->finished());  // took two, keeps one, waits for three more
  cm.Cancel(errors::DeadlineExceeded("step over"));
  REQUIRE(waiting->Wait());
  CHECK(waiting->status().code() == Code::kDeadlineExceeded);
  REQUIRE(e.Run("QueueClose", {}, {Ref(q)}).ok());
  auto all = Many(e, q, 3);
  REQUIRE(all.ok());
  std::sort(all->begin(), all->end());
  CHECK(*all == std::vector<int32_t>{0, 1, 2});
}

TEST_CASE("DequeueUpTo waits for n while open; once closed it takes what is left") {
  QueueTestEnv e;
  for (const std::string op : {"FIFOQueue", "RandomShuffleQueue"}) {
    INFO(op);
    auto q = e.NewQueue("upto_" + op, kInt, {PartialShape({})}, 2, op);
    REQUIRE(EnqueueRange(e, q, 0, 2).ok());
    // The queue is full: a third element waits to go in when it closes.
    auto pending =
        e.Start("QueueEnqueue", {{"Tcomponents", kInt}}, {Ref(q), Val(Tensor::Scalar<int32_t>(2))});
    auto up_to = StartMany(e, q, "QueueDequeueUpTo", 5);
    CHECK_FALSE(up_to->finished());
    REQUIRE(e.Run("QueueClose", {}, {Ref(q)}).ok());
    REQUIRE(up_to->Wait());
    REQUIRE(pending->Wait());
    CHECK(pending->status().ok());
    REQUIRE(up_to->status().ok());
    const Tensor& got = up_to->output(0);
    REQUIRE(got.shape() == TensorShape({3}));  // the pending element counted
    std::vector<int32_t> v(got.data<int32_t>(), got.data<int32_t>() + 3);
    std::sort(v.begin(), v.end());
    CHECK(v == std::vector<int32_t>{0, 1, 2});
    auto none = Many(e, q, 1, "QueueDequeueUpTo");
    CHECK(none.status().code() == Code::kOutOfRange);
  }
}

TEST_CASE("a shared queue is one kind, and min_after_dequeue must leave room") {
  QueueTestEnv e;
  e.NewQueue("shared", kInt, {PartialShape({})}, 10);
  auto other = e.Run("RandomShuffleQueue",
                     {{"component_types", kInt},
                      {"shapes", std::vector<PartialShape>{PartialShape({})}},
                      {"capacity", int64_t{10}},
                      {"shared_name", std::string("shared")}},
                     {});
  CHECK(other.status().code() == Code::kInvalidArgument);
  CHECK(Contains(other.status().message(), "is a FIFOQueue"));
  ShuffleQueue(e, "kept", 10, 2, 1);
  auto differs = e.Run("RandomShuffleQueue",
                       {{"component_types", kInt},
                        {"shapes", std::vector<PartialShape>{PartialShape({})}},
                        {"capacity", int64_t{10}},
                        {"min_after_dequeue", int64_t{3}},
                        {"shared_name", std::string("kept")}},
                       {});
  CHECK(differs.status().code() == Code::kInvalidArgument);
  CHECK(Contains(differs.status().message(), "min_after_dequeue 2"));
  for (int64_t keep : {int64_t{-1}, int64_t{10}}) {
    auto bad = e.Run(
        "RandomShuffleQueue",
        {{"component_types", kInt}, {"capacity", int64_t{10}}, {"min_after_dequeue", keep}}, {});
    CHECK(bad.status().code() == Code::kInvalidArgument);
    CHECK(Contains(bad.status().message(), "min_after_dequeue"));
  }
}

}  // namespace
}  // namespace tfd::testing
