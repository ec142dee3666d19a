// Status -> kj::Exception -> Status keeps the code and the message, for every
// code, whether the exception was raised here or arrives from a peer.
#include "daemon/rpc/kj_status.h"

#include <catch2/catch.hpp>

namespace tfd {
namespace {

TEST_CASE("every code survives the trip through a kj::Exception") {
  for (int i = 1; i < kNumCodes; ++i) {
    const Status s(static_cast<Code>(i), "node 'x' (OneHot): something");
    CAPTURE(s.ToString());
    const kj::Exception e = KjFromStatus(s);
    CHECK(StatusFromKj(e) == s);
    // What a peer's exception looks like on this side of the connection.
    const kj::Exception remote(e.getType(), __FILE__, __LINE__,
                               kj::str("remote exception: ", e.getDescription()));
    CHECK(StatusFromKj(remote) == s);
  }
}

TEST_CASE("an exception without a code is INTERNAL, a lost connection UNAVAILABLE") {
  CHECK(StatusFromKj(kj::Exception(kj::Exception::Type::FAILED, __FILE__, __LINE__,
                                   kj::str("boom")))
            .code() == Code::kInternal);
  CHECK(StatusFromKj(kj::Exception(kj::Exception::Type::DISCONNECTED, __FILE__, __LINE__,
                                   kj::str("peer gone")))
            .code() == Code::kUnavailable);
}

}  // namespace
}  // namespace tfd
