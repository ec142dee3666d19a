// The ring among members that share one in-process rendezvous (as tasks
// share the data plane): every member gets the same reduction, for sizes
// that do not divide by the group, empty tensors, many pipes; a member that
// never comes is named when the step's deadline cancels the others; members
// that disagree on the size fail instead of mixing bytes.
#include "kernels/collective/ring_all_reduce.h"

#include <catch2/catch.hpp>

#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <vector>

#include "daemon/runtime/local_rendezvous.h"

namespace tfd::kernels {
namespace {

std::string Device(int task) {
  return "/job:worker/replica:0/task:" + std::to_string(task) + "/device:CPU:0";
}

// One run of a group over one rendezvous; `present` members take part.
class Group {
 public:
  Group(int size, std::vector<bool> present = {}) : size_(size), present_(std::move(present)) {
    if (present_.empty()) present_.assign(size, true);
    results_.resize(size);
    cms_ = std::vector<CancellationManager>(size);
  }
  RingParams Params(int rank) const {
    RingParams p;
    p.node = "allreduce";
    p.group_key = 1;
    p.instance_key = 7;
    p.rank = rank;
    p.merge = merge;
    p.final_op = final_op;
    p.chunk_bytes = chunk_bytes;
    p.pipes_in_flight = pipes_in_flight;
    p.inline_bytes = inline_bytes;
    p.schedule = schedule;
    if (schedule_by_rank) {
      p.schedule = [this, rank](std::function<void()> f) { schedule_by_rank(rank, std::move(f)); };
    }
    for (int t = 0; t < size_; ++t) p.devices.push_back(Device(t));
    return p;
  }
  void Start(const std::vector<Tensor>& inputs) {
    for (int r = 0; r < size_; ++r) {
      if (!present_[r]) continue;
      Tensor out = Tensor::Allocate(inputs[r].dtype(), inputs[r].shape()).value();
      RingAllReduce::Run(rendezvous, cms_[r], Params(r), inputs[r], out,
                         [this, r, out](const Status& s) {
                           std::lock_guard<std::mutex> lock(mu_);
                           results_[r] = s.ok() ? StatusOr<Tensor>(out) : StatusOr<Tensor>(s);
                           changed_.notify_all();
                         });
    }
  }
  // Every present member's result, waiting for them up to a deadline.
  std::vector<StatusOr<Tensor>> Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    const bool all = changed_.wait_for(lock, std::chrono::seconds(30), [this] {
      for (int r = 0; r < size_; ++r) {
        if (present_[r] && !results_[r]) return false;
      }
      return true;
    });
    REQUIRE(all);
    std::vector<StatusOr<Tensor>> out;
    for (int r = 0; r < size_; ++r) {
      if (present_[r]) out.push_back(*results_[r]);
    }
    return out;
  }
  // Whether member `rank`'s run has ended (it returns at once).
  bool Done(int rank) {
    std::lock_guard<std::mutex> lock(mu_);
    return results_[rank].has_value();
  }
  void CancelAll(const Status& why) {
    for (auto& cm : cms_) cm.Cancel(why);
  }
  // Ends member `rank`'s run as its task's death would: its waits end and
  // it sends nothing more.
  void Cancel(int rank, const Status& why) { cms_[rank].Cancel(why); }

  MergeOp merge = MergeOp::kAdd;
  FinalOp final_op = FinalOp::kId;
  size_t chunk_bytes = size_t{4} << 20;
  int pipes_in_flight = 4;
  size_t inline_bytes = 0;  // every merge and copy through `schedule` when there is one
  std::function<void(std::function<void()>)> schedule;
  std::function<void(int, std::function<void()>)> schedule_by_rank;  // wins over `schedule`
  LocalRendezvous rendezvous;

