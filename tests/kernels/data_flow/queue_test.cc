// FIFOQueue ops: order, batches, PaddingFIFOQueue's padded batches, waiting
// without a thread, cancellation at the step deadline, close semantics,
// validation (RandomShuffleQueue's own: random_shuffle_queue_test.cc).
#include <algorithm>
#include <atomic>
#include <thread>

#include "common/graph.h"
#include "common/graph_io.h"
#include "tests/kernels/data_flow/queue_test_util.h"

namespace tfd::testing {
namespace {

const std::vector<DType> kIntString = {DType::kInt32, DType::kString};

std::string Label(int i) { return std::string("s").append(std::to_string(i)); }

Status Enqueue(QueueTestEnv& e, const std::shared_ptr<ResourceBase>& q, std::vector<Tensor> parts) {
  std::vector<Value> in{Ref(q)};
  std::vector<DType> types;
  for (Tensor& t : parts) {
    types.push_back(t.dtype());
    in.push_back(Val(std::move(t)));
  }
  return e.Run("QueueEnqueue", {{"Tcomponents", types}}, std::move(in)).status();
}

StatusOr<std::vector<Value>> Dequeue(QueueTestEnv& e, const std::shared_ptr<ResourceBase>& q,
                                     std::vector<DType> types) {
  return e.Run("QueueDequeue", {{"component_types", types}}, {Ref(q)});
}

int32_t Size(QueueTestEnv& e, const std::shared_ptr<ResourceBase>& q) {
  auto out = e.Run("QueueSize", {}, {Ref(q)});
  REQUIRE(out.ok());
  return (*out)[0].tensor.scalar<int32_t>();
}

int32_t DequeueInt(QueueTestEnv& e, const std::shared_ptr<ResourceBase>& q) {
  auto out = Dequeue(e, q, {DType::kInt32});
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  return (*out)[0].tensor.scalar<int32_t>();
}

TEST_CASE("elements come out in the order they went in") {
  QueueTestEnv e;
  auto q = e.NewQueue("q", kIntString, {}, -1);
  for (int i = 0; i < 3; ++i) {
    REQUIRE(Enqueue(e, q, {Tensor::Scalar<int32_t>(i), Tensor::Scalar(Label(i))}).ok());
  }
  CHECK(Size(e, q) == 3);
  for (int i = 0; i < 3; ++i) {
    auto out = Dequeue(e, q, kIntString);
    REQUIRE(out.ok());
    CHECK((*out)[0].tensor.scalar<int32_t>() == i);
    CHECK((*out)[1].tensor.scalar<std::string>() == Label(i));
  }
  CHECK(Size(e, q) == 0);
  CHECK(e.resources().Lookup<ResourceBase>("", "q").ok());
}

TEST_CASE("EnqueueMany splits rows and DequeueMany stacks them") {
  QueueTestEnv e;
  auto q = e.NewQueue("batches", {DType::kFloat32, DType::kString},
                      {PartialShape({2}), PartialShape({})}, 10);
  auto out = e.Run("QueueEnqueueMany",
                   {{"Tcomponents", std::vector<DType>{DType::kFloat32, DType::kString}}},
                   {Ref(q), Val(Tensor::FromVector<float>({1, 2, 3, 4, 5, 6, 7, 8}, {4, 2})),
                    Val(Tensor::FromVector<std::string>({"a", "b", "c", "d"}))});
  REQUIRE(out.ok());
  CHECK(Size(e, q) == 4);
  auto many = e.Run("QueueDequeueMany",
                    {{"component_types", std::vector<DType>{DType::kFloat32, DType::kString}}},
                    {Ref(q), Val(Tensor::Scalar<int32_t>(3))});
  REQUIRE(many.ok());
  const Tensor& f = (*many)[0].tensor;
  REQUIRE(f.shape() == TensorShape({3, 2}));
  CHECK(std::vector<float>(f.data<float>(), f.data<float>() + 6) ==
        std::vector<float>{1, 2, 3, 4, 5, 6});
  const Tensor& s = (*many)[1].tensor;
  REQUIRE(s.shape() == TensorShape({3}));
  CHECK(s.data<std::string>()[2] == "c");
  auto last = Dequeue(e, q, {DType::kFloat32, DType::kString});
  REQUIRE(last.ok());
  CHECK((*last)[0].tensor.shape() == TensorShape({2}));
  CHECK((*last)[0].tensor.data<float>()[1] == 8);

  SECTION("zero elements: an empty batch, at once") {
    auto none = e.Run("QueueDequeueMany",
                      {{"component_types", std::vector<DType>{DType::kFloat32, DType::kString}}},
                      {Ref(q), Val(Tensor::Scalar<int32_t>(0))});
    REQUIRE(none.ok());
    CHECK((*none)[0].tensor.shape() == TensorShape({0, 2}));
  }
  SECTION("rows that disagree are refused") {
    auto bad = e.Run("QueueEnqueueMany",
                     {{"Tcomponents", std::vector<DType>{DType::kFloat32, DType::kString}}},
                     {Ref(q), Val(Tensor::FromVector<float>({1, 2, 3, 4}, {2, 2})),
                      Val(Tensor::FromVector<std::string>({"a", "b", "c"}))});
    CHECK(bad.status().code() == Code::kInvalidArgument);
    CHECK(Contains(bad.status().message(), "component 1"));
    CHECK(Size(e, q) == 0);
  }
}

Tensor Iota(const TensorShape& shape, float first) {
  std::vector<float> v(shape.num_elements());
  for (size_t i = 0; i < v.size(); ++i) v[i] = first + static_cast<float>(i);
  return Tensor::FromVector(v, shape);
}

// Each element lands in its slot's leading corner, the rest zeros: rank 3,
// elements smaller than the batch's largest along every unknown dimension,
// one with a dimension of 0.
TEST_CASE("a PaddingFIFOQueue pads a DequeueMany to the largest of each unknown dimension") {
  QueueTestEnv e;
  auto q =
      e.NewQueue("padded", {DType::kFloat32}, {PartialShape({-1, 2, -1})}, 10, "PaddingFIFOQueue");
  REQUIRE(Enqueue(e, q, {Iota(TensorShape({1, 2, 3}), 100)}).ok());
  REQUIRE(Enqueue(e, q, {Iota(TensorShape({2, 2, 1}), 200)}).ok());
  REQUIRE(Enqueue(e, q, {Iota(TensorShape({0, 2, 2}), 300)}).ok());
  auto many = e.Run("QueueDequeueMany", {{"component_types", std::vector<DType>{DType::kFloat32}}},
                    {Ref(q), Val(Tensor::Scalar<int32_t>(3))});
  INFO(many.status().ToString());
  REQUIRE(many.ok());
  const Tensor& t = (*many)[0].tensor;
  REQUIRE(t.shape() == TensorShape({3, 2, 2, 3}));
  std::vector<float> want(36, 0.0f);
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 2; ++j) {
      for (int k = 0; k < 3; ++k) {
        if (i < 1) want[((0 * 2 + i) * 2 + j) * 3 + k] = 100.0f + static_cast<float>(j * 3 + k);
        if (k < 1) want[((1 * 2 + i) * 2 + j) * 3 + k] = 200.0f + static_cast<float>(i * 2 + j);
      }
    }
  }
  CHECK(std::vector<float>(t.data<float>(), t.data<float>() + 36) == want);

