// A few tiny ops for testing the graph machinery and the executor apart from
// the op library: a constant, an adder, an op that records the order it ran
// in, one that fails, an asynchronous one that waits until cancelled, and
// for where nodes run: a cheap no-op (TTick), an asynchronous one done at
// once (TReady) and an expensive one that records its thread, busy for as
// long as its attr `busy_us` says (TRecordThread).
//
//   OpRegistry reg;
//   REQUIRE(testing::RegisterTestOps(reg).ok());
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "common/op_registry.h"
#include "common/resource_mgr.h"

namespace tfd::testing {

// The order TRecord nodes ran in, shared through the ResourceMgr under
// ("test", "log").
struct RunLog;
std::vector<std::string> RecordedOrder(ResourceMgr& rm);
// The calling thread, as TRecordThread writes it after its node's name.
std::string ThreadTag();

// Also registers the framework ops (_Arg, _Retval) sessions need.
Status RegisterTestOps(OpRegistry& registry);

}  // namespace tfd::testing
