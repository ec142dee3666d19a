// MasterSession: a client's session on this task (its master). Each run is
// rewritten for its feeds and fetches, placed, partitioned by task and
// registered with each task once per signature; then every partition of the
// step runs concurrently under one step id, through a PartitionRunner: the
// partition of this task here directly, with no RPC to itself (feeds and
// fetches are not copied through messages), the others over the step
// channel by the handles their registrations answered with. The first error
// aborts the step on every task and comes back naming the task and the
// node.
//
// A task that restarted is noticed (its connection dropped) and the next run
// registers its partition again; the first run to succeed after names the
// task as restarted (a new incarnation: its state went back to a checkpoint,
// or to nothing), once per restart, so that a trainer can put the other
// tasks back with it.
// Dropping the session capability (the client closed or vanished) releases
// every registered partition; cancelling a run aborts its step everywhere.
// Closing the session (TF1's Session.close) cancels its steps still running:
// each is aborted everywhere and ends CANCELLED, and close answers once they
// have ended (or after kCloseGrace).
// A callable (makeCallable) holds its signature's prepared partitions, so
// its runs skip parsing names and looking the signature up.
//
// What a session holds is counted: the constants of its graph (decoded
// charged to the task's memory budget, see GraphFromProto, and shared by
// its partitions and their Const kernels), the values fed to its runs (as
// decoded), and its place among its client's sessions (a Quota slot). The
// graph and the place are given back when it closes.
//
// Thread-safety: a capnp server; event-loop thread only.
#pragma once

#include <kj/timer.h>

#include <map>
#include <set>
#include <memory>
#include <string>

#include "common/graph_def.h"
#include "daemon/rpc/kj_status.h"
#include "daemon/runtime/run_rewrite.h"
#include "daemon/distributed/task_env.h"
#include "daemon/distributed/task_metrics.h"
#include "daemon/distributed/partition_run.h"
#include "daemon/distributed/partition_runner.h"
#include "daemon/distributed/quota.h"
#include "schemas/rpc.capnp.h"

namespace tfd {

class MasterSession final : public CountedServer<proto::Session> {
 public:
  // `runner` runs the partitions of the session's steps and outlives it;
  // `slot` is its place among its client's sessions (null: not counted).
  MasterSession(TaskEnv& env, PartitionRunner& runner, GraphDef graph,
                std::chrono::milliseconds step_timeout,
                std::unique_ptr<Quota::Slot> slot = nullptr);
  ~MasterSession();

 protected:
  kj::Promise<void> extend(ExtendContext context) override;
  kj::Promise<void> run(RunContext context) override;
  kj::Promise<void> close(CloseContext context) override;
  kj::Promise<void> makeCallable(MakeCallableContext context) override;

 private:
  struct Part {
    std::string task;
    GraphDef graph;
    // This task's partition: its executor, once built.
    bool local = false;
    std::unique_ptr<HeldPartition> held;
    // Another task's: its registration there (held: releasing it frees the
    // partition), and the handle the master runs it by.
    kj::Maybe<proto::RegisteredGraph::Client> registration;
    uint64_t handle = 0;
    uint64_t connection = 0;  // Peers::ConnectionNumber when registered
  };
  struct Prepared {
    std::vector<FeedSpec> feeds;
    std::vector<std::unique_ptr<Part>> parts;
    Part* master_part = nullptr;  // holds the feeds' _Arg and fetches' _Retval nodes
  };
  struct StepState;
  class CallableServer;

  kj::Promise<void> Run(RunContext context);  // run, uncounted