  SECTION("zero elements: the unknown dimensions are 0") {
    auto none =
        e.Run("QueueDequeueMany", {{"component_types", std::vector<DType>{DType::kFloat32}}},
              {Ref(q), Val(Tensor::Scalar<int32_t>(0))});
    REQUIRE(none.ok());
    CHECK((*none)[0].tensor.shape() == TensorShape({0, 0, 2, 0}));
  }
  SECTION("an element of another rank is refused") {
    Status bad = Enqueue(e, q, {Iota(TensorShape({2, 2}), 0)});
    CHECK(bad.code() == Code::kInvalidArgument);
    CHECK(Contains(bad.message(), "shape"));
  }
  SECTION("a shape of unknown rank is refused") {
    auto none = e.Run("PaddingFIFOQueue",
                      {{"component_types", std::vector<DType>{DType::kFloat32}},
                       {"shapes", std::vector<PartialShape>{PartialShape()}}},
                      {});
    CHECK(none.status().code() == Code::kInvalidArgument);
    CHECK(Contains(none.status().message(), "known rank"));
  }
}

TEST_CASE("an enqueue on a full queue completes only after a dequeue makes room") {
  QueueTestEnv e;
  auto q = e.NewQueue("small", {DType::kInt32}, {PartialShape({})}, 2);
  REQUIRE(Enqueue(e, q, {Tensor::Scalar<int32_t>(1)}).ok());
  REQUIRE(Enqueue(e, q, {Tensor::Scalar<int32_t>(2)}).ok());
  auto third = e.Start("QueueEnqueue", {{"Tcomponents", std::vector<DType>{DType::kInt32}}},
                       {Ref(q), Val(Tensor::Scalar<int32_t>(3))});
  // ComputeAsync returned without the element going in: no thread waits.
  CHECK_FALSE(third->finished());
  CHECK(Size(e, q) == 2);
  CHECK(DequeueInt(e, q) == 1);
  // The dequeue's room completed the waiting enqueue before it returned.
  CHECK(third->finished());
  CHECK(third->status().ok());
  CHECK(DequeueInt(e, q) == 2);
  CHECK(DequeueInt(e, q) == 3);
  CHECK(third->done_calls() == 1);
}

