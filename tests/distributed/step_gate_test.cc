// StepGate: a hold waits for the running steps and stops new ones; new
// steps go on when the last hold is released or expires; the drain is
// bounded; a step that gave up waiting takes no ticket; a hold whose caller
// gave up before its answer lets go; a closed gate refuses steps and
// cancels those through it; the input pipeline's steps are let be.
#include "daemon/distributed/step_gate.h"

#include <catch2/catch.hpp>
#include <kj/debug.h>
#include <kj/timer.h>

#include "daemon/rpc/kj_status.h"

namespace tfd {
namespace {

struct Loop {
  kj::EventLoop loop;
  kj::WaitScope ws{loop};
  kj::TimerImpl timer{kj::origin<kj::TimePoint>()};

  void Advance(kj::Duration d) {
    timer.advanceTo(timer.now() + d);
    ws.poll();
  }
};

constexpr kj::Duration kDrain = 1 * kj::SECONDS;
constexpr kj::Duration kExpiry = 60 * kj::SECONDS;

TEST_CASE("a hold waits for the running steps, stops new ones, and lets them go on release") {
  Loop l;
  StepGate gate;
  kj::Maybe<kj::Own<StepGate::Ticket>> running = gate.TryEnter();
  REQUIRE(running != nullptr);
  CHECK(gate.running() == 1);

  auto hold = gate.Hold(l.timer, kDrain, kExpiry);
  CHECK(gate.held());
  CHECK_FALSE(hold.poll(l.ws));  // the running step has not ended
  CHECK(gate.TryEnter() == nullptr);
  auto next = gate.Enter();
  CHECK_FALSE(next.poll(l.ws));

  running = nullptr;  // the step ends
  REQUIRE(hold.poll(l.ws));
  const StepGate::Held held = hold.wait(l.ws);
  CHECK(held.running == 0);
  CHECK(gate.running() == 0);
  CHECK_FALSE(next.poll(l.ws));  // still held

  gate.Release(held.id);
  CHECK_FALSE(gate.held());
  REQUIRE(next.poll(l.ws));
  auto ticket = next.wait(l.ws);
  CHECK(gate.running() == 1);
  ticket = nullptr;
  CHECK(gate.running() == 0);
}

TEST_CASE("a hold's id cannot be guessed: ids near it or from another hold release nothing") {
  Loop l;
  StepGate gate;
  const StepGate::Held first = gate.Hold(l.timer, kDrain, kExpiry).wait(l.ws);
  const StepGate::Held second = gate.Hold(l.timer, kDrain, kExpiry).wait(l.ws);
  CHECK(first.id != second.id);
  // The second caller, knowing only its own id, tries what a counter would
  // have handed out around it: the first hold stays.
  gate.Release(second.id);
  for (uint64_t d = 1; d <= 64; ++d) {
    gate.Release(second.id - d);
    gate.Release(second.id + d);
    gate.Release(d);
  }
  CHECK(gate.held());
  CHECK(gate.TryEnter() == nullptr);
  gate.Release(first.id);
  CHECK_FALSE(gate.held());
}

TEST_CASE("a hold answers after the drain bound with the steps still running") {
  Loop l;
  StepGate gate;
  auto stuck = gate.TryEnter();  // a sync replica waiting for its token
  auto hold = gate.Hold(l.timer, kDrain, kExpiry);
  l.Advance(kDrain - 1 * kj::MILLISECONDS);
  CHECK_FALSE(hold.poll(l.ws));
  l.Advance(1 * kj::MILLISECONDS);
  REQUIRE(hold.poll(l.ws));
  const StepGate::Held held = hold.wait(l.ws);
  CHECK(held.running == 1);
  gate.Release(held.id);
  stuck = nullptr;
  CHECK(gate.running() == 0);
}

TEST_CASE("an input pipeline's step is neither held nor waited for, but is cancelled") {
  Loop l;
  StepGate gate;
  // A queue runner's enqueue, blocked on a full queue.
  auto blocked = gate.TryEnter(StepGate::Kind::kInput);
  REQUIRE(blocked != nullptr);
  CHECK(gate.running() == 1);
  auto hold = gate.Hold(l.timer, kDrain, kExpiry);
  REQUIRE(hold.poll(l.ws));  // at once: no step of the training is running
  const StepGate::Held held = hold.wait(l.ws);
  CHECK(held.running == 0);
  // Held, the gate stops training steps but lets the input pipeline's in.
  CHECK(gate.TryEnter() == nullptr);
  auto another = gate.Enter(StepGate::Kind::kInput);
  REQUIRE(another.poll(l.ws));
  auto second = another.wait(l.ws);
  CHECK(gate.running() == 2);
  gate.Release(held.id);

  // A stopping task cancels them as it cancels any step, and admits no more.
  KJ_IF_MAYBE (t, blocked) {
    auto cancelled = (*t)->Cancelled();
    gate.CancelAll(errors::Unavailable("stopping"));
    REQUIRE(cancelled.poll(l.ws));
    CHECK_THROWS(cancelled.wait(l.ws));
  }
  CHECK(gate.TryEnter(StepGate::Kind::kInput) == nullptr);
  blocked = nullptr;
  second = nullptr;
  CHECK(gate.running() == 0);
}

TEST_CASE("a hold never released expires, and the held steps go on") {
  Loop l;
  StepGate gate;
  auto hold = gate.Hold(l.timer, kDrain, kExpiry);
  REQUIRE(hold.poll(l.ws));  // nothing was running
  CHECK(hold.wait(l.ws).running == 0);
  auto next = gate.Enter();
  l.Advance(kExpiry - 1 * kj::MILLISECONDS);
  CHECK_FALSE(next.poll(l.ws));
  l.Advance(1 * kj::MILLISECONDS);
  CHECK_FALSE(gate.held());
  REQUIRE(next.poll(l.ws));
  CHECK(gate.running() == 1);
}

TEST_CASE("two holds: steps go on only when both are gone; unknown ids are ignored") {
  Loop l;
  StepGate gate;
  auto first = gate.Hold(l.timer, kDrain, kExpiry).wait(l.ws);
  auto second = gate.Hold(l.timer, kDrain, kExpiry).wait(l.ws);
  CHECK(first.id != second.id);
  auto next = gate.Enter();
  gate.Release(first.id);
  gate.Release(first.id);  // again: ignored
  gate.Release(12345);     // never given: ignored
  CHECK(gate.held());
  CHECK_FALSE(next.poll(l.ws));
  gate.Release(second.id);
  REQUIRE(next.poll(l.ws));
  next.wait(l.ws) = nullptr;
  // The expiries of released holds do nothing to a later one.
  auto third = gate.Hold(l.timer, kDrain, 2 * kExpiry).wait(l.ws);
  l.Advance(kExpiry);
  CHECK(gate.held());
  gate.Release(third.id);
  CHECK_FALSE(gate.held());
}

TEST_CASE("a step that gave up waiting at the gate takes no ticket") {
  Loop l;
  StepGate gate;
  auto held = gate.Hold(l.timer, kDrain, kExpiry).wait(l.ws);
  {
    auto gave_up = gate.Enter();
    CHECK(gate.waiting() == 1);
  }
  auto waits = gate.Enter();
  gate.Release(held.id);
  CHECK(gate.running() == 1);  // only the one still waiting
  REQUIRE(waits.poll(l.ws));
  waits.wait(l.ws) = nullptr;
  CHECK(gate.running() == 0);
}

TEST_CASE("a hold whose caller gave up before it answered lets go at once") {
  Loop l;
  StepGate gate;
  auto running = gate.TryEnter();
  {
    auto hold = gate.Hold(l.timer, kExpiry, kExpiry);
    CHECK_FALSE(hold.poll(l.ws));
    CHECK(gate.held());
  }  // the holdSteps call was cancelled, or its connection went
  CHECK_FALSE(gate.held());
  auto next = gate.TryEnter();
  CHECK(next != nullptr);
  // An answered hold is the caller's: it lasts until released.
  running = nullptr;
  next = nullptr;
  const StepGate::Held held = gate.Hold(l.timer, kDrain, kExpiry).wait(l.ws);
  CHECK(gate.held());
  gate.Release(held.id);
  CHECK_FALSE(gate.held());
}

TEST_CASE("a closed gate lets no step in; CancelAll tells the steps through it to end") {
  Loop l;
  StepGate gate;
  auto running = gate.TryEnter();
  REQUIRE(running != nullptr);
  auto cancelled = KJ_ASSERT_NONNULL(running)->Cancelled();
  auto hold = gate.Hold(l.timer, kDrain, kExpiry);
  l.Advance(kDrain);  // answers with the step still running
  const StepGate::Held held = hold.wait(l.ws);
  auto waiting = gate.Enter();  // held at the gate
  CHECK_FALSE(waiting.poll(l.ws));

  const Status draining = errors::Unavailable("/job:worker/replica:0/task:0 is shutting down");
  gate.Close(draining);
  // The step waiting at the gate, and any new one, fail with the reason.
  REQUIRE(waiting.poll(l.ws));
  CHECK(Settle(waiting.ignoreResult()).wait(l.ws) == draining);
  CHECK(gate.TryEnter() == nullptr);
  CHECK(Settle(gate.Enter().ignoreResult()).wait(l.ws) == draining);
  gate.Release(held.id);
  CHECK(gate.TryEnter() == nullptr);  // still closed
  // The step through the gate goes on until CancelAll.
  CHECK_FALSE(cancelled.poll(l.ws));
  CHECK(gate.running() == 1);

  gate.CancelAll(draining);
  REQUIRE(cancelled.poll(l.ws));
  CHECK(Settle(kj::mv(cancelled)).wait(l.ws) == draining);
  CHECK(gate.running() == 1);  // until the step has ended
  running = nullptr;
  CHECK(gate.running() == 0);
}

}  // namespace
}  // namespace tfd
