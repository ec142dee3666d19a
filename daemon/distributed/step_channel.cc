#include "daemon/distributed/step_channel.h"

#include <random>

#include "daemon/distributed/partition_run.h"
#include "daemon/distributed/peers.h"
#include "daemon/distributed/request_timeout.h"
#include "daemon/transport/data_plane.h"

namespace tfd {
namespace {

// How long a task tries to log in to a master again to answer it.
constexpr kj::Duration kAnswerLogin = 5 * kj::SECONDS;
// How often a master looks for runs past their grace while any wait: one
// timer for the whole channel rather than one per run (a fan-out step arms
// one per task otherwise), at the price of giving up on a lost answer up to
// this much later.
constexpr kj::Duration kExpirySweep = 1 * kj::SECONDS;

std::string StepOn(int64_t step_id, const std::string& task) {
  return "step " + std::to_string(step_id) + " on " + task;
}

}  // namespace

struct StepChannel::Offer::Table {
  struct Entry {
    std::string master;
    std::shared_ptr<Executor> executor;
  };
  std::map<uint64_t, Entry> entries;
  std::mt19937_64 random{std::random_device{}()};
};

StepChannel::Offer::~Offer() {
  if (auto table = table_.lock()) table->entries.erase(handle_);
}

// The master's side of one run: answered by `done`, by the endpoint's
// going, or dropped (then the task is told to cancel).
class StepChannel::Waiter {
 public:
  Waiter(kj::PromiseFulfiller<StepStats>& fulfiller, StepChannel& channel, Key key,
         kj::TimePoint give_up)
      : fulfiller_(fulfiller), channel_(channel), key_(std::move(key)), give_up_(give_up) {
    channel_.waiting_[key_] = this;
  }
  ~Waiter() {
    if (answered_) return;
    channel_.waiting_.erase(key_);
    channel_.Cancel(std::get<0>(key_), std::get<2>(key_), std::get<1>(key_));
  }
  int64_t step_id() const { return std::get<1>(key_); }
  const Key& key() const { return key_; }
  kj::TimePoint give_up() const { return give_up_; }
  void Answer(const Status& status, StepStats stats = {}) {
    answered_ = true;
    channel_.waiting_.erase(key_);
    if (status.ok()) {
      fulfiller_.fulfill(std::move(stats));
    } else {
      fulfiller_.reject(KjFromStatus(status));
    }
  }