TEST_CASE("a dequeue on an empty queue completes when another thread enqueues") {
  QueueTestEnv e;
  auto q = e.NewQueue("empty", {DType::kString}, {}, 10);
  auto waiting =
      e.Start("QueueDequeue", {{"component_types", std::vector<DType>{DType::kString}}}, {Ref(q)});
  CHECK_FALSE(waiting->finished());
  // Catch2's assertions are not thread-safe: threads only record.
  Status produced;
  std::thread producer([&] { produced = Enqueue(e, q, {Tensor::Scalar("hello")}); });
  REQUIRE(waiting->Wait());
  producer.join();
  CHECK(produced.ok());
  REQUIRE(waiting->status().ok());
  CHECK(waiting->output(0).scalar<std::string>() == "hello");
  CHECK(Size(e, q) == 0);
}

TEST_CASE("a DequeueMany larger than the capacity gathers elements as they come") {
  QueueTestEnv e;
  auto q = e.NewQueue("narrow", {DType::kInt32}, {PartialShape({})}, 2);
  auto many = e.Start("QueueDequeueMany", {{"component_types", std::vector<DType>{DType::kInt32}}},
                      {Ref(q), Val(Tensor::Scalar<int32_t>(5))});
  std::atomic<int> failures{0};
  std::thread producer([&] {
    for (int i = 0; i < 5; ++i) failures += !Enqueue(e, q, {Tensor::Scalar<int32_t>(i)}).ok();
  });
  REQUIRE(many->Wait());
  producer.join();
  CHECK(failures == 0);
  REQUIRE(many->status().ok());
  const Tensor& got = many->output(0);
  REQUIRE(got.shape() == TensorShape({5}));
  CHECK(std::vector<int32_t>(got.data<int32_t>(), got.data<int32_t>() + 5) ==
        std::vector<int32_t>{0, 1, 2, 3, 4});
}

TEST_CASE("a waiting dequeue cancelled at the deadline says what it waited for") {
  QueueTestEnv e;
  auto q = e.NewQueue("shared_queue", {DType::kFloat32}, {}, 10);
  CancellationManager cm;
  auto waiting = e.Start("QueueDequeue", {{"component_types", std::vector<DType>{DType::kFloat32}}},
                         {Ref(q)}, &cm);
  CHECK_FALSE(waiting->finished());
  cm.Cancel(errors::DeadlineExceeded("step 7 passed its deadline"));
  REQUIRE(waiting->finished());
  CHECK(waiting->status().code() == Code::kDeadlineExceeded);
  CHECK(
      waiting->status().message() ==
      "step 7 passed its deadline while dequeuing from queue 'shared_queue' (empty, capacity 10)");
  // The cancelled attempt no longer takes elements.
  REQUIRE(Enqueue(e, q, {Tensor::Scalar<float>(1)}).ok());
  CHECK(Size(e, q) == 1);
  CHECK(waiting->done_calls() == 1);

  SECTION("a step already cancelled fails at once") {
    auto late = e.Start("QueueEnqueue", {{"Tcomponents", std::vector<DType>{DType::kFloat32}}},
                        {Ref(q), Val(Tensor::Scalar<float>(2))}, &cm);
    CHECK(late->finished());
    CHECK(late->status().code() == Code::kDeadlineExceeded);
  }
}

