// StepChannel: how a master runs its partitions on other tasks — one
// data-plane message each way (daemon/transport/step_messages.h): `run`
// with the partition's handle and the step, answered by `done` (with the
// nodes it ran, when traced). A Cap'n Proto call and its answer cost most
// of what an empty step spent above the raw round trip (docs/performance.md,
// "The step path"); every pair of tasks has a data plane, so this is the
// only way a partition on another task runs.
//
// Registration stays on Cap'n Proto (registerGraph): the task offers the
// partition to the registering master here, which needs the task to reach
// that master over the data plane: back on the stream the master opened
// here, or else over an endpoint of its own (it logs in there once for
// that, and keeps the connection); the registration answers with the
// handle, or fails with UNAVAILABLE naming the master.
//
// What each side can rely on:
// - Only the registering master runs a handle: a `run` under another task's
//   ticket is answered FAILED_PRECONDITION. A handle goes with its
//   registration (the RegisteredGraph capability): a `run` of a released one
//   is answered NOT_FOUND.
// - A master waiting for `done` stops with UNAVAILABLE when its endpoint to
//   the task goes (the control connection dropped, or UCX saw the peer
//   fail), and with DEADLINE_EXCEEDED once the step's timeout and 10 s more
//   (kAnswerGrace) have passed without an answer (the task answers its own
//   timeout first; one timer looks for such runs every second, so up to a
//   second later).
// - A master that gives up on a step (another partition failed, the client
//   went) sends `cancel`: the partition's waits are cancelled, as abortStep
//   would.
// - A task answers on the stream the `run` came on (DataPlane::Reply);
//   over shared memory, or once that stream went, on its own endpoint to
//   the master, logging in to it again when that went too.
//
//   // on the task a partition is registered with (WorkerService):
//   channel.OfferTo(master, executor, patience).then([](std::unique_ptr<Offer> o) { ... });
//   // on the master (through WorkerService, its PartitionRunner):
//   channel.Run(task, handle, step_id, timeout_ms, trace).then([](StepStats s) { ... });
//
// Thread-safety: event-loop thread only.
#pragma once

#include <kj/async.h>

#include <map>
#include <memory>
#include <string>
#include <tuple>

#include "common/rendezvous.h"
#include "common/step_stats.h"
#include "daemon/distributed/task_env.h"
#include "daemon/rpc/kj_status.h"
#include "daemon/runtime/executor.h"
#include "daemon/transport/step_messages.h"

namespace tfd {

class StepChannel {
 public:
  // How long a master waits past a step's own timeout for the task's
  // answer: the task's deadline fires first and answers; this only catches
  // an answer lost with its task.
  static constexpr kj::Duration kAnswerGrace = 10 * kj::SECONDS;

  // Runs offered partitions with `rendezvous` (the task's). Without
  // env.data_plane (a test's task) nothing is offered and no run starts:
  // both fail with UNAVAILABLE. `answer_grace`: a test's shorter one.
  StepChannel(TaskEnv& env, Rendezvous& rendezvous, kj::Duration answer_grace = kAnswerGrace);
  ~StepChannel();
  StepChannel(const StepChannel&) = delete;
  StepChannel& operator=(const StepChannel&) = delete;

  // A partition on offer, until this is destroyed (with its registration).
  class Offer {
    struct Table;
    // Only a StepChannel makes one.
    class Key {
      friend class StepChannel;
      Key() = default;
    };

   public:
    Offer(Key, std::weak_ptr<Table> table, uint64_t handle)
        : table_(std::move(table)), handle_(handle) {}
    ~Offer();
    Offer(const Offer&) = delete;
    Offer& operator=(const Offer&) = delete;
    uint64_t handle() const { return handle_; }

   private:
    friend class StepChannel;
    std::weak_ptr<Table> table_;
    uint64_t handle_;
  };

  // Offers `executor` to `master`'s runs. Rejects with INVALID_ARGUMENT
  // when `master` is not another task of the cluster, and with UNAVAILABLE
  // naming it when this task cannot reach it over the data plane (neither
  // on a stream the master opened here nor by logging in there within
  // `patience`): it could not answer the master's runs.
  kj::Promise<std::unique_ptr<Offer>> OfferTo(const std::string& master,
                                              std::shared_ptr<Executor> executor,
                                              kj::Duration patience);

  // Whether this task has a working data-plane endpoint to `task` now.
  bool Reaches(const std::string& task) const;
  // Runs the partition `handle` on `task` for one step (timeout_ms 0: the
  // step timeout of `task`). Resolves when it ended well, with its nodes
  // when `trace`; rejects with its error there, with UNAVAILABLE at once
  // when there is no endpoint to `task`, or as the header says.
  // Dropping it cancels the partition.
  kj::Promise<StepStats> Run(const std::string& task, uint64_t handle, int64_t step_id,
                             int64_t timeout_ms, bool trace);

  // Partitions this task ran for masters over the channel, since start.
  uint64_t steps_served() const { return steps_served_; }

 private:
  class Waiter;
  using Key = std::tuple<std::string, int64_t, uint64_t>;  // task, step, handle

  void OnMessage(const std::string& from, const StepMessage& message);
  void OnPeerGone(const std::string& task, const Status& why);
  void Serve(const std::string& from, uint64_t handle, int64_t step_id, int64_t timeout_ms,
             bool trace);
  // Sends `done` for a partition that ended, logging in to `master` again
  // when the endpoint to it went.
  void Answer(const std::string& master, uint64_t handle, int64_t step_id, const Status& status,
              const StepStats& stats);
  Status SendDone(const std::string& master, uint64_t handle, int64_t step_id,
                  const Status& status, const StepStats& stats);
  void Cancel(const std::string& task, uint64_t handle, int64_t step_id);
  // Every kExpirySweep while runs wait: answers those past their timeout
  // and grace with DEADLINE_EXCEEDED and cancels them on their task.
  kj::Promise<void> Sweep();

  TaskEnv& env_;
  Rendezvous& rendezvous_;
  const kj::Duration answer_grace_;
  std::shared_ptr<Offer::Table> offered_;
  std::map<Key, Waiter*> waiting_;
  LogTaskErrors errors_;
  kj::TaskSet serving_;
  uint64_t steps_served_ = 0;
  bool sweeping_ = false;               // sweep_ runs
  kj::Promise<void> sweep_ = nullptr;  // last: cancelled first
};

}  // namespace tfd
