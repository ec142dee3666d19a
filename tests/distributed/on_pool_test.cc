// OnPool: work on the compute pool resolves on the loop, and whatever it
// throws becomes the call's error with a code that says whose fault it is,
// instead of ending the task.
#include "daemon/distributed/on_pool.h"

#include <kj/async-io.h>
#include <capnp/message.h>
#include <kj/debug.h>

#include <catch2/catch.hpp>
#include <new>
#include <stdexcept>

#include "schemas/graph.capnp.h"

namespace tfd {
namespace {

// What OnPool made of `work`: its value as status OK, or the error.
StatusOr<int> Outcome(kj::AsyncIoContext& io, boost::asio::thread_pool& pool,
                      std::function<StatusOr<int>()> work) {
  return OnPool<int>(pool, std::move(work))
      .then([](int v) -> StatusOr<int> { return v; },
            [](kj::Exception&& e) -> StatusOr<int> { return StatusFromKj(e); })
      .wait(io.waitScope);
}

// A message whose root pointer points far past its one segment.
StatusOr<int> ReadMalformedMessage() {
  static const uint64_t kWords[2] = {(uint64_t{1000} << 2) | (uint64_t{1} << 32), 0};
  const kj::ArrayPtr<const capnp::word> segments[1] = {
      kj::arrayPtr(reinterpret_cast<const capnp::word*>(kWords), 2)};
  capnp::SegmentArrayMessageReader reader(kj::arrayPtr(segments, 1));
  return static_cast<int>(reader.getRoot<proto::GraphDef>().getNodes().size());
}

TEST_CASE("work on the pool resolves on the loop; what it throws is an error with a code") {
  auto io = kj::setupAsyncIo();
  boost::asio::thread_pool pool(2);

  auto value = Outcome(io, pool, [] { return StatusOr<int>(7); });
  REQUIRE(value.ok());
  CHECK(*value == 7);
  CHECK(Outcome(io, pool, [] { return StatusOr<int>(errors::NotFound("no such")); })
            .status() == errors::NotFound("no such"));

  SECTION("Cap'n Proto's checks of a message it reads: the sender's fault") {
    auto malformed = Outcome(io, pool, ReadMalformedMessage);
    CHECK(malformed.status().code() == Code::kInvalidArgument);
    CHECK(malformed.status().message().find("malformed request: ") == 0);
    CHECK(malformed.status().message().find("out-of-bounds") != std::string::npos);
  }
  SECTION("an error carrying a Status keeps its code and message") {
    auto carried = Outcome(io, pool, []() -> StatusOr<int> {
      ThrowIfError(errors::FailedPrecondition("variable 'w' is uninitialized"));
      return 0;
    });
    CHECK(carried.status() == errors::FailedPrecondition("variable 'w' is uninitialized"));
    auto unavailable = Outcome(io, pool, []() -> StatusOr<int> {
      ThrowIfError(errors::Unavailable("/job:ps/replica:0/task:0 is shutting down"));
      return 0;
    });
    CHECK(unavailable.status() == errors::Unavailable("/job:ps/replica:0/task:0 is shutting down"));
  }
  SECTION("any other kj exception is the task's fault: INTERNAL with its description") {
    // What a failed check in tfd's own code throws, even one that reads
    // like a message's fault.
    auto internal = Outcome(io, pool, []() -> StatusOr<int> {
      KJ_FAIL_ASSERT("Message ends prematurely in first segment.");
    });
    CHECK(internal.status().code() == Code::kInternal);
    CHECK(internal.status().message().find("Message ends prematurely") != std::string::npos);
    CHECK(internal.status().message().find("malformed request") == std::string::npos);
  }
  SECTION("out of memory; other C++ exceptions") {
    auto memory = Outcome(io, pool, []() -> StatusOr<int> { throw std::bad_alloc(); });
    CHECK(memory.status().code() == Code::kResourceExhausted);
    CHECK(memory.status().message() == "out of memory while serving the request");

    auto other = Outcome(io, pool, []() -> StatusOr<int> { throw std::runtime_error("boom"); });
    CHECK(other.status().code() == Code::kInternal);
    CHECK(other.status().message() == "unexpected exception while serving the request: boom");

    auto unknown = Outcome(io, pool, []() -> StatusOr<int> { throw 42; });
    CHECK(unknown.status().code() == Code::kInternal);
  }

  // And the pool and the loop go on serving, twice over.
  for (int i = 0; i < 2; ++i) {
    auto after = Outcome(io, pool, [i] { return StatusOr<int>(i); });
    REQUIRE(after.ok());
    CHECK(*after == i);
  }
  pool.join();
}

}  // namespace
}  // namespace tfd
