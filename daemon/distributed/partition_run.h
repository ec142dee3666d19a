// One partition of a step, run on this task: what the step channel does for
// a master elsewhere, and what a master does for its own partition without
// a message to itself (so its feeds and fetches are not serialized to cross
// its own process).
//
//   TFD_ASSIGN_OR_RETURN(auto exec, MakePartitionExecutor(env, std::move(graph), master, session));  // on the pool
//   RunPartition(env, rendezvous, exec, {.step_id = id, .feeds = ...})
//       .then([](PartitionResult r) { ... r.fetches ... });
//
// Thread-safety: RunPartition on the event-loop thread; MakePartitionExecutor
// anywhere (it may take a while: constants are copied into their kernels).
#pragma once

#include <kj/async.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/graph_def.h"
#include "common/rendezvous.h"
#include "common/step_stats.h"
#include "daemon/distributed/task_env.h"
#include "daemon/runtime/executor.h"

namespace tfd {

struct PartitionStep {
  int64_t step_id = 0;
  int64_t timeout_ms = 0;  // 0: the task's --step-timeout
  bool trace = false;
  std::vector<Tensor> feeds;  // by _Arg index
  size_t num_fetches = 0;
};

struct PartitionResult {
  std::vector<Tensor> fetches;  // by _Retval index
  StepStats stats;              // nodes, when traced
};

// The partition's graph, checked and given its kernels; errors name the task.
// `master` is the task whose master session registers it (its steps belong
// to that replica) and `session` that session's presence here
// (StepContext::master, ::session).
StatusOr<std::shared_ptr<Executor>> MakePartitionExecutor(TaskEnv& env, GraphDef graph,
                                                          std::string master,
                                                          SessionPresence session);

// A partition this task holds, counted in env.registered_graphs (what
// `tfctl status` shows) for as long as it is held: registered by a master
// elsewhere, or a master's own here.
class HeldPartition {
 public:
  HeldPartition(TaskEnv& env, std::shared_ptr<Executor> executor)
      : env_(env), executor_(std::move(executor)) {
    ++env_.registered_graphs;
  }
  ~HeldPartition() { --env_.registered_graphs; }
  HeldPartition(const HeldPartition&) = delete;
  HeldPartition& operator=(const HeldPartition&) = delete;

  const std::shared_ptr<Executor>& executor() const { return executor_; }

 private:
  TaskEnv& env_;
  std::shared_ptr<Executor> executor_;
};

// A step of a partition, started: `ended` holds its result (or its error)
// when it ended inside the call, as a partition of cheap kernels only does;
// otherwise `later` resolves when it has ended, as RunPartition's promise.
struct StartedPartition {
  std::optional<StatusOr<PartitionResult>> ended;
  kj::Promise<PartitionResult> later = nullptr;
};

// Starts one step of the partition. A caller that can act on a result at
// once (the step channel answers it) skips the promise and the turn of the
// event loop it costs, which were a good part of an empty partition's work.
// Dropping `later` cancels the partition, as with RunPartition.
StartedPartition StartPartition(TaskEnv& env, Rendezvous& rendezvous,
                                std::shared_ptr<Executor> executor, PartitionStep step);

// Runs one step of the partition. Resolves when it has ended, at once when
// every kernel was cheap; rejects with the step's error. Dropping the
// promise cancels the partition (the master gave up on the step); abortStep
// finds it through env.steps meanwhile.
kj::Promise<PartitionResult> RunPartition(TaskEnv& env, Rendezvous& rendezvous,
                                          std::shared_ptr<Executor> executor, PartitionStep step);

}  // namespace tfd
