// FrameLedger with the two streams of a connection: a frame is charged to
// the memory budget from its header until its message is freed; a frame
// that finds no room is not read on until memory comes back (back-pressure),
// and is refused with RESOURCE_EXHAUSTED naming --memory-budget when none
// comes within the wait, or at once when it is larger than the whole
// budget. One connection's frames held at once have a bound of their own.
// After login a frame over --max-message-bytes is refused at its header.
// Time is the test's own (kj::TimerImpl), so nothing here sleeps.
#include "daemon/rpc/frame_ledger.h"

#include <capnp/message.h>
#include <capnp/rpc.capnp.h>
#include <capnp/serialize-async.h>
#include <kj/timer.h>

#include <catch2/catch.hpp>
#include <memory>
#include <string>

#include "daemon/rpc/pre_login_stream.h"
#include "daemon/rpc/watched_message_stream.h"
#include "tests/rpc/frames.h"

namespace tfd {
namespace {

using testing::Frame;

struct Connection {
  kj::EventLoop loop;
  kj::WaitScope wait{loop};
  kj::TimerImpl timer{kj::origin<kj::TimePoint>()};
  std::shared_ptr<MemoryBudget> budget;
  kj::TwoWayPipe pipe = kj::newTwoWayPipe();
  PreLoginStream* bytes = nullptr;  // owned by messages
  kj::Own<WatchedMessageStream> messages;
  kj::AsyncIoStream& out = *pipe.ends[1];
  std::string pending;

  Connection(uint64_t budget_bytes, uint64_t max_frame_bytes, uint64_t connection_bytes = 0)
      : budget(std::make_shared<MemoryBudget>(budget_bytes)) {
    auto ledger = kj::refcounted<FrameLedger>(timer, budget, 1 * kj::SECONDS, connection_bytes);
    auto limited = kj::heap<PreLoginStream>(
        kj::mv(pipe.ends[0]),
        PreLoginStream::Limits{.pre_login_bytes = 1 << 20, .max_frame_bytes = max_frame_bytes},
        kj::addRef(*ledger));
    bytes = limited.get();
    bytes->Lift();
    messages = kj::heap<WatchedMessageStream>(kj::mv(limited), kj::mv(ledger));
  }

