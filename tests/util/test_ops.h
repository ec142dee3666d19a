// A few tiny ops for testing the graph machinery and the executor apart from
// the op library: a constant, an adder, an op that records the order it ran
// in, one that fails, and an asynchronous one that waits until cancelled.
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

// Also registers the framework ops (_Arg, _Retval) sessions need.
Status RegisterTestOps(OpRegistry& registry);

}  // namespace tfd::testing
