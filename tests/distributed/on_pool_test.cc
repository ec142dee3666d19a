// OnPool: work on the compute pool resolves on the loop, and whatever it
// throws becomes the call's error with a code that says whose fault it is,
// instead of ending the task.
#include "daemon/distributed/on_pool.h"

#include <kj/async-io.h>
#include <kj/debug.h>

#include <catch2/catch.hpp>
#include <new>
#include <stdexcept>

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

TEST_CASE("work on the pool resolves on the loop; what it throws is an error with a code") {
  auto io = kj::setupAsyncIo();
  boost::asio::thread_pool pool(2);

  auto value = Outcome(io, pool, [] { return StatusOr<int>(7); });
  REQUIRE(value.ok());
  CHECK(*value == 7);
  CHECK(Outcome(io, pool, [] { return StatusOr<int>(errors::NotFound("no such")); })
            .status() == errors::NotFound("no such"));

  // Cap'n Proto's checks of a message it reads throw kj exceptions.
  auto malformed = Outcome(io, pool, []() -> StatusOr<int> {
    KJ_FAIL_REQUIRE("Message ends prematurely in first segment.");
  });
  CHECK(malformed.status().code() == Code::kInvalidArgument);
  CHECK(malformed.status().message().find("malformed request: ") == 0);
  CHECK(malformed.status().message().find("Message ends prematurely") != std::string::npos);

  auto memory = Outcome(io, pool, []() -> StatusOr<int> { throw std::bad_alloc(); });
  CHECK(memory.status().code() == Code::kResourceExhausted);
  CHECK(memory.status().message() == "out of memory while serving the request");

  auto other = Outcome(io, pool, []() -> StatusOr<int> { throw std::runtime_error("boom"); });
  CHECK(other.status().code() == Code::kInternal);
  CHECK(other.status().message() == "unexpected exception while serving the request: boom");

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
