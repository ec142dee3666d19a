// Cluster checkpoints: fan out, gather, agree on a step.
#include "daemon/distributed/checkpoint_fanout.h"

#include <algorithm>
#include <functional>
#include <map>
#include <string>

#include "common/tensor_proto.h"
#include "daemon/rpc/checkpoint_wire.h"
#include "daemon/distributed/peers.h"
#include "daemon/distributed/step_errors.h"
#include "daemon/rpc/kj_status.h"

namespace tfd {
namespace {

using Reports = std::vector<TaskCheckpoints>;
using TaskCall = std::function<kj::Promise<TaskCheckpoints>(proto::Worker::Client& worker)>;

// `p`, or DEADLINE_EXCEEDED naming `what` if the deadline comes first.
template <typename T>
kj::Promise<T> WithDeadline(TaskEnv& env, kj::Promise<T> p, kj::TimePoint deadline,
                            std::string what) {
  return p.exclusiveJoin(
      env.peers->timer().atTime(deadline).then([what = std::move(what)]() -> kj::Promise<T> {
        return KjFromStatus(errors::DeadlineExceeded(what, " did not finish before the deadline"));
      }));
}

Status NoCheckpointDir(const std::vector<std::string>& tasks) {
  std::string list;
  for (const auto& t : tasks) list += (list.empty() ? "" : ", ") + t;
  return errors::FailedPrecondition("no task of the cluster has a checkpoint directory (asked ",
                                    list, "); start the tasks that hold variables with "
                                    "--checkpoint-dir");
}

// Sends `call` to the worker of each of `tasks` and gathers each answer or
// error, in that order.
kj::Promise<kj::Array<StatusOr<TaskCheckpoints>>> AskTasks(TaskEnv& env,
                                                           const std::vector<std::string>& tasks,
                                                           kj::TimePoint deadline,
                                                           const std::string& method,
                                                           TaskCall call) {
  kj::Vector<kj::Promise<StatusOr<TaskCheckpoints>>> calls;
  for (const std::string& task : tasks) {
    // A checkpoint is of the tasks that are up: one that is down fails the
    // call now rather than at its deadline.
    auto answer = env.peers->Services(task, deadline, Peers::Patience::kFailIfDown)
                      .then([call](TaskServices s) {
      return call(s.worker);
    });
    calls.add(WithDeadline(env, kj::mv(answer), deadline, method)
                  .then([](TaskCheckpoints r) -> StatusOr<TaskCheckpoints> { return r; },
                        [task](kj::Exception&& e) -> StatusOr<TaskCheckpoints> {
                          return OnTask(task, StatusFromKj(e));
                        }));
  }
  return kj::joinPromises(calls.releaseAsArray());
}

kj::Promise<kj::Array<StatusOr<TaskCheckpoints>>> AskEveryTask(TaskEnv& env,
                                                               kj::TimePoint deadline,
                                                               const std::string& method,
                                                               TaskCall call) {
  return AskTasks(env, env.cluster.TaskNames(), deadline, method, kj::mv(call));
}

// The tasks' answers, or the failure that names every task that failed
// (with the first failure's code), `what` in front.
StatusOr<Reports> Gather(kj::Array<StatusOr<TaskCheckpoints>> results, const std::string& what) {
  Reports reports;
  std::string failures;
  std::optional<Code> code;
  for (auto& r : results) {
    if (!r.ok()) {
      if (!code) code = r.status().code();
      failures += (failures.empty() ? "" : "; ") + r.status().message();
      continue;
    }
    reports.push_back(std::move(r).value());
  }
  if (code) return Status(*code, what + " failed: " + failures);
  return reports;
}

bool AnyDirectory(const Reports& reports) {
  for (const TaskCheckpoints& r : reports) {
    if (!r.directory.empty()) return true;
  }
  return false;
}

// Sends `call` to every task's worker and gathers the answers in cluster
// order. Any failure fails the whole, naming every task that failed.
kj::Promise<Reports> CallEveryTask(TaskEnv& env, kj::TimePoint deadline, std::string method,
                                   TaskCall call) {
  return AskEveryTask(env, deadline, method, kj::mv(call))
      .then([&env, method](kj::Array<StatusOr<TaskCheckpoints>> results) {
        StatusOr<Reports> reports = Gather(kj::mv(results), method);
        ThrowIfError(reports.status());
        if (!AnyDirectory(*reports)) ThrowIfError(NoCheckpointDir(env.cluster.TaskNames()));
        return std::move(reports).value();
      });
}

// The value of `global_step` on `task`: nullopt when it has no such
// variable or it is uninitialized.
kj::Promise<StatusOr<std::optional<int64_t>>> ReadGlobalStepOn(TaskEnv& env,
                                                               const std::string& task,
                                                               kj::TimePoint deadline) {
  using Result = StatusOr<std::optional<int64_t>>;
  auto read = env.peers->Services(task, deadline, Peers::Patience::kFailIfDown)
                  .then([](TaskServices s) {
    auto request = s.worker.readVariableRequest();
    request.setName(kGlobalStepVariable);
    return request.send().then(
        [](capnp::Response<proto::Worker::ReadVariableResults>&& r) -> Result {
          if (!r.getInfo().getInitialized() || !r.hasValue()) return std::optional<int64_t>();
          TFD_ASSIGN_OR_RETURN(Tensor t, TensorFromProto(r.getValue()));
          if (t.shape().rank() == 0 && t.dtype() == DType::kInt64) {
            return std::optional<int64_t>(t.scalar<int64_t>());
          }
          if (t.shape().rank() == 0 && t.dtype() == DType::kInt32) {
            return std::optional<int64_t>(t.scalar<int32_t>());
          }
          return errors::InvalidArgument("variable '", kGlobalStepVariable, "' is ", t.Describe(),
                                         ", not an integer scalar: give the step explicitly");
        });
  });
  return WithDeadline(env, kj::mv(read), deadline, std::string("reading ") + kGlobalStepVariable)
      .catch_([](kj::Exception&& e) -> Result {
        Status s = StatusFromKj(e);
        if (s.code() == Code::kNotFound) return std::optional<int64_t>();
        return s;
      })
      .then([task](Result r) -> Result {
        if (!r.ok()) return OnTask(task, r.status());
        return r;
      });
}

kj::Promise<int64_t> ReadGlobalStep(TaskEnv& env, kj::TimePoint deadline) {
  kj::Vector<kj::Promise<StatusOr<std::optional<int64_t>>>> reads;
  for (const std::string& task : env.cluster.TaskNames()) {
    reads.add(ReadGlobalStepOn(env, task, deadline));
  }
  return kj::joinPromises(reads.releaseAsArray())
      .then([](kj::Array<StatusOr<std::optional<int64_t>>> values) -> int64_t {
        for (auto& v : values) ThrowIfError(v.status());
        for (auto& v : values) {
          if (v->has_value()) return **v;
        }
        return 0;
      });
}

bool Newer(const CheckpointInfo& a, const CheckpointInfo& b) {
  return a.mtime_unix_ms != b.mtime_unix_ms ? a.mtime_unix_ms > b.mtime_unix_ms : a.step > b.step;
}

// The newest step that verifies on every task with a dir and a checkpoint
// in it, ranked by its newest write. A task whose directory holds none is
// new to the job (it grew by a ps task): it has no say, and restores from
// the other tasks' parts (daemon/checkpoint/sliced_restore.h).
StatusOr<int64_t> ChooseLatest(const Reports& lists) {
  struct Good {
    size_t tasks = 0;
    CheckpointInfo newest;
  };
  std::map<int64_t, Good> good;
  size_t with_dir = 0;
  bool any_file = false;
  std::string summary;
  for (const TaskCheckpoints& r : lists) {
    if (r.directory.empty()) continue;
    if (!r.checkpoints.empty()) ++with_dir;
    std::string files;
    for (const CheckpointInfo& c : r.checkpoints) {
      any_file = true;
      files += (files.empty() ? "" : ", ") + std::to_string(c.step) +
               (c.verified ? "" : " (" + c.problem + ")");
      if (!c.verified) continue;
      Good& g = good[c.step];
      if (g.tasks++ == 0 || Newer(c, g.newest)) g.newest = c;
    }
    summary += (summary.empty() ? "" : "; ") + r.task + " has " +
               (files.empty() ? "none" : "steps " + files);
  }
  const CheckpointInfo* best = nullptr;
  for (const auto& [step, g] : good) {
    if (g.tasks == with_dir && (best == nullptr || Newer(g.newest, *best))) best = &g.newest;
  }
  if (best != nullptr) return best->step;
  if (!any_file) return errors::NotFound("no task has a checkpoint yet: ", summary);
  return errors::FailedPrecondition("no checkpoint step verifies on every task with a "
                                    "checkpoint directory: ",
                                    summary);
}

// What restoring `step` passes over on this task: its newer files.
std::vector<std::string> PassedOver(const TaskCheckpoints& list, int64_t step) {
  const CheckpointInfo* chosen = nullptr;
  for (const CheckpointInfo& c : list.checkpoints) {
    if (c.step == step) chosen = &c;
  }
  std::vector<std::string> out;
  if (chosen == nullptr) return out;
  for (const CheckpointInfo& c : list.checkpoints) {
    if (!Newer(c, *chosen)) continue;
    out.push_back(c.path + ": " + (c.verified ? "step " + std::to_string(c.step) +
                                                    " does not verify on every task"
                                              : c.problem));
  }
  return out;
}

// Phase one: each task writes its part as a pending file.
TaskCall SaveCall(int64_t step) {
  return [step](proto::Worker::Client& worker) {
    auto request = worker.saveCheckpointRequest();
    request.setStep(step);
    request.setPending(true);
    return request.send().then([](capnp::Response<proto::Worker::SaveCheckpointResults>&& r) {
      return TaskCheckpointsFromProto(r.getResult());
    });
  };
}

TaskCall FinishCall(int64_t step, proto::CheckpointAction action) {
  return [step, action](proto::Worker::Client& worker) {
    auto request = worker.finishCheckpointRequest();
    request.setStep(step);
    request.setAction(action);
    return request.send().then([](capnp::Response<proto::Worker::FinishCheckpointResults>&& r) {
      return TaskCheckpointsFromProto(r.getResult());
    });
  };
}

TaskCall RestoreCall(int64_t step) {
  return [step](proto::Worker::Client& worker) {
    auto request = worker.restoreCheckpointRequest();
    request.setStep(step);
    return request.send().then([](capnp::Response<proto::Worker::RestoreCheckpointResults>&& r) {
      return TaskCheckpointsFromProto(r.getResult());
    });
  };
}

TaskCall ListCall(bool verify) {
  return [verify](proto::Worker::Client& worker) {
    auto request = worker.listCheckpointsRequest();
    request.setVerify(verify);
    return request.send().then([](capnp::Response<proto::Worker::ListCheckpointsResults>&& r) {
      return TaskCheckpointsFromProto(r.getResult());
    });
  };
}

// How long a hold waits for the steps already running to end: a step is
// milliseconds, but a sync replica's may wait for a token the saving chief
// hands out only after the save, and is not waited for longer.
constexpr kj::Duration kDrain = 1 * kj::SECONDS;

struct HeldTask {
  std::string task;
  proto::Worker::Client worker;
  uint64_t hold_id = 0;
  uint32_t running = 0;
  // Kept until the holds are released: dropped, it releases the task's
  // hold itself (so does this master's going away). Null from an older task.
  proto::StepHold::Client hold = nullptr;
};

// Lets every hold go, whatever became of the work done under them; a task
// that does not answer lets go by itself when its hold expires.
kj::Promise<void> ReleaseAll(TaskEnv& env, std::vector<HeldTask>& held) {
  kj::Vector<kj::Promise<void>> calls;
  for (HeldTask& h : held) {
    auto request = h.worker.releaseStepsRequest();
    request.setHoldId(h.hold_id);
    calls.add(request.send().ignoreResult().catch_([](kj::Exception&&) {}));
  }
  const kj::TimePoint soon = env.peers->timer().now() + 5 * kj::SECONDS;
  return WithDeadline(env, kj::joinPromises(calls.releaseAsArray()), soon, "releaseSteps")
      .catch_([](kj::Exception&&) {});
}

// Runs `body` while no step runs anywhere in the cluster: every task's
// master holds its new steps and lets its running ones end first
// (daemon/distributed/step_gate.h), so what each task then snapshots or
// restores is the same cut of the steps. The holds are released afterwards,
// also when `body` fails; they expire by themselves at the deadline.
kj::Promise<Reports> WithStepsHeld(TaskEnv& env, kj::TimePoint deadline, std::string what,
                                   kj::Function<kj::Promise<Reports>()> body) {
  const kj::TimePoint now = env.peers->timer().now();
  const kj::Duration left = deadline > now ? deadline - now : 0 * kj::SECONDS;
  const int64_t drain_ms = std::min(kDrain, left) / kj::MILLISECONDS;
  // A second past the deadline, so the holds outlast the body; but no more
  // than Worker.holdSteps takes (worker_service.cc: 10 minutes), or a
  // client's 600 s deadline (tfctl's --timeout 600) failed every save.
  constexpr int64_t kMaxHoldMs = 10 * 60 * 1000;
  const int64_t hold_ms = std::min<int64_t>(left / kj::MILLISECONDS + 1000, kMaxHoldMs);
  kj::Vector<kj::Promise<StatusOr<HeldTask>>> holds;
  for (const std::string& task : env.cluster.TaskNames()) {
    auto held = env.peers->Services(task, deadline, Peers::Patience::kFailIfDown)
                    .then([task, drain_ms, hold_ms](TaskServices s) {
      auto request = s.worker.holdStepsRequest();
      request.setDrainMs(drain_ms);
      request.setHoldMs(hold_ms);
      return request.send().then(
          [task, worker = s.worker](capnp::Response<proto::Worker::HoldStepsResults>&& r) mutable {
            return HeldTask{task, kj::mv(worker), r.getHoldId(), r.getRunning(), r.getHold()};
          });
    });
    holds.add(WithDeadline(env, kj::mv(held), deadline, "holdSteps")
                  .then([](HeldTask h) -> StatusOr<HeldTask> { return h; },
                        [task](kj::Exception&& e) -> StatusOr<HeldTask> {
                          return OnTask(task, StatusFromKj(e));
                        }));
  }
  return kj::joinPromises(holds.releaseAsArray())
      .then([&env, what = std::move(what), body = kj::mv(body)](
                kj::Array<StatusOr<HeldTask>> answers) mutable -> kj::Promise<Reports> {
        auto held = std::make_shared<std::vector<HeldTask>>();
        Status failed;
        for (auto& a : answers) {
          if (!a.ok()) {
            if (failed.ok()) failed = a.status().WithContext("holding the steps for " + what);
            continue;
          }
          if (a->running > 0 && env.logger) {
            env.logger->warn("{}: {} step(s) of {} still running after {} ms; going on without "
                             "them (a sync replica waiting for its token?)",
                             what, a->running, a->task, kDrain / kj::MILLISECONDS);
          }
          held->push_back(std::move(a).value());
        }
        kj::Promise<Reports> done =
            failed.ok() ? body() : kj::Promise<Reports>(KjFromStatus(failed));
        return done.then(
            [&env, held](Reports r) {
              return ReleaseAll(env, *held).then([r = std::move(r)]() mutable { return r; });
            },
            [&env, held](kj::Exception&& e) {
              return ReleaseAll(env, *held).then([e = kj::mv(e)]() mutable -> Reports {
                kj::throwFatalException(kj::mv(e));
              });
            });
      });
}

// Best effort, and bounded by `deadline` (at least a second from now): `action`
// on each of `tasks`, for a save that cannot complete (revert, discard) or
// that did (prune). What fails is logged, not raised: a pending part left
// behind is never restored, and the next prune or the task's restart
// deletes it.
kj::Promise<void> FinishOn(TaskEnv& env, const std::vector<std::string>& tasks, int64_t step,
                           proto::CheckpointAction action, kj::TimePoint deadline,
                           std::string what) {
  const kj::TimePoint soon = env.peers->timer().now() + 1 * kj::SECONDS;
  return AskTasks(env, tasks, std::max(deadline, soon), what, FinishCall(step, action))
      .then([&env, step, what](kj::Array<StatusOr<TaskCheckpoints>> results) {
        for (auto& r : results) {
          if (!r.ok() && env.logger) {
            env.logger->warn("checkpoint of step {}: {}: {}", step, what, r.status().ToString());
          }
        }
      });
}

kj::Promise<void> FinishEverywhere(TaskEnv& env, int64_t step, proto::CheckpointAction action,
                                   kj::TimePoint deadline, std::string what) {
  return FinishOn(env, env.cluster.TaskNames(), step, action, deadline, std::move(what));
}

// After a commit some task did not answer OK: the tasks that committed
// take theirs back (a task that did not answer may have committed too, but
// then the others' files are gone and no restore takes the step), then
// every task deletes its pending part. Then `failed`.
kj::Promise<Reports> UndoCommit(TaskEnv& env, int64_t step, kj::TimePoint deadline,
                                const kj::Array<StatusOr<TaskCheckpoints>>& committed,
                                Status failed) {
  std::vector<std::string> tasks;
  for (const auto& r : committed) {
    if (r.ok() && !r->directory.empty()) tasks.push_back(r->task);
  }
  return FinishOn(env, tasks, step, proto::CheckpointAction::REVERT, deadline,
                  "taking back the commits")
      .then([&env, step, deadline]() {
        return FinishEverywhere(env, step, proto::CheckpointAction::DISCARD, deadline,
                                "discarding the parts written");
      })
      .then([failed = std::move(failed)]() -> Reports {
        ThrowIfError(failed);
        return {};
      });
}

// The save of checkpoint `step` once the steps are held: every task writes
// its part as a pending file; only when every task has, every task commits
// it. A part some task could not write makes the others discard theirs, and
// a commit some task could not make (or answer) makes the others take
// theirs back, so nothing of the step is left to be taken for complete; the
// error names each task that failed, with its reason and file. Until every
// task has committed, no task deletes an older checkpoint (pruning comes
// after), so the newest step complete on every task stays there whatever
// fails.
kj::Promise<Reports> WriteAndCommit(TaskEnv& env, int64_t step, kj::TimePoint deadline) {
  const std::string what = "checkpoint of step " + std::to_string(step);
  return AskEveryTask(env, deadline, "saveCheckpoint", SaveCall(step))
      .then([&env, step, deadline, what](
                kj::Array<StatusOr<TaskCheckpoints>> written) -> kj::Promise<Reports> {
        StatusOr<Reports> parts = Gather(kj::mv(written), "writing the " + what);
        if (!parts.ok()) {
          return FinishEverywhere(env, step, proto::CheckpointAction::DISCARD, deadline,
                                  "discarding the parts written")
              .then([failed = parts.status()]() -> Reports { ThrowIfError(failed); return {}; });
        }
        if (!AnyDirectory(*parts)) ThrowIfError(NoCheckpointDir(env.cluster.TaskNames()));
        return AskEveryTask(env, deadline, "finishCheckpoint",
                            FinishCall(step, proto::CheckpointAction::COMMIT))
            .then([&env, step, deadline, what](
                      kj::Array<StatusOr<TaskCheckpoints>> committed) -> kj::Promise<Reports> {
              kj::Array<StatusOr<TaskCheckpoints>> answers =
                  KJ_MAP(r, committed) -> StatusOr<TaskCheckpoints> { return r; };
              StatusOr<Reports> reports = Gather(kj::mv(committed), "committing the " + what);
              if (reports.ok()) return std::move(reports).value();
              return UndoCommit(env, step, deadline, answers, reports.status());
            });
      });
}

}  // namespace

kj::Promise<std::vector<TaskCheckpoints>> SaveClusterCheckpoint(TaskEnv& env,
                                                                std::optional<int64_t> step,
                                                                kj::TimePoint deadline) {
  if (step.has_value() && *step < 0) {
    return KjFromStatus(errors::InvalidArgument("checkpoint step must be >= 0, not ", *step));
  }
  // Under the hold the global step stands still: a checkpoint saved without
  // a step is named for the step every task's file holds.
  auto at = std::make_shared<int64_t>(-1);  // the step, once known
  return WithStepsHeld(env, deadline, "saving a checkpoint",
                       [&env, step, deadline, at]() {
                         kj::Promise<int64_t> named = step.has_value()
                                                          ? kj::Promise<int64_t>(*step)
                                                          : ReadGlobalStep(env, deadline);
                         return named.then([&env, deadline, at](int64_t s) {
                           *at = s;
                           return WriteAndCommit(env, s, deadline);
                         });
                       })
      .then(
          [&env, deadline, at](Reports reports) {
            env.metrics.cluster_checkpoints.Saved(std::chrono::system_clock::now());
            // Outside the hold: retention does not keep the steps waiting.
            return FinishEverywhere(env, *at, proto::CheckpointAction::PRUNE, deadline,
                                    "deleting older checkpoints")
                .then([reports = std::move(reports)]() mutable { return std::move(reports); });
          },
          [&env](kj::Exception&& e) -> Reports {
            env.metrics.cluster_checkpoints.Failed();
            if (env.logger) {
              env.logger->error("checkpoint not saved; the newest checkpoint complete on every "
                                "task is still the one before: {}",
                                StatusFromKj(e).ToString());
            }
            kj::throwFatalException(kj::mv(e));
          });
}

kj::Promise<std::vector<TaskCheckpoints>> RestoreClusterCheckpoint(TaskEnv& env, int64_t step,
                                                                   kj::TimePoint deadline) {
  if (step < -1) {
    return KjFromStatus(errors::InvalidArgument("checkpoint step must be >= 0 (or -1 for the "
                                                "latest), not ", step));
  }
  if (step >= 0) {
    return WithStepsHeld(env, deadline, "restoring a checkpoint", [&env, step, deadline]() {
      return CallEveryTask(env, deadline, "restoreCheckpoint", RestoreCall(step));
    });
  }
  return CallEveryTask(env, deadline, "listCheckpoints", ListCall(true))
      .then([&env, deadline](Reports lists) {
        auto chosen = ChooseLatest(lists);
        ThrowIfError(chosen.status());
        std::map<std::string, std::vector<std::string>> skipped;
        for (const TaskCheckpoints& l : lists) {
          skipped[l.task] = PassedOver(l, *chosen);
          for (const std::string& s : skipped[l.task]) {
            if (env.logger) env.logger->warn("restoring step {}: passing over {}", *chosen, s);
          }
        }
        const int64_t at = *chosen;
        return WithStepsHeld(env, deadline, "restoring a checkpoint",
                             [&env, deadline, at]() {
                               return CallEveryTask(env, deadline, "restoreCheckpoint",
                                                    RestoreCall(at));
                             })
            .then([skipped = std::move(skipped)](Reports reports) {
              for (TaskCheckpoints& r : reports) {
                auto it = skipped.find(r.task);
                if (it != skipped.end()) r.skipped = it->second;
              }
              return reports;
            });
      });
}

kj::Promise<std::vector<TaskCheckpoints>> ListClusterCheckpoints(TaskEnv& env,
                                                                 kj::TimePoint deadline,
                                                                 bool verify) {
  return CallEveryTask(env, deadline, "listCheckpoints", ListCall(verify));
}

Status FinishCheckpointOnTask(CheckpointManager& checkpoints, TaskMetrics& metrics, int64_t step,
                              proto::CheckpointAction action, TaskCheckpoints& report) {
  switch (action) {
    case proto::CheckpointAction::COMMIT: {
      TFD_ASSIGN_OR_RETURN(CheckpointInfo committed, checkpoints.Commit(step));
      metrics.CheckpointSaved(std::chrono::system_clock::now());
      report.checkpoints.push_back(std::move(committed));
      return OkStatus();
    }
    case proto::CheckpointAction::PRUNE:
      return checkpoints.Prune(step).status();
    case proto::CheckpointAction::DISCARD:
      return checkpoints.Discard(step);
    case proto::CheckpointAction::REVERT:
      return checkpoints.Revert(step);
  }
  return errors::InvalidArgument("finishCheckpoint: unknown action ", static_cast<int>(action));
}

}  // namespace tfd
