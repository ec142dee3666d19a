// LocalSession: runs a graph in this process — `tfctl run`, and the
// building block a task's worker uses for the partition it holds.
//
// Each distinct (feeds, fetches, targets) signature is pruned, rewritten
// (fed tensors become _Arg nodes, fetches feed _Retval nodes), validated and
// given an executor once; later runs with the same signature reuse it.
// Nodes that ask for a GPU run on the env's GPUs (KernelEnv::gpus), with
// copies between host and device memory where tensors cross.
// Resources (variables, queues) live in the KernelEnv's ResourceMgr and so
// outlive runs and sessions.
//
//   LocalSession session(registry, env, pool);
//   TFD_RETURN_IF_ERROR(session.Create(graph));
//   TFD_ASSIGN_OR_RETURN(auto out, session.Run({{"x", x}}, {"y"}, {"train"}));
//
// Thread-safety: Run may be called concurrently from several threads, and
// Close from any thread at any time; Create and Extend must not race with
// Run.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio/thread_pool.hpp>

#include "common/cancellation.h"
#include "common/device_name.h"
#include "common/graph_def.h"
#include "common/mutex.h"
#include "common/op_kernel.h"
#include "common/step_stats.h"
#include "daemon/runtime/executor.h"
#include "daemon/runtime/run_rewrite.h"

namespace tfd {

class LocalSession {
 public:
  struct Options {
    // A step that takes longer is cancelled with DEADLINE_EXCEEDED.
    std::chrono::milliseconds default_deadline{std::chrono::minutes(5)};
    // A GPU request that cannot be met (no such GPU, an op without a GPU
    // kernel) runs on the CPU instead of failing (daemon/runtime/gpu_placement.h).
    bool allow_soft_placement = false;
    // Every kernel on the thread that made it ready, none on the pool
    // (Executor::Options::inline_kernels, InlineKernelsFor).
    bool inline_kernels = false;
  };
  struct RunOptions {
    std::chrono::milliseconds deadline{0};  // 0: the session's default
    bool trace = false;
    // Executor::RunArgs::interrupted: asked while Run waits; true cancels
    // the step (CANCELLED), and the session goes on.
    std::function<bool()> interrupted;
  };
  struct RunOutput {
    std::vector<Tensor> fetches;  // in the order asked for
    StepStats stats;              // filled when traced
  };
  using Feeds = std::vector<std::pair<std::string, Tensor>>;

  LocalSession(const OpRegistry& registry, const KernelEnv& env, boost::asio::thread_pool& pool,
               Options options);
  LocalSession(const OpRegistry& registry, const KernelEnv& env, boost::asio::thread_pool& pool)
      : LocalSession(registry, env, pool, Options()) {}
  ~LocalSession();

  // Sets the graph; Extend adds nodes to it (names must stay unique). Both
  // refuse a graph this tfd may not run (CheckGraphVersions) at once; the
  // rest is checked when a run first needs it.
  Status Create(GraphDef graph);
  Status Extend(const GraphDef& more);

  // INVALID_ARGUMENT / NOT_FOUND naming a bad feed, fetch or target;
  // otherwise the first error of the step, naming its node.
  StatusOr<RunOutput> Run(const Feeds& feeds, const std::vector<std::string>& fetches,
                          const std::vector<std::string>& targets, const RunOptions& options);
  StatusOr<RunOutput> Run(const Feeds& feeds, const std::vector<std::string>& fetches,
                          const std::vector<std::string>& targets) {
    return Run(feeds, fetches, targets, RunOptions());
  }

  // TF1's Session.close: each step still running is cancelled (its Run
  // returns CANCELLED "the session was closed while step N was running" once
  // its kernels have stopped), and every later Run is FAILED_PRECONDITION.
  // Returns at once; closing twice does nothing more.
  void Close();

 private:
  struct Prepared;
  StatusOr<std::shared_ptr<Prepared>> Prepare(const Feeds& feeds,
                                              const std::vector<std::string>& fetches,
                                              const std::vector<std::string>& targets);
  // A step's rewritten graph with the nodes that ask for a GPU placed on
  // this process's GPUs (or, soft, its CPU) and copies where tensors cross
  // memories. `requested`: each node's parsed request.
  StatusOr<GraphDef> PlaceOnThisProcessGpus(GraphDef rewritten,
                                            const std::vector<DeviceName>& requested)
      REQUIRES(mu_);

  const OpRegistry& registry_;
  const KernelEnv& env_;
  boost::asio::thread_pool& pool_;
  Options options_;

  Mutex mu_;
  GraphDef graph_ GUARDED_BY(mu_);
  std::map<std::string, std::shared_ptr<Prepared>> prepared_ GUARDED_BY(mu_);
  int64_t next_step_id_ GUARDED_BY(mu_) = 1;
  // The steps running now, for Close to cancel; each entry is removed by
  // its Run before the CancellationManager on Run's stack goes.
  std::map<int64_t, CancellationManager*> running_ GUARDED_BY(mu_);
  bool closed_ GUARDED_BY(mu_) = false;
};

}  // namespace tfd