TEST_CASE("a cancelled enqueue or DequeueMany leaves the queue as it was") {
  QueueTestEnv e;
  auto q = e.NewQueue("q", {DType::kInt32}, {PartialShape({})}, 1);
  REQUIRE(Enqueue(e, q, {Tensor::Scalar<int32_t>(1)}).ok());
  {
    CancellationManager cm;
    auto blocked = e.Start("QueueEnqueue", {{"Tcomponents", std::vector<DType>{DType::kInt32}}},
                           {Ref(q), Val(Tensor::Scalar<int32_t>(2))}, &cm);
    CHECK_FALSE(blocked->finished());
    cm.Cancel(errors::DeadlineExceeded("too slow"));
    REQUIRE(blocked->finished());
    CHECK(blocked->status().code() == Code::kDeadlineExceeded);
    CHECK(blocked->status().message() ==
          "too slow while enqueuing to queue 'q' (full, capacity 1)");
  }
  {
    CancellationManager cm;
    auto many =
        e.Start("QueueDequeueMany", {{"component_types", std::vector<DType>{DType::kInt32}}},
                {Ref(q), Val(Tensor::Scalar<int32_t>(3))}, &cm);
    CHECK_FALSE(many->finished());
    CHECK(Size(e, q) == 0);  // it holds element 1 while it waits for more
    cm.Cancel(errors::DeadlineExceeded("too slow"));
    REQUIRE(many->finished());
    CHECK(Contains(many->status().message(), "1 elements, 3 requested"));
  }
  CHECK(Size(e, q) == 1);
  CHECK(DequeueInt(e, q) == 1);
}

TEST_CASE("close: enqueues refused, the rest drained, then OUT_OF_RANGE") {
  QueueTestEnv e;
  auto q = e.NewQueue("closing", {DType::kInt32}, {PartialShape({})}, 5);
  REQUIRE(Enqueue(e, q, {Tensor::Scalar<int32_t>(1)}).ok());
  REQUIRE(Enqueue(e, q, {Tensor::Scalar<int32_t>(2)}).ok());
  REQUIRE(e.Run("QueueClose", {}, {Ref(q)}).ok());
  Status s = Enqueue(e, q, {Tensor::Scalar<int32_t>(3)});
  CHECK(s.code() == Code::kCancelled);
  CHECK(Contains(s.message(), "'closing'"));

  auto too_many =
      e.Run("QueueDequeueMany", {{"component_types", std::vector<DType>{DType::kInt32}}},
            {Ref(q), Val(Tensor::Scalar<int32_t>(3))});
  CHECK(too_many.status().code() == Code::kOutOfRange);
  CHECK(Size(e, q) == 2);  // the failed DequeueMany took nothing

  CHECK(DequeueInt(e, q) == 1);
  CHECK(DequeueInt(e, q) == 2);
  auto out = Dequeue(e, q, {DType::kInt32});
  CHECK(out.status().code() == Code::kOutOfRange);
  CHECK(Contains(out.status().message(), "queue 'closing' is closed"));
}

