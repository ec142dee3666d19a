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
    p.schedule = schedule;
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
  void CancelAll(const Status& why) {
    for (auto& cm : cms_) cm.Cancel(why);
  }

  MergeOp merge = MergeOp::kAdd;
  FinalOp final_op = FinalOp::kId;
  size_t chunk_bytes = size_t{4} << 20;
  std::function<void(std::function<void()>)> schedule;
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
                    std::function<void(std::function<void()>)> schedule = nullptr) {
  Group g(size);
  g.schedule = std::move(schedule);
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