 private:
  kj::PromiseFulfiller<StepStats>& fulfiller_;
  StepChannel& channel_;
  Key key_;
  kj::TimePoint give_up_;
  bool answered_ = false;
};

StepChannel::StepChannel(TaskEnv& env, Rendezvous& rendezvous, kj::Duration answer_grace)
    : env_(env),
      rendezvous_(rendezvous),
      answer_grace_(answer_grace),
      offered_(std::make_shared<Offer::Table>()),
      errors_(env.logger, "the step channel"),
      serving_(errors_) {
  if (env_.data_plane == nullptr) return;
  env_.data_plane->SetStepHandlers(
      [this](const std::string& from, const StepMessage& m) { OnMessage(from, m); },
      [this](const std::string& task, const Status& why) { OnPeerGone(task, why); });
}

StepChannel::~StepChannel() {
  if (env_.data_plane != nullptr) env_.data_plane->SetStepHandlers(nullptr, nullptr);
  const Status gone = errors::Unavailable(env_.task, " is shutting down");
  while (!waiting_.empty()) waiting_.begin()->second->Answer(gone);
}

kj::Promise<std::unique_ptr<StepChannel::Offer>> StepChannel::OfferTo(
    const std::string& master, std::shared_ptr<Executor> executor, kj::Duration patience) {
  if (master == env_.task || !env_.cluster.HasTask(master)) {
    return KjFromStatus(errors::InvalidArgument(
        "a partition registered for master '", master, "', which is no other task of ",
        env_.task, "'s cluster: ", env_.task, " could not answer its steps"));
  }
  auto unreachable = [this, master](const std::string& why) {
    return errors::Unavailable(env_.task, " cannot reach the master ", master,
                               " over the data plane to answer its steps: ", why);
  };
  if (env_.data_plane == nullptr) return KjFromStatus(unreachable("this task has no data plane"));
  // To answer, this task needs a way back to the master: the stream the
  // master opened here, which its runs come on, or else an endpoint of its
  // own, got by logging in there (kept, like any peer connection). A task
  // that never pushes to the master thus never connects to it.
  auto answerable = [this, master]() {
    return env_.data_plane->RepliesTo(master) || env_.data_plane->Connected(master);
  };
  kj::Promise<void> reached = nullptr;
  if (answerable()) {
    reached = kj::READY_NOW;
  } else if (env_.peers == nullptr) {
    return KjFromStatus(unreachable("this task has no connections to its peers"));
  } else {
    reached = env_.peers->Services(master, env_.data_plane->timer().now() + patience,
                                   Peers::Patience::kFailIfDown)
                  .ignoreResult();
  }
  return reached.then(
      [this, master, executor = std::move(executor), unreachable,
       answerable]() mutable -> std::unique_ptr<Offer> {
        // The link may have gone again between the login and now.
        if (!answerable()) {
          kj::throwFatalException(KjFromStatus(unreachable("its data-plane link went")));
        }
        uint64_t handle = 0;
        while (handle == 0 || offered_->entries.count(handle)) handle = offered_->random();
        offered_->entries[handle] = Offer::Table::Entry{master, std::move(executor)};
        return std::make_unique<Offer>(Offer::Key(), offered_, handle);
      },
      [unreachable](kj::Exception&& e) -> std::unique_ptr<Offer> {
        kj::throwFatalException(KjFromStatus(unreachable(StatusFromKj(e).message())));
      });
}

bool StepChannel::Reaches(const std::string& task) const {
  return env_.data_plane != nullptr && env_.data_plane->Connected(task);
}

kj::Promise<StepStats> StepChannel::Run(const std::string& task, uint64_t handle,
                                        int64_t step_id, int64_t timeout_ms, bool trace) {
  // Waiting before sending: a cheap partition's answer can arrive while the
  // send still progresses UCX.
  if (env_.data_plane == nullptr) {
    return KjFromStatus(errors::Unavailable(StepOn(step_id, task), ": ", env_.task,
                                            " has no data plane"));
  }
  const auto timeout = RequestTimeout(timeout_ms, env_.step_timeout);
  const kj::Duration wait = timeout.count() * kj::MILLISECONDS + answer_grace_;
  const Key key{task, step_id, handle};
  auto answered = kj::newAdaptedPromise<StepStats, Waiter>(
      *this, key, env_.data_plane->timer().now() + wait);
  const Status sent = env_.data_plane->SendStepMessage(
      task, StepMessage::Run(handle, step_id, timeout_ms, trace));
  if (!sent.ok()) {
    if (auto it = waiting_.find(key); it != waiting_.end()) it->second->Answer(sent);
    return answered;
  }
  if (!sweeping_) {
    sweeping_ = true;
    sweep_ = Sweep().eagerlyEvaluate(nullptr);
  }
  return answered;
}

kj::Promise<void> StepChannel::Sweep() {
  return env_.data_plane->timer().afterDelay(kExpirySweep).then([this]() -> kj::Promise<void> {
    const kj::TimePoint now = env_.data_plane->timer().now();
    std::vector<Waiter*> expired;
    for (auto& [key, waiter] : waiting_) {
      if (waiter->give_up() <= now) expired.push_back(waiter);
    }
    for (Waiter* w : expired) {
      const auto& [task, step_id, handle] = w->key();
      const Status lost =
          errors::DeadlineExceeded(StepOn(step_id, task), ": no answer within its timeout and ",
                                   answer_grace_ / kj::SECONDS,
                                   " s of grace; the task or its answer was lost")
              .WithDetails({.task = task});
      Cancel(task, handle, step_id);  // the task may still hold the partition
      w->Answer(lost);
    }
    if (waiting_.empty()) {
      sweeping_ = false;
      return kj::READY_NOW;
    }
    return Sweep();
  });
}

void StepChannel::OnMessage(const std::string& from, const StepMessage& message) {
  switch (message.kind) {
    case StepMessage::Kind::kRun:
      Serve(from, message.graph, message.step_id, message.timeout_ms, message.trace);
      return;
    case StepMessage::Kind::kDone: {
      auto it = waiting_.find(Key{from, message.step_id, message.graph});
      if (it == waiting_.end()) return;  // the master gave up on it already
      it->second->Answer(message.status, message.stats);
      return;
    }
    case StepMessage::Kind::kCancel: {
      const Status why = errors::Cancelled(StepOn(message.step_id, env_.task), ": the master ",
                                           from, " gave up on it");
      env_.rendezvous.Abort(message.step_id, why);
      env_.steps.Abort(message.step_id, why);
      return;
    }
  }
}

void StepChannel::Serve(const std::string& from, uint64_t handle, int64_t step_id,
                        int64_t timeout_ms, bool trace) {
  auto it = offered_->entries.find(handle);
  if (it == offered_->entries.end()) {
    Answer(from, handle, step_id,
           errors::NotFound(StepOn(step_id, env_.task), ": partition handle ", handle,
                            " is not registered here (released, or this task restarted)")
               .WithDetails({.task = env_.task}),
           {});
    return;
  }
  if (it->second.master != from) {
    Answer(from, handle, step_id,
           errors::FailedPrecondition(StepOn(step_id, env_.task),
                                      ": the partition was registered by ", it->second.master,
                                      ", not by ", from)
               .WithDetails({.task = env_.task}),
           {});
    return;
  }
  ++steps_served_;
  PartitionStep step{.step_id = step_id, .timeout_ms = timeout_ms, .trace = trace};
  StartedPartition started = StartPartition(env_, rendezvous_, it->second.executor, std::move(step));
  if (started.ended) {  // answered now: no promise, no turn of the loop
    const StatusOr<PartitionResult>& ended = *started.ended;
    Answer(from, handle, step_id, ended.status(), ended.ok() ? ended->stats : StepStats{});
    return;
  }
  serving_.add(kj::mv(started.later)
                   .then(
                       [this, from, handle, step_id](PartitionResult r) {
                         Answer(from, handle, step_id, OkStatus(), r.stats);
                       },
                       [this, from, handle, step_id](kj::Exception&& e) {
                         Answer(from, handle, step_id, StatusFromKj(e), {});
                       }));
}

Status StepChannel::SendDone(const std::string& master, uint64_t handle, int64_t step_id,
                             const Status& status, const StepStats& stats) {
  // On the stream the run came on, where it came on one.
  return env_.data_plane->Reply(master, StepMessage::Done(handle, step_id, status, stats));
}

void StepChannel::Answer(const std::string& master, uint64_t handle, int64_t step_id,
                         const Status& status, const StepStats& stats) {
  Status sent = SendDone(master, handle, step_id, status, stats);
  // A trace too large for one message: the master hears why at once rather
  // than at its deadline.
  if (sent.code() == Code::kInvalidArgument) sent = SendDone(master, handle, step_id, sent, {});
  if (sent.ok()) return;
  if (env_.peers == nullptr) {
    if (env_.logger) {
      env_.logger->warn("could not tell {} that {} ended: no data-plane endpoint to it", master,
                        StepOn(step_id, env_.task));
    }
    return;
  }
  // The endpoint went with the control connection to the master: a master
  // that still waits is reached again (it fails the step if it went too).
  serving_.add(env_.peers->Services(master, env_.data_plane->timer().now() + kAnswerLogin,
                                    Peers::Patience::kFailIfDown)
                   .then([this, master, handle, step_id, status, stats](TaskServices) {
                     ThrowIfError(SendDone(master, handle, step_id, status, stats));
                   })
                   .catch_([this, master, step_id](kj::Exception&& e) {
                     if (env_.logger) {
                       env_.logger->warn("could not tell {} that {} ended: {}", master,
                                         StepOn(step_id, env_.task), e.getDescription().cStr());
                     }
                   }));
}

void StepChannel::Cancel(const std::string& task, uint64_t handle, int64_t step_id) {
  // Best effort: a task that cannot be reached has lost the step anyway.
  (void)env_.data_plane->SendStepMessage(task, StepMessage::Cancel(handle, step_id));
}

void StepChannel::OnPeerGone(const std::string& task, const Status& why) {
  std::vector<Waiter*> gone;
  for (auto& [key, waiter] : waiting_) {
    if (std::get<0>(key) == task) gone.push_back(waiter);
  }
  for (Waiter* w : gone) {
    // Named and attributed to the task: the master adds no name of its own.
    w->Answer(why.WithContext(StepOn(w->step_id(), task))
                  .WithDetails({.task = task, .reason = why.reason()}));
  }
}

}  // namespace tfd
