// PreLoginStream: an accepted connection's byte stream, which holds a peer
// that has not logged in yet to a small budget of Cap'n Proto bytes.
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
// answer was sent.
//
// It reads the frame headers (segment count and sizes, see
// https://capnproto.org/encoding.html#serialization-over-a-stream) as the
// bytes pass through, and fails the read — before Cap'n Proto allocates for
// the frame — when the frames so far plus the one announced would exceed the
// budget. After Lift() (the login succeeded) bytes pass through unexamined.
//
//   auto limited = kj::heap<PreLoginStream>(kj::mv(accepted), 1 << 20);
//   PreLoginStream& handle = *limited;
//   ... build the RPC connection over `limited` ...
//   handle.Lift();  // from the Gate, once the token matched
//
// Thread-safety: the event-loop thread that owns the stream.
#pragma once

#include <kj/async-io.h>

#include <cstdint>
#include <string>

#include "daemon/rpc/forwarding_stream.h"

namespace tfd {

class PreLoginStream final : public ForwardingStream {
 public:
  PreLoginStream(kj::Own<kj::AsyncIoStream> inner, uint64_t budget_bytes);

  // Stops checking: the peer has logged in.
  void Lift() { lifted_ = true; }
  // Why a read was failed, if one was.
  kj::Maybe<const std::string&> refusal() const;

  // Reads are checked; everything else is passed on.
  kj::Promise<size_t> tryRead(void* buffer, size_t min_bytes, size_t max_bytes) override;

 private:
  // Follows the frame structure through `n` bytes; throws (FAILED, with a
  // description naming what the peer declared) past the budget.
  void Inspect(const kj::byte* bytes, size_t n);
  // Throws if the frame announced so far would not fit in the budget.
  void CheckBudget();
  [[noreturn]] void Refuse(std::string why);

  enum class State { kFirstWord, kSizes, kBody };

  const uint64_t budget_;
  bool lifted_ = false;
  kj::Maybe<std::string> refusal_;

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
