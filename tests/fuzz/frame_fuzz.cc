// libFuzzer target: any bytes as what a peer sends before logging in.
// Through PreLoginStream (daemon/rpc/pre_login_stream.h) and Cap'n Proto's
// frame reader, every input must end in messages, a clean end or an
// error — never a crash, a hang or a leak — and nothing PreLoginStream let
// through may exceed its budget. The first input byte decides how the rest
// is cut into reads, so the frame parser sees headers split anywhere.
//
//   CXX=clang++ meson setup build-fuzz -Dfuzz=true -Dtests=false
//   ninja -C build-fuzz tests/fuzz/frame_fuzz
//   ./build-fuzz/tests/fuzz/frame_fuzz -max_total_time=60 tests/fuzz/corpus/frame_fuzz
#include <capnp/serialize-async.h>
#include <kj/async-io.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "daemon/rpc/pre_login_stream.h"

namespace {

constexpr uint64_t kBudget = 4096;

// The peer: serves `data` in reads of at most `chunk` bytes, then ends.
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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static kj::EventLoop loop;
  static kj::WaitScope wait(loop);
  if (size == 0) return 0;
  const size_t chunk = 1 + data[0] % 16;
  tfd::PreLoginStream stream(kj::heap<Bytes>(data + 1, size - 1, chunk), kBudget);
  capnp::ReaderOptions options;
  options.traversalLimitInWords = uint64_t{1} << 31;  // what tfd's connections allow
  uint64_t passed = 0;
  for (bool more = true; more;) {
    more = false;
    auto error = kj::runCatchingExceptions([&]() {
      KJ_IF_MAYBE(message, capnp::tryReadMessage(stream, options).wait(wait)) {
        for (uint32_t i = 0;; ++i) {
          auto segment = (*message)->getSegment(i);
          if (segment == nullptr) break;
          passed += segment.size() * sizeof(capnp::word);
        }
        more = true;
      }
    });
    // Refused or malformed: tfd would close the connection here.
    if (error != nullptr) break;
  }
  if (passed > kBudget) abort();  // a frame got through that did not fit
  return 0;
}
