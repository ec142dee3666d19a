// ReadAheadStream: every byte arrives once and in order, whatever the sizes
// asked for; a frame's small reads become one read of the socket; a large
// read goes to the caller's memory; the end of the stream mid-read gives
// what there was; beneath a PreLoginStream, an oversized frame is still
// refused, also when it arrives in one chunk with frames that fit.
#include "daemon/rpc/read_ahead_stream.h"

#include <capnp/message.h>
#include <capnp/rpc.capnp.h>
#include <capnp/serialize-async.h>
#include <capnp/serialize.h>
#include <kj/async-io.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <string>

#include "daemon/rpc/forwarding_stream.h"
#include "daemon/rpc/pre_login_stream.h"
#include "tests/rpc/frames.h"

namespace tfd {
namespace {

// The stream beneath, counting the reads asked of it.
class CountingStream final : public ForwardingStream {
 public:
  using ForwardingStream::ForwardingStream;
  kj::Promise<size_t> tryRead(void* buffer, size_t min_bytes, size_t max_bytes) override {
    ++reads;
    largest = std::max(largest, max_bytes);
    return inner().tryRead(buffer, min_bytes, max_bytes);
  }
  int reads = 0;
  size_t largest = 0;
};

using testing::Frame;

std::string Pattern(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 131 + i / 251) & 0xff);
  return s;
}

// Where two byte strings first differ, npos when they are equal: a check names
// an offset instead of writing a megabyte of raw bytes into the test log.
size_t FirstDifference(const std::string& a, const std::string& b) {
  const size_t n = std::min(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    if (a[i] != b[i]) return i;
  }
  return a.size() == b.size() ? std::string::npos : n;
}

// A socket pair, so that writes are buffered by the kernel as on a
// connection.
struct Fixture {
  kj::AsyncIoContext io = kj::setupAsyncIo();
  kj::WaitScope& wait = io.waitScope;
  kj::TwoWayPipe pipe = io.provider->newTwoWayPipe();
  CountingStream* counted = nullptr;
  kj::Own<ReadAheadStream> in;
  kj::AsyncIoStream& out = *pipe.ends[1];

  explicit Fixture(size_t buffer = 8192) {
    auto c = kj::heap<CountingStream>(kj::mv(pipe.ends[0]));
    counted = c.get();
    in = kj::heap<ReadAheadStream>(kj::mv(c), buffer);
  }
  std::string Read(size_t min_bytes, size_t max_bytes) {
    std::string got(max_bytes, '\0');
    got.resize(in->tryRead(got.data(), min_bytes, max_bytes).wait(wait));
    return got;
  }
};

TEST_CASE("every byte arrives once and in order, whatever the sizes asked for") {
  Fixture f(64);
  const std::string sent = Pattern(100000);
  auto write = f.out.write(sent.data(), sent.size()).eagerlyEvaluate(nullptr);
  std::string got;
  // Sizes around the buffer's: smaller, equal, larger, odd.
  const size_t sizes[] = {1, 7, 63, 64, 65, 200, 3, 1000, 8};
  for (size_t i = 0; got.size() < sent.size(); ++i) {
    const size_t want = std::min(sizes[i % 9], sent.size() - got.size());
    got += f.Read(want, want);
  }
  CHECK(FirstDifference(got, sent) == std::string::npos);
  write.wait(f.wait);
}

TEST_CASE("a Cap'n Proto frame's reads become one read beneath") {
  Fixture f;
  std::string frames;
  for (int i = 0; i < 3; ++i) frames += Frame(100);
  auto write = f.out.write(frames.data(), frames.size()).eagerlyEvaluate(nullptr);
  write.wait(f.wait);
  for (int i = 0; i < 3; ++i) {
    auto message = capnp::readMessage(*f.in).wait(f.wait);
    CHECK(message->getRoot<capnp::rpc::Message>().getAbort().getReason().size() == 100);
  }
  // Without reading ahead, each frame takes two reads (first word, body).
  CHECK(f.counted->reads == 1);
}

TEST_CASE("a read at least the buffer's size goes straight to the caller") {
  Fixture f(4096);
  const std::string sent = Pattern(1 << 20);
  auto write = f.out.write(sent.data(), sent.size()).eagerlyEvaluate(nullptr);
  std::string got = f.Read(10, 10);  // fills the buffer with what is there
  got += f.Read(sent.size() - 10, sent.size() - 10);
  CHECK(FirstDifference(got, sent) == std::string::npos);
  CHECK(f.counted->largest > 4096);  // asked of the pipe directly
  write.wait(f.wait);
}

TEST_CASE("the end of the stream mid-read gives what there was, then nothing") {
  Fixture f;
  const std::string sent = Pattern(100);
  f.out.write(sent.data(), sent.size()).wait(f.wait);
  f.out.shutdownWrite();
  CHECK(FirstDifference(f.Read(50, 50), sent.substr(0, 50)) == std::string::npos);
  // Fewer than asked: the end.
  CHECK(FirstDifference(f.Read(80, 80), sent.substr(50)) == std::string::npos);
  CHECK(f.Read(1, 10).empty());
}

TEST_CASE("beneath a PreLoginStream, a frame over the budget is still refused") {
  auto io = kj::setupAsyncIo();
  auto& wait = io.waitScope;
  auto pipe = io.provider->newTwoWayPipe();
  const std::string small = Frame(100);
  PreLoginStream in(kj::heap<ReadAheadStream>(kj::mv(pipe.ends[0])), 2 * small.size() + 16);
  // Two frames that fit and the header of one that does not, in one write:
  // one read ahead brings all three.
  std::string bytes = small + small;
  bytes += std::string("\0\0\0\0", 4) + std::string("\xf0\xff\xff\x7f", 4);
  pipe.ends[1]->write(bytes.data(), bytes.size()).wait(wait);
  capnp::ReaderOptions options;
  options.traversalLimitInWords = uint64_t{1} << 31;
  capnp::readMessage(in, options).wait(wait);
  capnp::readMessage(in, options).wait(wait);
  auto refused = kj::runCatchingExceptions([&] { capnp::readMessage(in, options).wait(wait); });
  REQUIRE(refused != nullptr);
  CHECK(in.refusal() != nullptr);
}

}  // namespace
}  // namespace tfd
