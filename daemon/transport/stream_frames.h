// Stream frames: the wire format of a data-plane stream, the data plane's
// link to a task that shares no memory with this one (another host, or
// --data-plane-transports=stream).
//
// A stream is a connection to the task's own listening port (TLS when the
// task runs TLS), opened by the task that pushes. It starts with kMagic, so
// the task's accept loop tells it from Cap'n Proto RPC, then a hello that
// carries the same credential as a login; the task answers with a welcome
// (or a refusal, and closes). After that, frames:
//
//   opener -> task: push  (a tensor up to the welcome's eagerBytes, inline)
//                   offer (a larger tensor's header and size; no bytes yet)
//                   data  (the bytes of an offer the task granted)
//                   step  (a step message: run, done, cancel)
//   task -> opener: grant (room for an offer, or why there is none)
//                   step  (a step message, most often the `done` that
//                         answers a `run` which came on this stream)
//
// Step messages go both ways so that an answer travels on the connection
// its request came on: the kernel then carries the request's ACK in the
// answer's segment rather than in one of its own, and the answering task
// writes to a socket it is already reading (bench/NOTES.md, "Scale").
//
// Large tensors wait for a grant so that the task never reads more than its
// --max-received-bytes allows and never has to stop reading a stream (which
// would hold up the step messages behind a large tensor); the grant costs a
// round trip per large tensor, small against its transfer.
//
// Every frame is a 24-byte header (kind, meta bytes, bytes, tag; little
// endian), `meta` bytes of one Cap'n Proto message (schemas/transport.capnp,
// whole words), then `bytes` of payload for push and data frames. For an
// offer `bytes` is the size offered; `tag` names the offer in offer, grant
// and data frames. DecodeFrameHeader checks each kind's limits before a
// byte of its meta is read (a step frame's: step_messages.h).
//
//   co: kj::Promise<void> sent = WriteFrame(out, FrameKind::kStep, 0, words, {});
//   ReadFrame(in, Side::kOpener).then([](kj::Maybe<Frame> f) { ... f->header.kind, f->meta ... });
//
// Thread-safety: pure functions and promises on the stream's event loop.
#pragma once

#include <capnp/common.h>
#include <kj/array.h>
#include <kj/async-io.h>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace tfd::stream {

// The first bytes of a stream. As a Cap'n Proto frame's first word it would
// announce over a billion segments, so no RPC client ever sends it.
inline constexpr std::array<kj::byte, 8> kMagic = {0x89, 'T', 'F', 'D', 'S', '\r', '\n', 0x1a};
inline constexpr uint32_t kStreamVersion = 1;
inline constexpr size_t kHeaderBytes = 24;

inline constexpr size_t kMaxHelloBytes = 4 << 10;     // hello, welcome
inline constexpr size_t kMaxMetaBytes = 64 << 10;     // push, offer, grant
// The most a push may carry inline; what a task allows (its welcome's
// eagerBytes) is at most this.
inline constexpr uint64_t kMaxEagerBytes = 1 << 20;
inline constexpr uint64_t kDefaultEagerBytes = 64 << 10;

enum class FrameKind : uint32_t {
  kHello = 1,
  kWelcome = 2,
  kPush = 3,
  kOffer = 4,
  kGrant = 5,
  kData = 6,
  kStep = 7,
};
inline constexpr std::array<std::string_view, 7> kFrameKindNames = {
    "hello", "welcome", "push", "offer", "grant", "data", "step"};
static_assert(kFrameKindNames.size() == static_cast<size_t>(FrameKind::kStep));
std::string_view FrameKindName(FrameKind kind);

// Who sent a frame: the task that opened the stream, or the task it reached.
enum class Side { kOpener, kTask };

struct FrameHeader {
  FrameKind kind = FrameKind::kHello;
  uint32_t meta_bytes = 0;
  uint64_t bytes = 0;  // payload of push and data; the size offered in offer
  uint64_t tag = 0;    // the offer, in offer, grant and data
};

std::array<kj::byte, kHeaderBytes> EncodeFrameHeader(const FrameHeader& header);
// INVALID_ARGUMENT for a kind `from` may not send, meta that is not whole
// words or over the kind's limit, or a payload where the kind carries none
// (or over kMaxEagerBytes inline).
StatusOr<FrameHeader> DecodeFrameHeader(kj::ArrayPtr<const kj::byte> bytes, Side from);

// A frame as read: its header and meta; a push's or data frame's payload is
// still in the stream, for the reader to put where it belongs.
struct Frame {
  FrameHeader header;
  kj::Array<capnp::word> meta;
};

// Reads one frame's header and meta: null when the stream ended cleanly
// before a frame began. Rejects with INVALID_ARGUMENT for a bad header,
// UNAVAILABLE when the stream ends inside a frame.
kj::Promise<kj::Maybe<Frame>> ReadFrame(kj::AsyncInputStream& in, Side from);
// Writes one frame; `payload` (push and data frames) is written from where
// it lies. The pieces must stay alive until the promise resolves.
kj::Promise<void> WriteFrame(kj::AsyncOutputStream& out, const FrameHeader& header,
                             kj::ArrayPtr<const capnp::word> meta,
                             kj::ArrayPtr<const kj::byte> payload);

// The opener's hello, and the task's welcome.
struct Hello {
  uint32_t version = kStreamVersion;
  std::string token;
  std::string task;
};
struct Welcome {
  Status status;  // OK: the stream is open
  uint32_t version = kStreamVersion;
  uint64_t eager_bytes = kDefaultEagerBytes;
};

kj::Array<capnp::word> EncodeHello(const Hello& hello);
StatusOr<Hello> DecodeHello(kj::ArrayPtr<const capnp::word> words);
kj::Array<capnp::word> EncodeWelcome(const Welcome& welcome);
StatusOr<Welcome> DecodeWelcome(kj::ArrayPtr<const capnp::word> words);
// A grant's meta: OK (room was made), or the refusal.
struct Grant {
  Status status;
};
kj::Array<capnp::word> EncodeGrant(const Status& status);
StatusOr<Grant> DecodeGrant(kj::ArrayPtr<const capnp::word> words);

// The opener's first bytes: kMagic and the hello frame.
kj::Promise<void> SendHello(kj::AsyncOutputStream& out, const Hello& hello);
// The task's side: reads kMagic (INVALID_ARGUMENT if the stream starts
// otherwise) and the hello frame.
kj::Promise<Hello> ReceiveHello(kj::AsyncInputStream& in);
kj::Promise<void> SendWelcome(kj::AsyncOutputStream& out, const Welcome& welcome);
// The opener's side: the welcome's refusal rejects with its status.
kj::Promise<Welcome> ReceiveWelcome(kj::AsyncInputStream& in);

}  // namespace tfd::stream
