// PreLoginStream: frames pass while they fit the budget; a header that
// announces more is refused before its body is sent; the budget counts every
// frame before login; after Lift() it no longer applies — also for a read
// that began before the login (the limit after login: frame_ledger_test).
#include "daemon/rpc/pre_login_stream.h"

#include <capnp/message.h>
#include <capnp/rpc.capnp.h>
#include <capnp/serialize-async.h>
#include <capnp/serialize.h>

#include <catch2/catch.hpp>
#include <string>

#include "tests/rpc/frames.h"

namespace tfd {
namespace {

std::string Le32(uint32_t v) {
  std::string out(4, '\0');
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  return out;
}

using testing::Frame;

struct Pipe {
  kj::EventLoop loop;
  kj::WaitScope wait{loop};
  kj::TwoWayPipe pipe = kj::newTwoWayPipe();
  kj::Own<PreLoginStream> in;
  kj::AsyncIoStream& out = *pipe.ends[1];
  std::string pending;  // bytes of the write in flight

  explicit Pipe(uint64_t budget) : in(kj::heap<PreLoginStream>(kj::mv(pipe.ends[0]), budget)) {}

  // Writes `bytes` and reads one message through the limited end.
  kj::Maybe<kj::Exception> Exchange(std::string bytes) {
    pending = std::move(bytes);
    auto write = out.write(pending.data(), pending.size()).eagerlyEvaluate(nullptr);
    return kj::runCatchingExceptions([&]() {
      capnp::ReaderOptions options;
      options.traversalLimitInWords = uint64_t{1} << 31;
      capnp::readMessage(*in, options).wait(wait);
    });
  }
};

bool Refused(kj::Maybe<kj::Exception>& e, const std::string& part) {
  KJ_IF_MAYBE(ex, e) {
    return std::string(ex->getDescription().cStr()).find(part) != std::string::npos;
  }
  return false;
}

TEST_CASE("frames within the budget pass; a header announcing more is refused at once") {
  Pipe p(4096);
  CHECK(p.Exchange(Frame(100)) == nullptr);
  CHECK(p.Exchange(Frame(100)) == nullptr);
  CHECK(p.in->refusal() == nullptr);
  // Only the header is sent: the refusal cannot have waited for the body.
  auto e = p.Exchange(Le32(0) + Le32(0x7ffffff0));
  CHECK(Refused(e, "sent a frame of 17179869064 bytes"));
  CHECK(Refused(e, "the pre-login limit is 4096 bytes"));
  CHECK(p.in->refusal() != nullptr);
}

TEST_CASE("the budget counts every frame before login") {
  const size_t frame = Frame(250).size();
  Pipe p(3 * frame + frame / 2);
  for (int i = 0; i < 3; ++i) CHECK(p.Exchange(Frame(250)) == nullptr);
  auto e = p.Exchange(Frame(250));
  CHECK(Refused(e, "after " + std::to_string(3 * frame) + " bytes"));
}

TEST_CASE("a segment table declaring more segments than Cap'n Proto allows is refused") {
  {
    Pipe p(1 << 20);
    auto e = p.Exchange(Le32(600) + Le32(1));
    CHECK(Refused(e, "declaring 601 segments"));
  }
  Pipe p(1 << 20);
  auto wrapped = p.Exchange(Le32(0xffffffff) + Le32(0));  // 2^32 segments: 0 to a uint32
  CHECK(Refused(wrapped, "declaring 4294967296 segments"));
}

TEST_CASE("sizes arriving a byte at a time are added up across segments") {
  Pipe p(1024);
  // Three segments of 10, 10 and 200 words: 16 header bytes, 1760 body bytes.
  const std::string header = Le32(2) + Le32(10) + Le32(10) + Le32(200);
  auto write = p.out.write(header.data(), header.size()).eagerlyEvaluate(nullptr);
  size_t accepted = 0;
  kj::Maybe<kj::Exception> error;
  while (accepted < header.size() && error == nullptr) {
    char byte;
    error = kj::runCatchingExceptions([&]() { accepted += p.in->tryRead(&byte, 1, 1).wait(p.wait); });
  }
  CHECK(accepted == header.size() - 1);  // the byte completing the third size is refused
  CHECK(Refused(error, "sent a frame of 1776 bytes"));
}

TEST_CASE("after Lift, frames far over the budget pass, also on a read begun before it") {
  Pipe p(1024);
  CHECK(p.Exchange(Frame(100)) == nullptr);
  // The read starts before the login; the frame arrives after it.
  capnp::ReaderOptions options;
  options.traversalLimitInWords = uint64_t{1} << 31;
  auto read = capnp::readMessage(*p.in, options);
  p.in->Lift();
  const std::string big = Frame(64 << 10);
  auto write = p.out.write(big.data(), big.size());
  auto message = read.wait(p.wait);
  CHECK(message->getRoot<capnp::rpc::Message>().getAbort().getReason().size() == (64u << 10));
  write.wait(p.wait);
  CHECK(p.Exchange(Frame(1 << 20)) == nullptr);
}

}  // namespace
}  // namespace tfd
