// StepGate: tickets, holds and their bounds.
#include "daemon/distributed/step_gate.h"

#include <memory>
#include <random>

#include "daemon/rpc/kj_status.h"

namespace tfd {

StepGate::Ticket::Ticket(StepGate& gate, Kind kind) : gate_(gate), kind_(kind) {
  auto paf = kj::newPromiseAndFulfiller<void>();
  cancel_ = kj::mv(paf.fulfiller);
  cancelled_ = kj::mv(paf.promise);
  ++(kind == Kind::kHeld ? gate_.running_ : gate_.running_input_);
  gate_.tickets_.insert(this);
}

StepGate::Ticket::~Ticket() {
  gate_.tickets_.erase(this);
  gate_.Exit(kind_);
}

kj::Promise<void> StepGate::Ticket::Cancelled() {
  KJ_IF_MAYBE(p, cancelled_) {
    auto taken = kj::mv(*p);
    cancelled_ = nullptr;
    return taken;
  }
  return KjFromStatus(errors::Internal("a step gate's ticket was asked twice for its cancellation"));
}

kj::Maybe<kj::Own<StepGate::Ticket>> StepGate::TryEnter(Kind kind) {
  if (closed_ || (kind == Kind::kHeld && !holds_.empty())) return nullptr;
  return kj::heap<Ticket>(*this, kind);
}

kj::Promise<kj::Own<StepGate::Ticket>> StepGate::Enter(Kind kind) {
  if (closed_) return KjFromStatus(*closed_);
  KJ_IF_MAYBE (ticket, TryEnter(kind)) {
    return kj::mv(*ticket);
  }
  auto paf = kj::newPromiseAndFulfiller<kj::Own<Ticket>>();
  waiting_.push_back(kj::mv(paf.fulfiller));
  return kj::mv(paf.promise);
}

uint64_t StepGate::NewHoldId() const {
  // Unguessable, so that releaseSteps lets go only of a hold its caller was
  // answered (an id counted up from 1 would let anyone end another's hold).
  std::random_device random;
  for (;;) {
    const uint64_t id = (uint64_t{random()} << 32) | random();
    if (id != 0 && holds_.count(id) == 0) return id;
  }
}

kj::Promise<StepGate::Held> StepGate::Hold(kj::Timer& timer, kj::Duration drain,
                                           kj::Duration expiry) {
  const uint64_t id = NewHoldId();
  holds_.insert(id);
  expiries_.add(timer.afterDelay(expiry).then([this, id]() { Release(id); }));
  kj::Promise<void> drained = kj::READY_NOW;
  if (running_ > 0) {
    auto paf = kj::newPromiseAndFulfiller<void>();
    draining_.push_back(kj::mv(paf.fulfiller));
    drained = paf.promise.exclusiveJoin(timer.afterDelay(drain));
  }
  // Once answered, the hold is the caller's to release; before, it goes
  // with the promise (a holdSteps call cancelled, or its connection gone).
  auto answered = std::make_shared<bool>(false);
  return drained
      .then([this, id, answered]() {
        *answered = true;
        return Held{id, running_};
      })
      .attach(kj::defer([this, id, answered]() {
        if (!*answered) Release(id);
      }));
}

void StepGate::Release(uint64_t id) {
  if (holds_.erase(id) == 0 || !holds_.empty()) return;
  // Each waiting step takes its ticket now; a wait its caller gave up on
  // (past its deadline) takes none.
  auto waiting = kj::mv(waiting_);
  waiting_.clear();
  for (auto& w : waiting) {
    if (w->isWaiting()) w->fulfill(kj::heap<Ticket>(*this, Kind::kHeld));
  }
}

void StepGate::Close(const Status& why) {
  closed_ = why;
  auto waiting = kj::mv(waiting_);
  waiting_.clear();
  for (auto& w : waiting) {
    if (w->isWaiting()) w->reject(KjFromStatus(why));
  }
}

void StepGate::CancelAll(const Status& why) {
  Close(why);
  // Rejecting only queues the steps' reactions, so the set holds still.
  for (Ticket* t : tickets_) {
    if (t->cancel_->isWaiting()) t->cancel_->reject(KjFromStatus(why));
  }
}

void StepGate::Exit(Kind kind) {
  if (kind == Kind::kInput) {
    --running_input_;
  } else if (--running_ == 0) {
    Drained();
  }
}

void StepGate::Drained() {
  auto draining = kj::mv(draining_);
  draining_.clear();
  for (auto& d : draining) d->fulfill();
}

}  // namespace tfd
