// FrameLedger: the memory one RPC connection's incoming frames hold, charged
// to the task's MemoryBudget (--memory-budget) from the moment a frame's
// header has been read until the message read from it is freed, and bounded
// for the connection on its own (`connection_bytes`, --max-message-bytes):
// one connection cannot take the whole budget for itself.
//
// Cap'n Proto allocates a whole frame as soon as it has read the frame's
// header, and the message keeps that memory for as long as something holds
// it: a call in progress holds its params until it releases them. Two
// streams of one connection share a ledger:
// - the byte stream (PreLoginStream) calls Reserve when a frame's header is
//   complete, and passes the header's bytes on to Cap'n Proto only once
//   Reserve has resolved: what Cap'n Proto then allocates is charged;
// - the message stream (WatchedMessageStream) calls TakeNext when Cap'n
//   Proto hands it the message of that frame, and attaches the charge to the
//   MessageReader, so that the charge is given back when the message goes.
// Frames are reserved and their messages taken in the same order, so the
// oldest charge not yet taken is always the one of the message just read.
//
// A frame that does not fit is waited for: the connection is read no further
// (back-pressure: the peer's sends stall once the socket's buffers are full)
// and the charge is tried again as memory is freed, for at most `max_wait`.
// Then, or at once for a frame larger than the whole budget, Reserve fails
// with RESOURCE_EXHAUSTED naming the flag whose bound it met, and the
// connection is closed. Frames and kernels share the task's budget: a step
// that holds most of it slows the connections that send more, and frames
// held by calls fail the steps that need more (naming the node, as any
// output over it).
//
//   auto ledger = kj::refcounted<FrameLedger>(timer, env.kernel_env->memory, 10 * kj::SECONDS,
//                                             max_message_bytes);
//   auto bytes = kj::heap<PreLoginStream>(kj::mv(socket), limits, kj::addRef(*ledger));
//   auto messages = kj::heap<WatchedMessageStream>(kj::mv(bytes), kj::mv(ledger));
//
// Thread-safety: the event-loop thread that owns the connection; the charges
// it hands out may be freed on any thread (a message may die on the pool).
#pragma once

#include <kj/async.h>
#include <kj/refcount.h>
#include <kj/timer.h>

#include <cstdint>
#include <deque>
#include <memory>

#include "common/memory_charge.h"

namespace tfd {

class FrameLedger final : public kj::Refcounted {
 public:
  // What one frame holds: its bytes in the task's budget and in its
  // connection's bound.
  struct Charge {
    MemoryCharge task;
    MemoryCharge connection;
  };

  // `budget` null: nothing is charged to the task. `connection_bytes` 0:
  // the connection's frames are not bounded on their own.
  FrameLedger(kj::Timer& timer, std::shared_ptr<MemoryBudget> budget, kj::Duration max_wait,
              uint64_t connection_bytes = 0);

  // Charges a frame of `bytes` (header included), waiting up to max_wait
  // for room; rejects with RESOURCE_EXHAUSTED (a Status in a kj::Exception)
  // when there is none. One at a time, in the order of the frames.
  kj::Promise<void> Reserve(uint64_t bytes);
  // The charge of the oldest frame reserved and not yet taken (an empty one
  // when there is none), for its message to carry.
  kj::Own<Charge> TakeNext();

 private:
  kj::Promise<void> TryUntil(uint64_t bytes, kj::TimePoint deadline, kj::Duration pause);
  // Both charges of a frame, or the status of the one that did not fit.
  StatusOr<Charge> TryCharge(uint64_t bytes);

  kj::Timer& timer_;
  const std::shared_ptr<MemoryBudget> budget_;
  // The bytes this connection's frames hold, shared with their charges,
  // which may outlive the ledger.
  const std::shared_ptr<MemoryBudget> connection_;
  const kj::Duration max_wait_;
  std::deque<Charge> pending_;
};

}  // namespace tfd