TEST_CASE("close wakes waiting dequeues and handles pending enqueues as asked") {
  QueueTestEnv e;
  SECTION("a waiting dequeue fails with OUT_OF_RANGE") {
    auto q = e.NewQueue("a", {DType::kInt32}, {}, 1);
    auto waiting =
        e.Start("QueueDequeue", {{"component_types", std::vector<DType>{DType::kInt32}}}, {Ref(q)});
    CHECK_FALSE(waiting->finished());
    REQUIRE(e.Run("QueueClose", {}, {Ref(q)}).ok());
    REQUIRE(waiting->finished());
    CHECK(waiting->status().code() == Code::kOutOfRange);
  }
  SECTION("a pending enqueue still completes without cancel_pending_enqueues") {
    auto q = e.NewQueue("b", {DType::kInt32}, {}, 1);
    REQUIRE(Enqueue(e, q, {Tensor::Scalar<int32_t>(1)}).ok());
    auto pending = e.Start("QueueEnqueue", {{"Tcomponents", std::vector<DType>{DType::kInt32}}},
                           {Ref(q), Val(Tensor::Scalar<int32_t>(2))});
    REQUIRE(e.Run("QueueClose", {}, {Ref(q)}).ok());
    CHECK_FALSE(pending->finished());
    CHECK(DequeueInt(e, q) == 1);
    REQUIRE(pending->finished());
    CHECK(pending->status().ok());
    CHECK(DequeueInt(e, q) == 2);
  }
  SECTION("cancel_pending_enqueues fails them with CANCELLED") {
    auto q = e.NewQueue("c", {DType::kInt32}, {}, 1);
    REQUIRE(Enqueue(e, q, {Tensor::Scalar<int32_t>(1)}).ok());
    auto pending = e.Start("QueueEnqueue", {{"Tcomponents", std::vector<DType>{DType::kInt32}}},
                           {Ref(q), Val(Tensor::Scalar<int32_t>(2))});
    REQUIRE(e.Run("QueueClose", {{"cancel_pending_enqueues", true}}, {Ref(q)}).ok());
    REQUIRE(pending->finished());
    CHECK(pending->status().code() == Code::kCancelled);
    CHECK(DequeueInt(e, q) == 1);
    CHECK(Dequeue(e, q, {DType::kInt32}).status().code() == Code::kOutOfRange);
  }
}

