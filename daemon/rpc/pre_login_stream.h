// PreLoginStream: an accepted connection's byte stream, which follows the
// Cap'n Proto frames that pass through it: before login it holds the peer to
// a small budget of bytes; after login it refuses a frame over the largest a
// message may be; and it charges every frame to the task's memory budget
// (through a FrameLedger) before Cap'n Proto allocates for it.
//
// Why a byte-stream adapter: Cap'n Proto 0.9.2 fixes a TwoPartyVatNetwork's
// ReaderOptions when it is built, and its traversal limit bounds outgoing
// messages too, so a connection that must later carry 256 MB tensors cannot
// start with a small limit and have it raised after the login. Nor can the
// limit be chosen per message in a MessageStream: the RPC system asks for
// the next message as soon as it has the previous one, i.e. before the login
// it carries has run, so a client's first big call after logging in would
// be judged by the pre-login limit. Here the check happens when a frame's
// header arrives, which for a well-behaved client is after the login's
// answer was sent. And only here is a frame's size known before Cap'n Proto
// allocates all of it (then fills it as the bytes come).
//
// It reads the frame headers (segment count and sizes, see
// https://capnproto.org/encoding.html#serialization-over-a-stream) as the
// bytes pass through, and fails the read — before Cap'n Proto allocates for
// the frame — when
// - before Lift() (the login succeeded): the frames so far plus the one
//   announced would exceed the pre-login budget;
// - after Lift(): the frame announced is larger than `max_frame_bytes`
//   (--max-message-bytes; 0: no such check).
// With a ledger, the read that completes a frame's header resolves only once
// the frame is charged (FrameLedger::Reserve): until then the connection is
// read no further; a frame that finds no room fails the read. Every frame
// is charged, before login and after; the message stream above hands each
// charge to its message (daemon/rpc/frame_ledger.h).
//
//   auto ledger = kj::refcounted<FrameLedger>(timer, budget, 10 * kj::SECONDS);
//   auto limited = kj::heap<PreLoginStream>(kj::mv(accepted),
//       PreLoginStream::Limits{.pre_login_bytes = 1 << 20, .max_frame_bytes = 1ull << 32},
//       kj::addRef(*ledger));
//   PreLoginStream& handle = *limited;
//   ... build the RPC connection over `limited`, its message stream given `ledger` ...
//   handle.Lift();  // from the Gate, once the token matched
//
// Thread-safety: the event-loop thread that owns the stream.
#pragma once

#include <kj/async-io.h>

#include <cstdint>
#include <string>
#include <vector>

#include "daemon/rpc/forwarding_stream.h"
#include "daemon/rpc/frame_ledger.h"

namespace tfd {

class PreLoginStream final : public ForwardingStream {
 public:
  struct Limits {
    uint64_t pre_login_bytes = 0;  // all frames before Lift(), headers included
    uint64_t max_frame_bytes = 0;  // one frame after Lift(); 0: unchecked
  };
  // Why a read was failed: `kind` is what the task's log files it under.
  struct Refusal {
    std::string kind;  // "pre-login limit", "frame limit", "memory budget"
    std::string why;
  };

  // `ledger` null: nothing is charged.
  PreLoginStream(kj::Own<kj::AsyncIoStream> inner, Limits limits,
                 kj::Own<FrameLedger> ledger = {});
  // Before login only (no ledger, any frame after it).
  PreLoginStream(kj::Own<kj::AsyncIoStream> inner, uint64_t budget_bytes)
      : PreLoginStream(kj::mv(inner), Limits{.pre_login_bytes = budget_bytes}, {}) {}

  // The peer has logged in: from the next frame on, the per-frame limit
  // applies instead of the pre-login budget.
  void Lift() { lifted_ = true; }
  // Why a read was failed, if one was.
  kj::Maybe<const Refusal&> refusal() const;

  // Reads are checked; everything else is passed on.
  kj::Promise<size_t> tryRead(void* buffer, size_t min_bytes, size_t max_bytes) override;

 private:
  // Follows the frame structure through `n` bytes; throws (FAILED, with a
  // description naming what the peer declared) past a limit. Notes in
  // complete_headers_ the size of each frame whose header it completed.
  void Inspect(const kj::byte* bytes, size_t n);
  // Throws if the frame announced so far would not fit in the limits.
  void CheckBudget();
  // The header is complete: the frame is to be charged.
  void HeaderComplete();
  // Charges the frames of complete_headers_[i...], one after the other.
  kj::Promise<void> Charge(std::vector<uint64_t> frames, size_t i);
  [[noreturn]] void Refuse(const char* kind, std::string why);

  enum class State { kFirstWord, kSizes, kBody };

  const Limits limits_;
  kj::Own<FrameLedger> ledger_;
  bool lifted_ = false;
  kj::Maybe<Refusal> refusal_;
  std::vector<uint64_t> complete_headers_;  // of the bytes being inspected

  State state_ = State::kFirstWord;
  uint64_t consumed_ = 0;      // bytes of the frames completed before this one
  kj::byte word_[8] = {};      // the header word or size being assembled
  size_t word_fill_ = 0;
  uint64_t segments_ = 0;      // the current frame's segment count
  uint64_t sizes_left_ = 0;    // 4-byte table entries still to come (padding included)
  uint64_t sizes_seen_ = 0;    // segment sizes read so far (the first included)
  uint64_t header_bytes_ = 0;  // the current frame's header size
  uint64_t body_words_ = 0;    // its body, as declared so far
  uint64_t body_left_ = 0;     // body bytes still to pass
};

}  // namespace tfd
