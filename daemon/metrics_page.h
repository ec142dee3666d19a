// The /metrics page of a task: Prometheus's text exposition format
// (version 0.0.4) of what the task counted (TaskMetrics) and what it holds
// now (sessions, variables, queues, the data plane, the memory budget,
// the process). docs/operations.md, "Metrics and health", lists every
// family.
//
//   std::string page = RenderMetrics(env, TFD_VERSION);
//
// Thread-safety: on the event-loop thread (the data plane's counters are
// the loop's).
#pragma once

#include <string>

#include "daemon/distributed/task_env.h"

namespace tfd {

std::string RenderMetrics(const TaskEnv& env, const std::string& version);

}  // namespace tfd
