// PreparedBatch: a step never waits for the prefetch thread, and a batch is
// made by whichever thread gets to it, with the fallbacks a full memory
// budget needs.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include <catch2/catch.hpp>

#include "kernels/data/batch_prefetch.h"

namespace tfd::kernels::data {
namespace {

using namespace std::chrono_literals;

// A make function whose first call (the prefetch thread's) blocks until
// released, as a SCHED_IDLE thread preempted mid-batch would; later calls
// answer at once with `later`.
struct SlowFirstMake {
  std::mutex mu;
  std::condition_variable cv;
  bool released = false;
  bool first_started = false;
  std::atomic<int> calls{0};
  Code later = Code::kOk;

  PreparedBatch::Make Function() {
    return [this]() -> StatusOr<BatchTensors> {
      const int call = calls.fetch_add(1);
      BatchTensors t;
      t.images = Tensor::Scalar<float>(static_cast<float>(call));
      if (call == 0) {
        std::unique_lock<std::mutex> lock(mu);
        first_started = true;
        cv.notify_all();
        cv.wait(lock, [&] { return released; });
        return t;
      }
      {
        std::lock_guard<std::mutex> lock(mu);
        cv.notify_all();  // for WaitCalls
      }
      if (later != Code::kOk) return Status(later, "no room");
      return t;
    };
  }
  // Whether the function has been called `n` times within 10 s. No Catch2
  // assertion: callable from another thread.
  bool WaitCalls(int n) {
    std::unique_lock<std::mutex> lock(mu);
    return cv.wait_for(lock, 10s, [&] { return calls >= n; });
  }
  void WaitFirstStarted() {
    std::unique_lock<std::mutex> lock(mu);
    REQUIRE(cv.wait_for(lock, 10s, [&] { return first_started; }));
  }
  void Release() {
    std::lock_guard<std::mutex> lock(mu);
    released = true;
    cv.notify_all();
  }
};

TEST_CASE("A run does not wait for a prefetch thread that is still making the batch") {
  SlowFirstMake slow;
  auto prepared = std::make_shared<PreparedBatch>(slow.Function());
  std::thread thread([&] { prepared->Run(); });
  slow.WaitFirstStarted();
  const auto began = std::chrono::steady_clock::now();
  auto taken = prepared->Take(std::chrono::steady_clock::now() + 30s);
  const auto waited = std::chrono::steady_clock::now() - began;
  slow.Release();
  thread.join();
  REQUIRE(taken.ok());
  CHECK(taken->images.scalar<float>() == 1.0f);  // made by the run, the second call
  CHECK(waited < 5s);  // not held until the thread was released
  CHECK(slow.calls == 2);
}

TEST_CASE("A batch the thread has not started is made by the run, and only there") {
  SlowFirstMake slow;
  slow.Release();
  auto prepared = std::make_shared<PreparedBatch>(slow.Function());
  auto taken = prepared->Take(std::chrono::steady_clock::now() + 30s);
  REQUIRE(taken.ok());
  prepared->Run();  // the thread comes late: nothing left to do
  CHECK(slow.calls == 1);
}

TEST_CASE("A batch made ahead is taken as made") {
  SlowFirstMake slow;
  slow.Release();
  auto prepared = std::make_shared<PreparedBatch>(slow.Function());
  prepared->Run();
  auto taken = prepared->Take(std::chrono::steady_clock::now() + 30s);
  REQUIRE(taken.ok());
  CHECK(taken->images.scalar<float>() == 0.0f);
  CHECK(slow.calls == 1);
}

TEST_CASE("Out of memory while the thread's copy is being made: the run takes that copy") {
  SlowFirstMake slow;
  slow.later = Code::kResourceExhausted;
  auto prepared = std::make_shared<PreparedBatch>(slow.Function());
  std::thread thread([&] { prepared->Run(); });
  slow.WaitFirstStarted();
  // Released once the run has made its own copy (the second call) and run
  // out of memory, so that it waits for the thread's.
  std::atomic<bool> run_made_its_own{false};
  std::thread releaser([&] {
    run_made_its_own = slow.WaitCalls(2);
    slow.Release();
  });
  auto taken = prepared->Take(std::chrono::steady_clock::now() + 30s);
  releaser.join();
  thread.join();
  CHECK(run_made_its_own);
  REQUIRE(taken.ok());
  CHECK(taken->images.scalar<float>() == 0.0f);  // the thread's copy
}

TEST_CASE("Out of memory with nothing else to take is the run's error") {
  SlowFirstMake slow;
  slow.later = Code::kResourceExhausted;
  slow.Release();
  auto prepared = std::make_shared<PreparedBatch>(slow.Function());
  (void)slow.Function()();  // the first call is spent: every later one fails
  auto taken = prepared->Take(std::chrono::steady_clock::now() + 30s);
  CHECK(taken.status().code() == Code::kResourceExhausted);
}

}  // namespace
}  // namespace tfd::kernels::data