  kj::Promise<void> Send(std::string frame) {
    pending = std::move(frame);
    return out.write(pending.data(), pending.size()).eagerlyEvaluate(nullptr);
  }
  kj::Promise<kj::Own<capnp::MessageReader>> Read() {
    capnp::ReaderOptions options;
    options.traversalLimitInWords = uint64_t{1} << 31;
    return messages->readMessage(options);
  }
  // Lets `d` of the test's time pass, a step at a time, running what it wakes.
  void Pass(kj::Duration d) {
    const kj::TimePoint end = timer.now() + d;
    while (timer.now() < end) {
      timer.advanceTo(kj::min(timer.now() + 10 * kj::MILLISECONDS, end));
      wait.poll();
    }
  }
};

std::string Description(kj::Maybe<kj::Exception>& e) {
  KJ_IF_MAYBE(ex, e) { return ex->getDescription().cStr(); }
  return "";
}

TEST_CASE("a frame is charged to the budget from its header until its message is freed") {
  Connection c(1 << 20, 0);
  const std::string frame = Frame(1000);
  auto sent = c.Send(frame);
  auto message = c.Read().wait(c.wait);
  CHECK(c.budget->used() == frame.size());
  CHECK(message->getRoot<capnp::rpc::Message>().getAbort().getReason().size() == 1000);
  message = nullptr;
  CHECK(c.budget->used() == 0);
}

TEST_CASE("a frame that finds no room is read once memory comes back") {
  Connection c(4096, 0);
  const std::string frame = Frame(2500);
  auto first_sent = c.Send(frame);
  auto first = c.Read().wait(c.wait);
  CHECK(c.budget->used() == frame.size());

  auto second_sent = c.Send(frame);
  auto second = c.Read();
  c.Pass(100 * kj::MILLISECONDS);
  CHECK_FALSE(second.poll(c.wait));  // held back: the first still holds its bytes
  CHECK(c.budget->used() == frame.size());

  first = nullptr;
  c.Pass(200 * kj::MILLISECONDS);
  REQUIRE(second.poll(c.wait));
  auto message = second.wait(c.wait);
  CHECK(c.budget->used() == frame.size());
  CHECK(c.bytes->refusal() == nullptr);
}

TEST_CASE("a frame that finds no room within the wait is refused with RESOURCE_EXHAUSTED") {
  Connection c(4096, 0);
  const std::string frame = Frame(2500);
  auto first_sent = c.Send(frame);
  auto first = c.Read().wait(c.wait);
  auto second_sent = c.Send(frame);
  auto second = c.Read();
  c.Pass(1100 * kj::MILLISECONDS);
  REQUIRE(second.poll(c.wait));
  auto e = kj::runCatchingExceptions([&]() { second.wait(c.wait); });
  const std::string why = Description(e);
  INFO(why);
  CHECK(why.find("RESOURCE_EXHAUSTED") != std::string::npos);
  CHECK(why.find("found no room in the task's memory budget for 1 s") != std::string::npos);
  CHECK(why.find("(--memory-budget)") != std::string::npos);
  KJ_IF_MAYBE(refused, c.bytes->refusal()) {
    CHECK(refused->kind == "memory budget");
  } else {
    FAIL("no refusal noted");
  }
  first = nullptr;
  CHECK(c.budget->used() == 0);  // the refused frame holds nothing
}

TEST_CASE("one connection's frames held at once are bounded on their own") {
  Connection c(1 << 30, 0, 4096);  // the task has room; the connection does not
  const std::string frame = Frame(2500);
  auto first_sent = c.Send(frame);
  auto first = c.Read().wait(c.wait);
  auto second_sent = c.Send(frame);
  auto second = c.Read();
  c.Pass(100 * kj::MILLISECONDS);
  CHECK_FALSE(second.poll(c.wait));
  CHECK(c.budget->used() == frame.size());  // the waiting frame holds none of the task's bytes
  first = nullptr;
  c.Pass(200 * kj::MILLISECONDS);
  REQUIRE(second.poll(c.wait));
  auto message = second.wait(c.wait);

  auto third_sent = c.Send(frame);
  auto third = c.Read();
  c.Pass(1100 * kj::MILLISECONDS);
  REQUIRE(third.poll(c.wait));
  auto e = kj::runCatchingExceptions([&]() { third.wait(c.wait); });
  const std::string why = Description(e);
  INFO(why);
  CHECK(why.find("RESOURCE_EXHAUSTED") != std::string::npos);
  CHECK(why.find("found no room beside its connection's other frames for 1 s") !=
        std::string::npos);
  CHECK(why.find("of the 4096 bytes one connection's frames may hold (--max-message-bytes)") !=
        std::string::npos);
}

TEST_CASE("a frame larger than the whole budget is refused at its header") {
  Connection c(4096, 0);
  // Only the header: the refusal cannot have waited for the body.
  auto sent = c.Send(std::string("\0\0\0\0\0\x04\0\0", 8));  // one segment of 1024 words
  auto e = kj::runCatchingExceptions([&]() { c.Read().wait(c.wait); });
  const std::string why = Description(e);
  INFO(why);
  CHECK(why.find("sent a frame of 8200 bytes, more than the task's whole memory budget of "
                 "4096 bytes (--memory-budget)") != std::string::npos);
  CHECK(c.budget->used() == 0);
}

TEST_CASE("after login a frame over --max-message-bytes is refused at its header") {
  Connection c(1 << 30, 4096);
  auto small_sent = c.Send(Frame(1000));
  CHECK(c.Read().wait(c.wait)->getRoot<capnp::rpc::Message>().isAbort());
  auto sent = c.Send(std::string("\0\0\0\0\xf0\xff\xff\x7f", 8));  // 0x7ffffff0 words
  auto e = kj::runCatchingExceptions([&]() { c.Read().wait(c.wait); });
  const std::string why = Description(e);
  INFO(why);
  CHECK(why.find("sent a frame of 17179869064 bytes; the most one message may take is 4096 "
                 "bytes (--max-message-bytes)") != std::string::npos);
  KJ_IF_MAYBE(refused, c.bytes->refusal()) {
    CHECK(refused->kind == "frame limit");
  } else {
    FAIL("no refusal noted");
  }
  CHECK(c.budget->used() == 0);
}

}  // namespace
}  // namespace tfd
