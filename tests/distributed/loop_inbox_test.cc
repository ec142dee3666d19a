// LoopInbox: work posted from other threads runs on the loop thread, in the
// order each thread posted it, without the posting thread waiting; on the
// loop thread it runs at once; after Stop it is refused and nothing runs.
#include "daemon/distributed/loop_inbox.h"

#include <kj/async-io.h>

#include <catch2/catch.hpp>
#include <atomic>
#include <thread>
#include <vector>

namespace tfd {
namespace {

using namespace std::chrono_literals;

// Turns the loop until `done` holds, or `patience` has passed.
bool TurnUntil(kj::AsyncIoContext& io, const std::function<bool()>& done,
               std::chrono::milliseconds patience = 10s) {
  const auto give_up = std::chrono::steady_clock::now() + patience;
  while (!done() && std::chrono::steady_clock::now() < give_up) {
    io.provider->getTimer().afterDelay(1 * kj::MILLISECONDS).wait(io.waitScope);
  }
  return done();
}

TEST_CASE("work posted from other threads runs on the loop, in each thread's order") {
  auto io = kj::setupAsyncIo();
  LoopInbox inbox;
  auto draining = inbox.Run().eagerlyEvaluate(nullptr);
  const auto loop_thread = std::this_thread::get_id();
  constexpr int kThreads = 4, kEach = 5000;
  std::vector<std::vector<int>> seen(kThreads);  // loop thread only
  std::atomic<int> off_loop{0}, ran{0}, refused{0};
  std::vector<std::thread> posters;
  for (int t = 0; t < kThreads; ++t) {
    posters.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        const bool posted = inbox.Post([&, t, i] {
          if (std::this_thread::get_id() != loop_thread) ++off_loop;
          seen[t].push_back(i);
          ++ran;
        });
        if (!posted) ++refused;
      }
    });
  }
  // The posters never wait for the loop: they all finish before it turns.
  for (auto& p : posters) p.join();
  CHECK(refused == 0);
  CHECK(ran == 0);
  REQUIRE(TurnUntil(io, [&] { return ran == kThreads * kEach; }));
  CHECK(off_loop == 0);
  for (int t = 0; t < kThreads; ++t) {
    REQUIRE(seen[t].size() == kEach);
    for (int i = 0; i < kEach; ++i) REQUIRE(seen[t][i] == i);
  }
}

TEST_CASE("the loop sleeping between posts is woken by each") {
  auto io = kj::setupAsyncIo();
  LoopInbox inbox;
  auto draining = inbox.Run().eagerlyEvaluate(nullptr);
  std::atomic<int> ran{0};
  for (int round = 1; round <= 3; ++round) {
    std::thread([&] { inbox.Post([&] { ++ran; }); }).join();
    REQUIRE(TurnUntil(io, [&] { return ran == round; }));
  }
}

TEST_CASE("on the loop thread, posted work runs before Post returns") {
  auto io = kj::setupAsyncIo();
  LoopInbox inbox;
  bool ran = false;
  CHECK(inbox.OnLoopThread());
  REQUIRE(inbox.Post([&] { ran = true; }));
  CHECK(ran);
}

TEST_CASE("after Stop, posts are refused and queued work never runs") {
  auto io = kj::setupAsyncIo();
  LoopInbox inbox;
  auto draining = inbox.Run().eagerlyEvaluate(nullptr);
  std::atomic<int> ran{0};
  bool queued = false, refused = true;
  std::thread([&] { queued = inbox.Post([&] { ++ran; }); }).join();
  inbox.Stop();
  std::thread([&] { refused = !inbox.Post([&] { ++ran; }); }).join();
  CHECK(queued);
  CHECK(refused);
  CHECK_FALSE(inbox.Post([&] { ++ran; }));  // the loop thread too
  TurnUntil(io, [] { return false; }, 200ms);
  CHECK(ran == 0);
}

}  // namespace
}  // namespace tfd
