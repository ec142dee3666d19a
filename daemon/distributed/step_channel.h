// StepChannel: a master's partitions on other tasks run with one data-plane
// message each way (schemas/transport.capnp, StepMessage) instead of a
// Cap'n Proto runStep call and its answer, whose per-call cost was most of
// what an empty step spent above the raw round trip (docs/performance.md,
// "The step path").
//
// Registration stays on Cap'n Proto (registerGraph): a task offers the
// partition on the channel when it can answer the registering master over
// the data plane (it logged in to that task and has an endpoint to it), and
// answers with a handle. The master's runs then send `run` with the handle
// and the step, and wait for `done` (with the nodes it ran, when traced).
// runStep remains for a task that offered no handle (an older tfd,
// --no-step-channel, or no data plane back to the master, as with TLS
// between hosts).
//
// What each side can rely on:
// - Only the registering master runs a handle: a `run` under another task's
//   ticket is answered FAILED_PRECONDITION. A handle goes with its
//   registration (the RegisteredGraph capability): a `run` of a released one
//   is answered NOT_FOUND.
// - A master waiting for `done` stops with UNAVAILABLE when its endpoint to
//   the task goes (the control connection dropped, or UCX saw the peer
//   fail), and with DEADLINE_EXCEEDED once the step's timeout and 10 s more
//   have passed without an answer (the task answers its own timeout first).
// - A master that gives up on a step (another partition failed, the client
//   went) sends `cancel`: the partition stops as a cancelled runStep would.
// - A task whose endpoint to the master went logs in to it again to answer.
//
//   // on the task a partition is registered with (WorkerService):
//   channel.OfferTo(master, executor, 2 * kj::SECONDS).then([](std::unique_ptr<Offer> o) { ... });
//   // on the master (MasterSession):
//   if (channel.Reaches(task)) channel.Run(task, handle, step_id, timeout_ms, trace).then(...);
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
#include "schemas/transport.capnp.h"

namespace tfd {

class StepChannel {
 public:
  // Runs offered partitions with `rendezvous` (the task's, as runStep does).
  // Does nothing without env.data_plane or with env.step_channel off.
  StepChannel(TaskEnv& env, Rendezvous& rendezvous);
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

  // Offers `executor` to `master`'s runs: null when the channel is off, or
  // `master` is not another task of the cluster, or this task cannot reach
  // it over the data plane within `patience` (the registration then goes
  // on without the channel). Never rejects.
  kj::Promise<std::unique_ptr<Offer>> OfferTo(const std::string& master,
                                              std::shared_ptr<Executor> executor,
                                              kj::Duration patience);

  // Whether runs on `task` can go over the channel now.
  bool Reaches(const std::string& task) const;
  // Runs the partition `handle` on `task` for one step (timeout_ms 0: the
  // step timeout of `task`). Resolves when it ended well, with its nodes
  // when `trace`; rejects with its error there, or as the header says.
  // Dropping it cancels the partition.
  kj::Promise<StepStats> Run(const std::string& task, uint64_t handle, int64_t step_id,
                             int64_t timeout_ms, bool trace);

  // Partitions this task ran for masters over the channel, since start.
  uint64_t steps_served() const { return steps_served_; }

 private:
  class Waiter;
  using Key = std::tuple<std::string, int64_t, uint64_t>;  // task, step, handle

  void OnMessage(const std::string& from, proto::StepMessage::Reader message);
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

  TaskEnv& env_;
  Rendezvous& rendezvous_;
  bool enabled_;
  std::shared_ptr<Offer::Table> offered_;
  std::map<Key, Waiter*> waiting_;
  LogTaskErrors errors_;
  kj::TaskSet serving_;
  uint64_t steps_served_ = 0;
};

}  // namespace tfd
