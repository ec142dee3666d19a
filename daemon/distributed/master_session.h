// MasterSession: a client's session on this task (its master). Each run is
// rewritten for its feeds and fetches, placed, partitioned by task and
// registered with each task once per signature; then every partition of the
// step runs concurrently under one step id. The first error aborts the step
// on every task and comes back naming the task and the node.
//
// A task that restarted is noticed (its connection dropped, the peer's
// incarnation moved on) and the next run registers its partition again.
// Dropping the session capability (the client closed or vanished) releases
// every registered partition; cancelling a run aborts its step everywhere.
//
// Thread-safety: a capnp server; event-loop thread only.
#pragma once

#include <kj/timer.h>

#include <map>
#include <memory>
#include <string>

#include "common/graph_def.h"
#include "daemon/rpc/kj_status.h"
#include "daemon/runtime/run_rewrite.h"
#include "daemon/distributed/task_env.h"
#include "schemas/rpc.capnp.h"

namespace tfd {

class MasterSession final : public proto::Session::Server {
 public:
  MasterSession(TaskEnv& env, GraphDef graph, std::chrono::milliseconds step_timeout);
  ~MasterSession();

 protected:
  kj::Promise<void> extend(ExtendContext context) override;
  kj::Promise<void> run(RunContext context) override;
  kj::Promise<void> close(CloseContext context) override;

 private:
  struct Part {
    std::string task;
    GraphDef graph;
    kj::Maybe<proto::RegisteredGraph::Client> handle;
    uint64_t incarnation = 0;  // of the task when registered
  };
  struct Prepared {
    std::vector<FeedSpec> feeds;
    std::vector<std::unique_ptr<Part>> parts;
    Part* master_part = nullptr;  // holds the feeds' _Arg and fetches' _Retval nodes
  };
  struct StepState;

  StatusOr<std::shared_ptr<Prepared>> Prepare(
      const std::vector<std::pair<TensorId, Tensor>>& feeds, const std::vector<TensorId>& fetches,
      const std::vector<std::string>& targets, const std::string& key);
  kj::Promise<proto::RegisteredGraph::Client> Register(Part& part, kj::TimePoint deadline);
  void Abort(StepState& step, const Status& why);

  TaskEnv& env_;
  GraphDef graph_;
  std::chrono::milliseconds step_timeout_;
  std::map<std::string, std::shared_ptr<Prepared>> prepared_;
  // Settles when the last extend has been applied (or has failed).
  kj::ForkedPromise<void> extended_ = kj::Promise<void>(kj::READY_NOW).fork();
  LogTaskErrors errors_;
  kj::TaskSet background_;  // aborts and cleanups sent to tasks
};

}  // namespace tfd