TEST_CASE("concurrent producers and consumers see every element once, in order") {
  QueueTestEnv e;
  auto q = e.NewQueue("busy", {DType::kInt32}, {PartialShape({})}, 4);
  constexpr int kPerProducer = 150;
  std::vector<std::vector<int32_t>> seen(2);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int p = 0; p < 2; ++p) {
    threads.emplace_back([&, p] {
      for (int i = 0; i < kPerProducer; ++i) {
        failures += !Enqueue(e, q, {Tensor::Scalar<int32_t>(p * 100000 + i)}).ok();
      }
    });
    threads.emplace_back([&, p] {
      for (int i = 0; i < kPerProducer; ++i) {
        auto out = Dequeue(e, q, {DType::kInt32});
        if (!out.ok()) {
          ++failures;
          continue;
        }
        seen[p].push_back((*out)[0].tensor.scalar<int32_t>());
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(failures == 0);
  std::vector<int32_t> all;
  for (const auto& s : seen) {
    // Each consumer sees each producer's elements in the order produced.
    int32_t last[2] = {-1, -1};
    for (int32_t v : s) {
      const int producer = v / 100000;
      CHECK(v % 100000 > last[producer]);
      last[producer] = v % 100000;
    }
    all.insert(all.end(), s.begin(), s.end());
  }
  std::sort(all.begin(), all.end());
  CHECK(std::adjacent_find(all.begin(), all.end()) == all.end());
  CHECK(all.size() == 2 * kPerProducer);
}

TEST_CASE("components are checked against the queue's types and shapes") {
  QueueTestEnv e;
  auto q = e.NewQueue("typed", {DType::kFloat32, DType::kInt32},
                      {PartialShape({2}), PartialShape({})}, -1);
  Status s = Enqueue(e, q, {Tensor::FromVector<float>({1, 2}), Tensor::Scalar<int64_t>(1)});
  CHECK(s.code() == Code::kInvalidArgument);
  CHECK(Contains(s.message(), "component 1"));
  CHECK(Contains(s.message(), "int32"));
  s = Enqueue(e, q, {Tensor::FromVector<float>({1, 2, 3}), Tensor::Scalar<int32_t>(1)});
  CHECK(s.code() == Code::kInvalidArgument);
  CHECK(Contains(s.message(), "component 0"));
  CHECK(Contains(s.message(), "[2]"));
  s = Enqueue(e, q, {Tensor::FromVector<float>({1, 2})});
  CHECK(s.code() == Code::kInvalidArgument);
  auto out = Dequeue(e, q, {DType::kFloat32, DType::kFloat32});
  CHECK(out.status().code() == Code::kInvalidArgument);
  CHECK(Contains(out.status().message(), "component 1 of queue 'typed'"));
  CHECK(Size(e, q) == 0);

  SECTION("a shared queue declared differently elsewhere is refused") {
    auto other = e.Run("FIFOQueue",
                       {{"component_types", std::vector<DType>{DType::kFloat32}},
                        {"shared_name", std::string("typed")}},
                       {});
    CHECK(other.status().code() == Code::kInvalidArgument);
    CHECK(Contains(other.status().message(), "queue 'typed'"));
    auto same = e.NewQueue("typed", {DType::kFloat32, DType::kInt32},
                           {PartialShape({2}), PartialShape({})}, -1);
    CHECK(same == q);
  }
  SECTION("bad attrs are refused when the kernel is built") {
    auto zero = e.Run(
        "FIFOQueue",
        {{"component_types", std::vector<DType>{DType::kFloat32}}, {"capacity", int64_t{0}}}, {});
    CHECK(zero.status().code() == Code::kInvalidArgument);
    auto partial = e.Run("FIFOQueue",
                         {{"component_types", std::vector<DType>{DType::kFloat32}},
                          {"shapes", std::vector<PartialShape>{PartialShape({-1})}}},
                         {});
    CHECK(partial.status().code() == Code::kInvalidArgument);
    auto unshaped = e.NewQueue("unshaped", {DType::kFloat32}, {}, -1);
    auto many =
        e.Run("QueueDequeueMany", {{"component_types", std::vector<DType>{DType::kFloat32}}},
              {Ref(unshaped), Val(Tensor::Scalar<int32_t>(2))});
    CHECK(many.status().code() == Code::kInvalidArgument);
    CHECK(Contains(many.status().message(), "fully defined"));
  }
}

TEST_CASE("a capacity below -1 is refused where the graph is checked and the kernel built") {
  // Graph validation (tfctl graph validate, session creation) names the node.
  OpRegistry registry;
  REQUIRE(kernels::RegisterAll(registry).ok());
  for (int64_t capacity : {int64_t{-5}, int64_t{-2}, int64_t{0}}) {
    CAPTURE(capacity);
    auto def = ParseGraph("(nodes = [(name = \"q\", op = \"FIFOQueue\", attrs = ["
                          "(name = \"component_types\", value = (list = (type = [float32]))), "
                          "(name = \"capacity\", value = (i = " + std::to_string(capacity) +
                              "))])])",
                          "queue.txt");
    REQUIRE(def.ok());
    auto graph = Graph::Build(std::move(def).value(), registry);
    INFO(graph.status().ToString());
    CHECK(graph.status().code() == Code::kInvalidArgument);
    CHECK(Contains(graph.status().message(), "node 'q' (FIFOQueue): capacity must be positive, "
                                             "or -1 for unbounded, not " +
                                                 std::to_string(capacity)));
    // And the kernel, for whoever builds one without checking the graph.
    QueueTestEnv e;
    auto out = e.Run("FIFOQueue", {{"component_types", std::vector<DType>{DType::kFloat32}},
                                   {"capacity", capacity}},
                     {});
    CHECK(out.status().code() == Code::kInvalidArgument);
    CHECK(Contains(out.status().message(), "not " + std::to_string(capacity)));
  }
  QueueTestEnv e;
  auto unbounded = e.NewQueue("unbounded", {DType::kFloat32}, {}, -1);
  CHECK(Contains(unbounded->DebugString(), "unbounded"));
}

TEST_CASE("a constant negative DequeueMany count is refused when the graph is checked") {
  OpRegistry registry;
  REQUIRE(kernels::RegisterAll(registry).ok());
  auto def = ParseGraph(R"((nodes = [
      (name = "q", op = "FIFOQueue", attrs = [
         (name = "component_types", value = (list = (type = [float32]))),
         (name = "shapes", value = (list = (shape = [(dims = [2])])))]),
      (name = "n", op = "Const", attrs = [(name = "dtype", value = (type = int32)),
         (name = "value", value = (tensor = (dtype = int32, shape = [], int32Val = [-3])))]),
      (name = "take", op = "QueueDequeueMany", inputs = ["q", "n"], attrs = [
         (name = "component_types", value = (list = (type = [float32])))])]))",
                        "dequeue.txt");
  REQUIRE(def.ok());
  auto graph = Graph::Build(std::move(def).value(), registry);
  INFO(graph.status().ToString());
  CHECK(graph.status().code() == Code::kInvalidArgument);
  CHECK(Contains(graph.status().message(), "node 'take' (QueueDequeueMany): n must be >= 0 but "
                                           "is -3"));
}

}  // namespace
}  // namespace tfd::testing
