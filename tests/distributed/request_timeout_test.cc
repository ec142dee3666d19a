// RequestTimeout: whatever Int64 a request carries, the timeout is one a
// clock can take.
#include <catch2/catch.hpp>
#include <kj/time.h>

#include <chrono>
#include <cstdint>
#include <limits>

#include "daemon/distributed/request_timeout.h"

namespace tfd {
namespace {

using namespace std::chrono_literals;

TEST_CASE("A request's timeout: the default for none, as sent, at most a week") {
  CHECK(RequestTimeout(0, 30s) == 30s);
  CHECK(RequestTimeout(-5, 30s) == 30s);
  CHECK(RequestTimeout(std::numeric_limits<int64_t>::min(), 30s) == 30s);
  CHECK(RequestTimeout(1500, 30s) == 1500ms);
  CHECK(RequestTimeout(kMaxRequestTimeout.count(), 30s) == kMaxRequestTimeout);
  // What rpc_fuzz sent, and the largest there is.
  for (int64_t ms : {int64_t{16492674416639}, std::numeric_limits<int64_t>::max()}) {
    const auto t = RequestTimeout(ms, 30s);
    CHECK(t == kMaxRequestTimeout);
    // Both clocks a deadline is computed on take it without overflow.
    const auto steady = std::chrono::steady_clock::now() + t;
    CHECK(steady > std::chrono::steady_clock::now());
    CHECK(t.count() * kj::MILLISECONDS > 0 * kj::MILLISECONDS);
  }
}

}  // namespace
}  // namespace tfd
