// libFuzzer target: any bytes as what the data plane parses from a peer.
// The first input byte picks the parser:
//   0: the frames of a welcomed stream, through a StreamReceiver
//      (daemon/transport/stream_receiver.h), read in chunks the second byte
//      sizes, so frame headers and payloads are split anywhere;
//   1: a push header (daemon/transport/push_header.h) and a payload length;
//   2: a stream's hello, welcome and grant;
//   3: a step message, as both receivers decode it (step_messages.h);
//   4: what a welcomed task sends back to the link that opened the stream
//      (grants and step messages, daemon/transport/stream_link.h), read in
//      chunks as in 0.
// Every input must end in delivered tensors, refusals, a clean end or an
// error — never a crash, a hang, or an allocation the headers did not
// justify (the receive room is small).
//
//   CXX=clang++ meson setup build-fuzz -Dfuzz=true -Dtests=false
//   ninja -C build-fuzz tests/fuzz/stream_fuzz
//   ./build-fuzz/tests/fuzz/stream_fuzz -max_total_time=60 tests/fuzz/corpus/stream_fuzz
#include <kj/async-io.h>
#include <kj/timer.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "daemon/transport/push_header.h"
#include "daemon/transport/receive_room.h"
#include "daemon/transport/step_messages.h"
#include "daemon/transport/stream_frames.h"
#include "daemon/transport/stream_link.h"
#include "daemon/transport/stream_receiver.h"

namespace {

using tfd::Status;
using tfd::StatusOr;
using tfd::Tensor;

// The peer: serves `data` in reads of at most `chunk` bytes, then ends;
// takes whatever is written to it.
class Bytes final : public kj::AsyncIoStream {
 public:
  Bytes(const uint8_t* data, size_t size, size_t chunk) : data_(data), left_(size), chunk_(chunk) {}

  kj::Promise<size_t> tryRead(void* buffer, size_t min_bytes, size_t max_bytes) override {
    size_t n = 0;
    while (n < min_bytes && left_ > 0) {
      const size_t take = std::min({max_bytes - n, chunk_, left_});
      memcpy(static_cast<uint8_t*>(buffer) + n, data_, take);
      data_ += take;
      left_ -= take;
      n += take;
    }
    return n;
  }
  kj::Promise<void> write(const void*, size_t) override { return kj::READY_NOW; }
  kj::Promise<void> write(kj::ArrayPtr<const kj::ArrayPtr<const kj::byte>>) override {
    return kj::READY_NOW;
  }
  kj::Promise<void> whenWriteDisconnected() override { return kj::NEVER_DONE; }
  void shutdownWrite() override {}

 private:
  const uint8_t* data_;
  size_t left_;
  const size_t chunk_;
};

// Counts what the receiver hands on.
class Sink final : public tfd::PlaneSink {
 public:
  void Sent(const std::string&, uint64_t) override {}
  void StepMessageSent() override {}
  void Abandoned(uint64_t) override {}
  void Received(const std::string&, int64_t, const std::string&, StatusOr<Tensor> t,
                uint64_t) override {
    if (t.ok()) ++tensors;
  }
  void StepReceived(const std::string&, const tfd::StepMessage&) override { ++steps; }
  void Refused(const std::string&, bool) override {}
  void LinkFailed(const std::string&, const Status&) override {}
  size_t tensors = 0, steps = 0;
};

kj::Array<capnp::word> Words(const uint8_t* data, size_t size) {
  return tfd::AlignedWords(data, size - size % sizeof(capnp::word));
}

void Frames(kj::WaitScope& wait, const uint8_t* data, size_t size) {
  if (size < 1) return;
  const size_t chunk = 1 + data[0] % 64;
  kj::TimerImpl timer(kj::origin<kj::TimePoint>());
  tfd::ReceiveRoom room(timer, {.max_held_bytes = 1 << 20, .hold_timeout = 1 * kj::SECONDS,
                                .max_cached_bytes = 1 << 20});
  Sink sink;
  tfd::StreamReceiver receiver(room, sink, "/job:fuzz/replica:0/task:0",
                               kj::heap<Bytes>(data + 1, size - 1, chunk), nullptr, 1 << 16);
  (void)receiver.Run().wait(wait);
}

void Back(kj::WaitScope& wait, const uint8_t* data, size_t size) {
  if (size < 1) return;
  const size_t chunk = 1 + data[0] % 64;
  Sink sink;
  tfd::StreamLink link(sink, "/job:fuzz/replica:0/task:0",
                       kj::heap<Bytes>(data + 1, size - 1, chunk), tfd::stream::Welcome{}, false);
  // The peer's bytes are all there: reading them ends the link.
  wait.poll();
}

void Header(const uint8_t* data, size_t size) {
  if (size < 8) return;
  uint64_t length = 0;
  memcpy(&length, data, 8);
  auto header = tfd::DecodePushHeader(Words(data + 8, size - 8));
  if (header.ok()) (void)tfd::CheckPayload(*header, length);
}

void Greetings(const uint8_t* data, size_t size) {
  auto words = Words(data, size);
  (void)tfd::stream::DecodeHello(words);
  (void)tfd::stream::DecodeWelcome(words);
  (void)tfd::stream::DecodeGrant(words);
  if (size >= tfd::stream::kHeaderBytes) {
    auto bytes = kj::arrayPtr(reinterpret_cast<const kj::byte*>(data), tfd::stream::kHeaderBytes);
    (void)tfd::stream::DecodeFrameHeader(bytes, tfd::stream::Side::kOpener);
    (void)tfd::stream::DecodeFrameHeader(bytes, tfd::stream::Side::kTask);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static kj::EventLoop loop;
  static kj::WaitScope wait(loop);
  if (size == 0) return 0;
  switch (data[0] % 5) {
    case 0: Frames(wait, data + 1, size - 1); break;
    case 1: Header(data + 1, size - 1); break;
    case 2: Greetings(data + 1, size - 1); break;
    case 4: Back(wait, data + 1, size - 1); break;
    default:
      // What both receivers hand a step message's bytes to.
      (void)tfd::DecodeStepMessage(Words(data + 1, size - 1));
      break;
  }
  return 0;
}