  StatusOr<std::shared_ptr<Prepared>> Prepare(
      const std::vector<std::pair<TensorId, Tensor>>& feeds, const std::vector<TensorId>& fetches,
      const std::vector<std::string>& targets, const std::string& key);
  // Makes `part` ready to run: its executor built here, or its graph
  // registered with its task (again, if the task restarted since, noting
  // the restart when its incarnation is new).
  kj::Promise<void> Register(Part& part, kj::TimePoint deadline);
  // Runs one step of `prepared` with the feeds' values in its order: checks
  // them, registers what is not registered yet, runs every partition, and
  // fails with the most telling partition's error.
  // What a run asks beyond its tensors (schemas/rpc.capnp, RunOptions).
  struct RunFlags {
    int64_t timeout_ms = 0;  // 0: the session's step timeout
    bool trace = false;
    StepGate::Kind kind = StepGate::Kind::kHeld;  // kInput: an input pipeline's step
    static RunFlags From(proto::RunOptions::Reader options);
  };
  kj::Promise<std::shared_ptr<StepState>> RunPrepared(std::shared_ptr<Prepared> prepared,
                                                      std::vector<Tensor> feeds, size_t num_fetches,
                                                      RunFlags flags);
  // RunPrepared past the step gate, holding `ticket` until the step has
  // ended on every task.
  kj::Promise<std::shared_ptr<StepState>> RunEntered(kj::Own<StepGate::Ticket> ticket,
                                                     std::shared_ptr<Prepared> prepared,
                                                     std::vector<Tensor> feeds, size_t num_fetches,
                                                     int64_t timeout_ms, bool trace,
                                                     kj::TimePoint deadline);
  static unsigned TraceSize(const StepState& step);
  static void WriteTrace(const StepState& step, capnp::List<proto::NodeTrace>::Builder out);
  // The run's answer beyond its fetches: trace and restarted tasks.
  template <typename Results>
  static void WriteStepReport(const StepState& step, Results results);
  // One partition's run in the step; records its outcome in `step`.
  kj::Promise<void> RunPart(std::shared_ptr<StepState> step, Part& part,
                            std::vector<Tensor> feeds, size_t num_fetches, int64_t timeout_ms,
                            bool trace);
  // Tells every task of the step to abort it (once per step). The step
  // stays alive, ticket and all, until each task has heard or 2 s passed.
  void Abort(const std::shared_ptr<StepState>& step, const Status& why);
  // `failed`, or ABORTED when a task restarted under this session since
  // its last report (see the definition).
  Status RestartedUnder(Status failed);
  // Resolves when every step of this session running now has ended, or
  // after kCloseGrace, whichever comes first.
  kj::Promise<void> StepsEnded();

  TaskEnv& env_;
  PartitionRunner& runner_;
  std::unique_ptr<Quota::Slot> slot_;
  GraphDef graph_;
  std::chrono::milliseconds step_timeout_;
  std::map<std::string, std::shared_ptr<Prepared>> prepared_;
  std::set<CallableServer*> callables_;  // alive; each keeps this session alive
  // Of each other task, when this session last registered a graph there.
  std::map<std::string, uint64_t> incarnations_;
  // Tasks found in a new incarnation, until a run's answer has named them
  // (or a failed run was made ABORTED for them: RestartedUnder).
  std::set<std::string> unreported_restarts_;
  bool closed_ = false;
  // Past the step gate and not ended yet: what close cancels. Each step
  // takes itself out when it ends (or its call is dropped).
  std::set<std::shared_ptr<StepState>> running_;
  // Fulfilled by close: steps still waiting for the step gate or for a
  // registration stop waiting.
  kj::Own<kj::PromiseFulfiller<void>> on_close_;
  kj::ForkedPromise<void> closing_ = nullptr;
  // This session's presence on this task (StepContext::session); its text
  // is also what the session registers under on other tasks, which keep a
  // presence of their own for it. Dropped by close.
  std::shared_ptr<const std::string> presence_;
  // Settles when the last extend has been applied (or has failed).
  kj::ForkedPromise<void> extended_ = kj::Promise<void>(kj::READY_NOW).fork();
  LogTaskErrors errors_;
  kj::TaskSet background_;  // aborts and cleanups sent to tasks
};

}  // namespace tfd