 private:
  int size_;
  std::vector<bool> present_;
  std::vector<CancellationManager> cms_;
  std::mutex mu_;
  std::condition_variable changed_;
  std::vector<std::optional<StatusOr<Tensor>>> results_;
};

// Member r's input: small numbers with few mantissa bits, so that sums and
// products are exact in any order and the expected result is exact.
template <typename T>
Tensor Input(int rank, int64_t n) {
  std::vector<T> v(n);
  for (int64_t k = 0; k < n; ++k) v[k] = static_cast<T>((rank + 1) * 4 + k % 8) + T(1) / T(4);
  return Tensor::FromVector<T>(v, TensorShape({n}));
}

template <typename T>
void CheckReduction(int size, int64_t n, MergeOp merge, FinalOp final_op, size_t chunk_bytes,
                    std::function<void(std::function<void()>)> schedule = nullptr,
                    int pipes_in_flight = 4) {
  Group g(size);
  g.schedule = std::move(schedule);
  g.pipes_in_flight = pipes_in_flight;
  g.merge = merge;
  g.final_op = final_op;
  g.chunk_bytes = chunk_bytes;
  std::vector<Tensor> inputs;
  for (int r = 0; r < size; ++r) inputs.push_back(Input<T>(r, n));
  std::vector<T> want(inputs[0].data<T>(), inputs[0].data<T>() + n);
  for (int r = 1; r < size; ++r) {
    Merge(DTypeOf<T>::value, merge, want.data(), want.data(), inputs[r].data<T>(), n);
  }
  Finalize(DTypeOf<T>::value, final_op, want.data(), n, size);
  g.Start(inputs);
  for (const auto& got : g.Wait()) {
    REQUIRE(got.ok());
    REQUIRE(got->num_elements() == n);
    CHECK(std::vector<T>(got->data<T>(), got->data<T>() + n) == want);
  }
  CHECK(g.rendezvous.num_steps() == 0);  // nothing left behind
  // In one process a member receives the very tensor its left sent (a slice
  // of that member's input, at first): merging into it in place would
  // change a caller's input.
  for (int r = 0; r < size; ++r) {
    const Tensor again = Input<T>(r, n);
    CHECK(std::vector<T>(inputs[r].data<T>(), inputs[r].data<T>() + n) ==
          std::vector<T>(again.data<T>(), again.data<T>() + n));
  }
}

TEST_CASE("every member gets the reduction, whatever the size and group") {
  for (int size : {2, 3, 4}) {
    for (int64_t n : {0, 1, 5, 7, 1001}) {
      INFO("group of " << size << ", " << n << " elements");
      CheckReduction<float>(size, n, MergeOp::kAdd, FinalOp::kId, 4 << 20);
      // 8-byte chunks: many pipes, each a ring of its own
      CheckReduction<float>(size, n, MergeOp::kAdd, FinalOp::kDiv, 8);
    }
  }
}

// A task hands each round's merge to its intra-op threads: rounds of many
// pipes then complete, merge and start the next on several threads at once.
TEST_CASE("the reduction is the same with the merges on a pool of threads") {
  boost::asio::thread_pool pool(3);
  auto on_pool = [&pool](std::function<void()> f) { boost::asio::post(pool, std::move(f)); };
  for (int size : {2, 4}) {
    for (int64_t n : {1, 7, 1001}) {
      INFO("group of " << size << ", " << n << " elements");
      CheckReduction<float>(size, n, MergeOp::kAdd, FinalOp::kDiv, 8, on_pool);
      CheckReduction<int64_t>(size, n, MergeOp::kMax, FinalOp::kId, 4 << 20, on_pool);
    }
  }
  pool.join();
}

// A large tensor runs as many pipes, only a few of them at once: each
// pipe that ends starts the next, whatever order they end in.
TEST_CASE("a tensor of many pipes with few in flight, and of one pipe") {
  boost::asio::thread_pool pool(3);
  auto on_pool = [&pool](std::function<void()> f) { boost::asio::post(pool, std::move(f)); };
  for (int size : {2, 3, 4}) {
    for (int in_flight : {1, 2, 3, 1000}) {
      INFO("group of " << size << ", " << in_flight << " pipes in flight");
      // 12-byte chunks: 1001 floats make 84 to 42 pipes of odd sizes
      CheckReduction<float>(size, 1001, MergeOp::kAdd, FinalOp::kDiv, 12, nullptr, in_flight);
      CheckReduction<float>(size, 1001, MergeOp::kAdd, FinalOp::kId, 12, on_pool, in_flight);
      CheckReduction<double>(size, 999, MergeOp::kMax, FinalOp::kId, 40, on_pool, in_flight);
    }
    // one pipe: the whole tensor in one ring of odd segments
    CheckReduction<float>(size, 1001, MergeOp::kAdd, FinalOp::kDiv, 1 << 20, on_pool);
  }
  pool.join();
}

// Copies and merges handed to `schedule` are part of the run: `done` comes
// only after the last of them has written the output. Driven by hand here,
// one queued piece of work at a time.
TEST_CASE("done waits for the merges and copies it scheduled") {
  std::mutex mu;
  std::deque<std::pair<int, std::function<void()>>> queued;  // (rank, work)
  int scheduled = 0;
  for (int64_t inline_bytes : {int64_t{0}, int64_t{16}, int64_t{1} << 20}) {
    INFO("inline_bytes " << inline_bytes);
    Group g(3);
    g.chunk_bytes = 16;
    g.inline_bytes = static_cast<size_t>(inline_bytes);
    g.schedule_by_rank = [&](int rank, std::function<void()> f) {
      std::lock_guard<std::mutex> lock(mu);
      queued.emplace_back(rank, std::move(f));
      ++scheduled;
    };
    scheduled = 0;
    std::vector<Tensor> inputs{Input<float>(0, 101), Input<float>(1, 101), Input<float>(2, 101)};
    g.Start(inputs);
    for (;;) {
      std::pair<int, std::function<void()>> next;
      {
        std::lock_guard<std::mutex> lock(mu);
        if (queued.empty()) break;
        next = std::move(queued.front());
        queued.pop_front();
      }
      // the member that queued this work must still be waiting for it
      CHECK_FALSE(g.Done(next.first));
      next.second();
    }
    // 16-byte segments stay on the receiving thread when inline_bytes allows
    CHECK((scheduled == 0) == (inline_bytes >= 16));
    for (const auto& got : g.Wait()) {
      REQUIRE(got.ok());
      for (int64_t k = 0; k < 101; ++k) {
        const float want = inputs[0].data<float>()[k] + inputs[1].data<float>()[k] +
                           inputs[2].data<float>()[k];
        REQUIRE(got->data<float>()[k] == want);
      }
    }
  }
}

TEST_CASE("each dtype and merge op through the ring") {
  for (MergeOp op : {MergeOp::kAdd, MergeOp::kMul, MergeOp::kMin, MergeOp::kMax}) {
    CheckReduction<float>(3, 10, op, FinalOp::kId, 16);
    CheckReduction<double>(3, 10, op, FinalOp::kDiv, 16);
    CheckReduction<int32_t>(3, 10, op, FinalOp::kDiv, 16);
    CheckReduction<int64_t>(4, 10, op, FinalOp::kId, 16);
  }
}

TEST_CASE("NaN and inf propagate through the ring as in numpy's sum") {
  const float inf = std::numeric_limits<float>::infinity();
  Group g(3);
  g.Start({Tensor::FromVector<float>({inf, 1, NAN}), Tensor::FromVector<float>({-inf, inf, 1}),
           Tensor::FromVector<float>({1, 1, 1})});
  for (const auto& got : g.Wait()) {
    REQUIRE(got.ok());
    CHECK(std::isnan(got->data<float>()[0]));
    CHECK(got->data<float>()[1] == inf);
    CHECK(std::isnan(got->data<float>()[2]));
  }
}

TEST_CASE("a member that never comes is named when the step's deadline passes") {
  Group g(3, {true, true, false});
  g.Start({Input<float>(0, 6), Input<float>(1, 6), Input<float>(2, 6)});
  g.CancelAll(errors::DeadlineExceeded("step deadline passed"));
  for (const auto& got : g.Wait()) {
    REQUIRE_FALSE(got.ok());
    CHECK(got.status().code() == Code::kDeadlineExceeded);
    const std::string& m = got.status().message();
    CHECK(m.find("never heard from " + Device(2)) != std::string::npos);
    CHECK(m.find("group_key 1, instance_key 7") != std::string::npos);
    CHECK(m.find("task:1/device:CPU:0,") == std::string::npos);  // only the missing one
  }
}

TEST_CASE("a member that goes after it came leaves the others to end at the deadline") {
  Group g(3);
  // Member 2's merges wait here: it announces itself and sends its first
  // round, and nothing after.
  std::deque<std::function<void()>> stalled;
  g.schedule_by_rank = [&stalled](int rank, std::function<void()> f) {
    if (rank == 2) {
      stalled.push_back(std::move(f));
    } else {
      f();
    }
  };
  g.Start({Input<float>(0, 6), Input<float>(1, 6), Input<float>(2, 6)});
  REQUIRE_FALSE(stalled.empty());
  g.Cancel(2, errors::Unavailable("task 2 died"));
  g.CancelAll(errors::DeadlineExceeded("step deadline passed"));
  // What member 2 still held finds its run cancelled, and it ends too.
  for (; !stalled.empty(); stalled.pop_front()) stalled.front()();
  const auto got = g.Wait();
  CHECK(got[2].status().code() == Code::kUnavailable);
  for (int r : {0, 1}) {
    INFO("rank " << r << ": " << got[r].status().ToString());
    REQUIRE_FALSE(got[r].ok());
    CHECK(got[r].status().code() == Code::kDeadlineExceeded);
    const std::string& m = got[r].status().message();
    CHECK(m.find("CollectiveReduce 'allreduce' (group_key 1, instance_key 7") != std::string::npos);
    CHECK(m.find("rank " + std::to_string(r) + " of 3") != std::string::npos);
    // Every member came: none is named as never heard from, but the
    // transfer it waited for is, with the member it waited on.
    CHECK(m.find("never heard from") == std::string::npos);
    CHECK(m.find("while receiving edge 'collective:1:7:0:") != std::string::npos);
  }
}

TEST_CASE("a reduce waiting on its group ends when its step is cancelled") {
  Group g(2, {true, false});
  g.Start({Input<double>(0, 4), Input<double>(1, 4)});
  g.CancelAll(errors::Cancelled("the client cancelled the step"));
  const auto got = g.Wait();
  REQUIRE(got.size() == 1);
  CHECK(got[0].status().code() == Code::kCancelled);
  CHECK(got[0].status().message().find("never heard from " + Device(1)) != std::string::npos);
}

TEST_CASE("members that reduce different sizes fail with INVALID_ARGUMENT") {
  Group g(2);
  g.Start({Input<float>(0, 4), Input<float>(1, 5)});
  for (const auto& got : g.Wait()) {
    REQUIRE_FALSE(got.ok());
    CHECK(got.status().code() == Code::kInvalidArgument);
  }
}

TEST_CASE("collective step ids are below zero and differ per invocation") {
  CHECK(RingAllReduce::StepId(1, 7, 0) < 0);
  CHECK(RingAllReduce::StepId(1, 7, 0) != RingAllReduce::StepId(1, 7, 1));
  CHECK(RingAllReduce::StepId(1, 7, 0) != RingAllReduce::StepId(1, 8, 0));
  CHECK(RingAllReduce::StepId(0, 0, 0) < 0);
}

}  // namespace
}  // namespace tfd::kernels
