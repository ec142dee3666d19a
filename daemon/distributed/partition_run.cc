#include "daemon/distributed/partition_run.h"

#include "common/graph.h"
#include "common/mutex.h"
#include "daemon/distributed/request_timeout.h"
#include "daemon/rpc/kj_status.h"
#include "daemon/runtime/device_copies.h"

namespace tfd {
namespace {

// One partition's run, shared by the promise and the executor: whichever
// lets go last frees it, so a dropped promise never pulls the frame, the
// cancellation manager or the executor from under running kernels. The
// executor matters when the master drops the partition mid-step (its client
// vanished): cancelling the run and releasing the partition arrive back to
// back, while the step is still unwinding on the compute pool.
struct Run {
  std::shared_ptr<Executor> executor;
  std::shared_ptr<CancellationManager> cancellation = std::make_shared<CancellationManager>();
  CallFrame frame;
  Status status;
  StepStats stats;
  Mutex mu;
  bool ended GUARDED_BY(mu) = false;
  kj::Maybe<kj::Own<kj::CrossThreadPromiseFulfiller<void>>> fulfiller GUARDED_BY(mu);
};

StatusOr<PartitionResult> Result(Run& run) {
  if (!run.status.ok()) return run.status;
  return PartitionResult{std::move(run.frame.retvals), std::move(run.stats)};
}

bool Ended(Run& run) {
  MutexLock lock(run.mu);
  return run.ended;
}

}  // namespace

StatusOr<std::shared_ptr<Executor>> MakePartitionExecutor(TaskEnv& env, GraphDef def,
                                                          std::string master,
                                                          SessionPresence session) {
  auto graph = Graph::Build(std::move(def), *env.registry);
  if (!graph.ok()) return graph.status().WithContext(env.task);
  // Nodes placed on this task's GPUs: copies where tensors cross to the host.
  if (!env.kernel_env->gpus.empty()) {
    auto with_copies = InsertDeviceCopies(*graph);
    if (!with_copies.ok()) return with_copies.status().WithContext(env.task);
    graph = Graph::Build(std::move(with_copies).value(), *env.registry);
    if (!graph.ok()) return graph.status().WithContext(env.task);
  }
  if (env.log_device_placement && env.logger) {
    for (const Graph::Node& n : graph->nodes()) {
      env.logger->info("placement: {} ({}) -> {}", n.name(), n.op(),
                       n.def.device.empty() ? env.cpu_device() : n.def.device);
    }
  }
  Executor::Options options{env.registry,    env.kernel_env,    env.pool,
                            kDeviceCpu,      env.cpu_device(), std::move(master),
                            std::move(session), env.inline_kernels};
  auto executor = Executor::Create(std::make_shared<const Graph>(std::move(graph).value()), options);
  if (!executor.ok()) return executor.status().WithContext(env.task);
  return std::shared_ptr<Executor>(std::move(executor).value());
}

StartedPartition StartPartition(TaskEnv& env, Rendezvous& rendezvous,
                                std::shared_ptr<Executor> executor, PartitionStep step) {
  auto run = std::make_shared<Run>();
  run->executor = std::move(executor);  // lives until the step has ended, see Run
  run->frame.args = std::move(step.feeds);
  run->frame.retvals.resize(step.num_fetches);
  const int64_t step_id = step.step_id;
  const int64_t timeout_ms = RequestTimeout(step.timeout_ms, env.step_timeout).count();

  Executor::RunArgs args;
  args.step_id = step_id;
  args.frame = &run->frame;
  args.rendezvous = &rendezvous;
  args.cancellation = run->cancellation.get();
  const auto started = std::chrono::steady_clock::now();
  args.deadline = started + std::chrono::milliseconds(timeout_ms);
  args.trace = step.trace;

  // A partition of cheap kernels only (the empty step, a ps's reads) ends
  // inside RunAsync on this thread: then the result is ready at once, and
  // no cross-thread fulfiller is made (making and dropping one wakes the
  // loop). Otherwise the step ends on another thread, or later on this one.
  run->executor->RunAsync(args, [run, &env, step_id, started](const Status& s, StepStats stats) {
    env.metrics.partition_steps.Record(s.code(), std::chrono::steady_clock::now() - started);
    // This task's part of the step is over: what was pushed here for it
    // has been taken, and what still comes is dropped on arrival.
    env.rendezvous.Cleanup(step_id);
    run->status = s;
    run->stats = std::move(stats);
    MutexLock lock(run->mu);
    run->ended = true;
    KJ_IF_MAYBE(f, run->fulfiller) { (*f)->fulfill(); }
  });
  kj::Promise<void> ended = nullptr;
  {
    MutexLock lock(run->mu);
    if (run->ended) return StartedPartition{.ended = Result(*run)};
    auto paf = kj::newPromiseAndCrossThreadFulfiller<void>();
    run->fulfiller = kj::mv(paf.fulfiller);
    ended = kj::mv(paf.promise);
  }
  // Registered for abortStep only now: whoever aborts steps (abortStep, a
  // master's cancel, the drain) runs on this thread, so none could have
  // looked while RunAsync ran, and a partition that ended inside it skips
  // the registry altogether.
  env.steps.Add(step_id, run->cancellation);
  // If the promise is dropped (the master gave up or vanished), cancel the
  // partition too; `run` lives on in the executor's callback.
  // (This also runs once the step has ended well: there is nothing left
  // to cancel then, and no message is worth formatting.)
  auto on_drop = kj::defer([run, step_id, &env] {
    env.steps.Remove(step_id, run->cancellation.get());
    if (Ended(*run)) return;
    run->cancellation->Cancel(errors::Cancelled("the master cancelled step ", step_id));
  });
  return StartedPartition{
      .later = ended.then([run, on_drop = kj::mv(on_drop)]() mutable -> PartitionResult {
        StatusOr<PartitionResult> result = Result(*run);
        ThrowIfError(result.status());
        return std::move(result).value();
      })};
}

kj::Promise<PartitionResult> RunPartition(TaskEnv& env, Rendezvous& rendezvous,
                                          std::shared_ptr<Executor> executor, PartitionStep step) {
  StartedPartition started =
      StartPartition(env, rendezvous, std::move(executor), std::move(step));
  if (!started.ended) return kj::mv(started.later);
  StatusOr<PartitionResult>& ended = *started.ended;
  if (!ended.ok()) return KjFromStatus(ended.status());
  return std::move(ended).value();
}

}  // namespace tfd
