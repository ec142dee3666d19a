// StepGate: lets a checkpoint be one cut of the training. Every step this
// task's master runs passes the gate (Enter) and holds a ticket until it
// ends. A hold (Hold, from the master that saves a cluster checkpoint, over
// Worker.holdSteps) stops new steps at the gate and answers once the steps
// already through have ended; with every task held that way no step runs
// anywhere, so the tasks' snapshots hold the same steps. Release lets the
// waiting steps go on.
//
// Every wait is bounded: a hold lets go by itself after `expiry` (a saving
// master that died never freezes the cluster; Worker.holdSteps also lets
// go as soon as its caller does), its answer comes after at most `drain`
// even while steps still run (a sync replica's step waiting for a token
// the saving chief hands out only after the save), and a step held at the
// gate is bounded by its own deadline (the caller's exclusiveJoin; a
// cancelled wait takes no ticket).
//
// A step that feeds the input pipeline (a queue runner's enqueue, which
// may wait on a full queue for as long as training pauses: TF1 never held
// those) enters as kInput: holds neither stop it nor wait for it, since
// what it changes (a reader's position, a queue) is no variable a
// checkpoint's cut must agree on.
//
// The gate also stops the master's steps when the task stops
// (daemon/task_host.h, Drain): Close refuses new steps, and CancelAll tells
// each step through the gate to end now (Ticket::Cancelled), so that none
// is left running when the services it uses go.
//
//   auto ticket = co_await gate.Enter();   // in a step; ~Ticket ends it
//   ... run it, or end it early when ticket->Cancelled() rejects ...
//   auto held = gate.Hold(timer, 1 * kj::SECONDS, 60 * kj::SECONDS);
//   ... snapshot ...; gate.Release(held.id);
//
// Thread-safety: event-loop thread only.
#pragma once

#include <kj/async.h>
#include <kj/timer.h>

#include <cstdint>
#include <optional>
#include <set>
#include <vector>

#include "common/status.h"

namespace tfd {

class StepGate {
 public:
  enum class Kind {
    kHeld,   // a step holds stop at the gate and wait for
    kInput,  // an input pipeline's step, which holds let be
  };

  // A step through the gate; the step has ended when it is destroyed.
  class Ticket {
   public:
    Ticket(StepGate& gate, Kind kind);
    ~Ticket();
    Ticket(const Ticket&) = delete;
    Ticket& operator=(const Ticket&) = delete;

    // Rejects with CancelAll's reason when the gate cancels its steps;
    // never resolves otherwise. Taken once.
    kj::Promise<void> Cancelled();

   private:
    friend class StepGate;
    StepGate& gate_;
    const Kind kind_;
    kj::Own<kj::PromiseFulfiller<void>> cancel_;
    kj::Maybe<kj::Promise<void>> cancelled_;
  };

  struct Held {
    uint64_t id = 0;       // for Release
    uint32_t running = 0;  // steps still running when the hold answered
  };

  StepGate() : expiries_(errors_) {}

  // A ticket at once, unless the gate is closed or (for kHeld) a hold is on.
  kj::Maybe<kj::Own<Ticket>> TryEnter(Kind kind = Kind::kHeld);
  // Ready at once unless a hold is on (for kHeld); then when the last hold
  // lets go. Fails with Close's reason once the gate is closed.
  kj::Promise<kj::Own<Ticket>> Enter(Kind kind = Kind::kHeld);

  // From now on no step enters: Enter fails with `why`, and so do the
  // steps waiting at the gate. The steps through it go on.
  void Close(const Status& why);
  // Closes the gate and cancels every step through it: each ticket's
  // Cancelled() rejects with `why`.
  void CancelAll(const Status& why);

  // Holds new kHeld steps until Release(id) or `expiry`, whichever is
  // first, and resolves once no kHeld step is running, or after `drain`
  // with the number still running. Until it resolves the hold is the promise's: dropped
  // (its caller gave up), it lets the hold go at once.
  kj::Promise<Held> Hold(kj::Timer& timer, kj::Duration drain, kj::Duration expiry);

  // Lets hold `id` go; an unknown id (expired, released already) is ignored.
  void Release(uint64_t id);

  bool held() const { return !holds_.empty(); }
  // Every step through the gate, of either kind.
  uint32_t running() const { return running_ + running_input_; }
  size_t waiting() const { return waiting_.size(); }

 private:
  struct IgnoreErrors final : public kj::TaskSet::ErrorHandler {
    void taskFailed(kj::Exception&&) override {}
  };

  void Exit(Kind kind);
  void Drained();
  uint64_t NewHoldId() const;

  uint32_t running_ = 0;        // kHeld steps, which holds wait for
  uint32_t running_input_ = 0;  // kInput steps
  std::set<Ticket*> tickets_;  // the steps through the gate, for CancelAll
  std::optional<Status> closed_;
  std::set<uint64_t> holds_;
  std::vector<kj::Own<kj::PromiseFulfiller<kj::Own<Ticket>>>> waiting_;
  std::vector<kj::Own<kj::PromiseFulfiller<void>>> draining_;
  IgnoreErrors errors_;
  kj::TaskSet expiries_;  // last: its timers call Release on this gate
};

}  // namespace tfd
