// Cluster checkpoints: fan out, gather, agree on a step.
#include "daemon/distributed/checkpoint_fanout.h"

#include <algorithm>
#include <functional>
#include <map>
#include <string>

#include "common/tensor_proto.h"
#include "daemon/rpc/checkpoint_wire.h"
#include "daemon/distributed/checkpoint_participants.h"
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

// The answer that leaves `task` out: it failed with `why` (did not answer in
// time, most often) but had nothing to save when this master last heard
// from it.
TaskCheckpoints LeftOut(const std::string& task, const Status& why) {
  TaskCheckpoints r;
  r.task = task;
  r.left_out = why.message() + "; it had nothing to save when this master last heard from it";
  return r;
}

// Sends `call` to the worker of each of `tasks` and gathers each answer or
// error, in that order. A task that may be left out
// (CheckpointParticipants::Optional) is waited for only kOptionalPatience,
// and whatever it fails with is an answer that leaves it out.
kj::Promise<kj::Array<StatusOr<TaskCheckpoints>>> AskTasks(TaskEnv& env,
                                                           const std::vector<std::string>& tasks,
                                                           kj::TimePoint deadline,
                                                           const std::string& method,
                                                           TaskCall call) {
  const kj::TimePoint patience =
      std::min(deadline, env.peers->timer().now() + CheckpointParticipants::kOptionalPatience);
  kj::Vector<kj::Promise<StatusOr<TaskCheckpoints>>> calls;
  for (const std::string& task : tasks) {
    const bool optional = env.checkpoint_participants.Optional(task);
    const kj::TimePoint until = optional ? patience : deadline;
    // A checkpoint is of the tasks that are up: one that is down fails the
    // call now rather than at its deadline.
    auto answer = env.peers->Services(task, until, Peers::Patience::kFailIfDown)
                      .then([call](TaskServices s) {
      return call(s.worker);
    });
    calls.add(WithDeadline(env, kj::mv(answer), until, method)
                  .then([](TaskCheckpoints r) -> StatusOr<TaskCheckpoints> { return r; },
                        [task, optional](kj::Exception&& e) -> StatusOr<TaskCheckpoints> {
                          if (optional) return LeftOut(task, StatusFromKj(e));
                          return OnTask(task, StatusFromKj(e));
                        }));
  }
  return kj::joinPromises(calls.releaseAsArray());
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

// The tasks that took part: every answer but those that left a task out.
std::vector<std::string> TookPart(const Reports& reports) {
  std::vector<std::string> tasks;
  for (const TaskCheckpoints& r : reports) {
    if (r.left_out.empty()) tasks.push_back(r.task);
  }
  return tasks;
}

Reports WereLeftOut(const Reports& reports) {
  Reports out;
  for (const TaskCheckpoints& r : reports) {
    if (!r.left_out.empty()) out.push_back(r);
  }
  return out;
}

// Sends `call` to each of `tasks` and gathers the answers in that order.
// Any failure fails the whole, naming every task that failed.
kj::Promise<Reports> CallTasks(TaskEnv& env, const std::vector<std::string>& tasks,
                               kj::TimePoint deadline, std::string method, TaskCall call) {
  return AskTasks(env, tasks, deadline, method, kj::mv(call))
      .then([&env, method](kj::Array<StatusOr<TaskCheckpoints>> results) {
        StatusOr<Reports> reports = Gather(kj::mv(results), method);
        ThrowIfError(reports.status());
        for (const TaskCheckpoints& r : *reports) env.checkpoint_participants.LearnFromAnswer(r);
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

// The global step, from whichever of `tasks` (those held) holds it.
kj::Promise<int64_t> ReadGlobalStep(TaskEnv& env, const std::vector<std::string>& tasks,
                                    kj::TimePoint deadline) {
  kj::Vector<kj::Promise<StatusOr<std::optional<int64_t>>>> reads;
  for (const std::string& task : tasks) reads.add(ReadGlobalStepOn(env, task, deadline));
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

// Whether `r` has a say in the step a restore of the latest takes: a task
// whose directory holds no checkpoint is new to the job (it grew by a ps
// task), and restores from the other tasks' parts
// (daemon/checkpoint/sliced_restore.h); one whose files all hold nothing
// (a worker without variables) may have been left out of the newest saves.
// Unless no task's file holds anything: then every task with a file has one.
bool HasSay(const TaskCheckpoints& r, bool any_content) {
  if (r.directory.empty() || r.checkpoints.empty()) return false;
  return !any_content || !EveryFileEmpty(r);
}

// The newest step that verifies on every task that has a say (HasSay),
// ranked by its newest write.
StatusOr<int64_t> ChooseLatest(const Reports& lists) {
  struct Good {
    size_t tasks = 0;
    CheckpointInfo newest;
  };
  std::map<int64_t, Good> good;
  size_t with_dir = 0;
  bool any_file = false;
  bool any_content = false;
  for (const TaskCheckpoints& r : lists) {
    if (!r.directory.empty() && !EveryFileEmpty(r)) any_content = true;
  }
  std::string summary;
  for (const TaskCheckpoints& r : lists) {
    if (r.directory.empty()) continue;
    const bool say = HasSay(r, any_content);
    if (say) ++with_dir;
    std::string files;
    for (const CheckpointInfo& c : r.checkpoints) {
      any_file = true;
      files += (files.empty() ? "" : ", ") + std::to_string(c.step) +
               (c.verified ? "" : " (" + c.problem + ")");
      if (!c.verified || !say) continue;
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
  return errors::DataLoss(
      "no checkpoint step verifies on every task with a checkpoint "
      "directory: ",
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

// One task's answer to holdSteps: held, left out (an optional task that did
// not answer in time), or failed.
struct HoldAnswer {
  std::optional<HeldTask> held;
  std::optional<TaskCheckpoints> left_out;
  Status failed;
};

kj::Promise<HoldAnswer> HoldOne(TaskEnv& env, const std::string& task, kj::TimePoint deadline,
                                int64_t drain_ms, int64_t hold_ms) {
  const bool optional = env.checkpoint_participants.Optional(task);
  const kj::TimePoint until =
      optional ? std::min(deadline, env.peers->timer().now() +
                                        CheckpointParticipants::kOptionalPatience)
               : deadline;
  auto held = env.peers->Services(task, until, Peers::Patience::kFailIfDown)
                  .then([task, drain_ms, hold_ms](TaskServices s) {
    auto request = s.worker.holdStepsRequest();
    request.setDrainMs(drain_ms);
    request.setHoldMs(hold_ms);
    return request.send().then(
        [task, worker = s.worker](capnp::Response<proto::Worker::HoldStepsResults>&& r) mutable {
          return HeldTask{task, kj::mv(worker), r.getHoldId(), r.getRunning(), r.getHold()};
        });
  });
  return WithDeadline(env, kj::mv(held), until, "holdSteps")
      .then([](HeldTask h) { return HoldAnswer{std::move(h), std::nullopt, OkStatus()}; },
            [task, optional](kj::Exception&& e) {
              if (optional) return HoldAnswer{std::nullopt, LeftOut(task, StatusFromKj(e)), {}};
              return HoldAnswer{std::nullopt, std::nullopt, OnTask(task, StatusFromKj(e))};
            });
}

// Runs `body` on the tasks held while no step runs anywhere in the cluster:
// every task's master holds its new steps and lets its running ones end
// first (daemon/distributed/step_gate.h), so what each task then snapshots
// or restores is the same cut of the steps. A task with nothing to save
// that does not answer in time is left out (not held: its steps, should
// it run any, are not in the cut), and its answer is added to body's. The
// holds are released afterwards, also when `body` fails; they expire by
// themselves at the deadline.
kj::Promise<Reports> WithStepsHeld(
    TaskEnv& env, kj::TimePoint deadline, std::string what,
    kj::Function<kj::Promise<Reports>(const std::vector<std::string>& held)> body) {
  const kj::TimePoint now = env.peers->timer().now();
  const kj::Duration left = deadline > now ? deadline - now : 0 * kj::SECONDS;
  const int64_t drain_ms = std::min(kDrain, left) / kj::MILLISECONDS;
  // A second past the deadline, so the holds outlast the body; but no more
  // than Worker.holdSteps takes (worker_service.cc: 10 minutes), or a
  // client's 600 s deadline (tfctl's --timeout 600) failed every save.
  constexpr int64_t kMaxHoldMs = 10 * 60 * 1000;
  const int64_t hold_ms = std::min<int64_t>(left / kj::MILLISECONDS + 1000, kMaxHoldMs);
  kj::Vector<kj::Promise<HoldAnswer>> holds;
  for (const std::string& task : env.cluster.TaskNames()) {
    holds.add(HoldOne(env, task, deadline, drain_ms, hold_ms));
  }
  return kj::joinPromises(holds.releaseAsArray())
      .then([&env, what = std::move(what), body = kj::mv(body)](
                kj::Array<HoldAnswer> answers) mutable -> kj::Promise<Reports> {
        auto held = std::make_shared<std::vector<HeldTask>>();
        Reports left_out;
        std::vector<std::string> tasks;
        Status failed;
        for (auto& a : answers) {
          if (a.left_out) left_out.push_back(std::move(*a.left_out));
          if (!a.failed.ok() && failed.ok()) {
            failed = a.failed.WithContext("holding the steps for " + what);
          }
          if (!a.held) continue;
          if (a.held->running > 0 && env.logger) {
            env.logger->warn("{}: {} step(s) of {} still running after {} ms; going on without "
                             "them (a sync replica waiting for its token?)",
                             what, a.held->running, a.held->task, kDrain / kj::MILLISECONDS);
          }
          tasks.push_back(a.held->task);
          held->push_back(std::move(*a.held));
        }
        for (const TaskCheckpoints& l : left_out) {
          if (env.logger) env.logger->warn("{}: left out {}: {}", what, l.task, l.left_out);
        }
        kj::Promise<Reports> done =
            failed.ok() ? body(tasks) : kj::Promise<Reports>(KjFromStatus(failed));
        return done.then(
            [&env, held, left_out = std::move(left_out)](Reports r) mutable {
              for (TaskCheckpoints& l : left_out) r.push_back(std::move(l));
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

// After a commit some task did not answer OK: the tasks that committed
// take theirs back (a task that did not answer may have committed too, but
// then the others' files are gone and no restore takes the step), then
// every task that wrote a part deletes it. Then `failed`.
kj::Promise<Reports> UndoCommit(TaskEnv& env, int64_t step, std::vector<std::string> writers,
                                kj::TimePoint deadline,
                                const kj::Array<StatusOr<TaskCheckpoints>>& committed,
                                Status failed) {
  std::vector<std::string> tasks;
  for (const auto& r : committed) {
    if (r.ok() && !r->directory.empty()) tasks.push_back(r->task);
  }
  return FinishOn(env, tasks, step, proto::CheckpointAction::REVERT, deadline,
                  "taking back the commits")
      .then([&env, step, writers = std::move(writers), deadline]() {
        return FinishOn(env, writers, step, proto::CheckpointAction::DISCARD, deadline,
                        "discarding the parts written");
      })
      .then([failed = std::move(failed)]() -> Reports {
        ThrowIfError(failed);
        return {};
      });
}

// Phase two of WriteAndCommit: the tasks that wrote a part commit it.
kj::Promise<Reports> Commit(TaskEnv& env, int64_t step, Reports parts, kj::TimePoint deadline) {
  const std::string what = "committing the checkpoint of step " + std::to_string(step);
  std::vector<std::string> writers = TookPart(parts);
  return AskTasks(env, writers, deadline, "finishCheckpoint",
                  FinishCall(step, proto::CheckpointAction::COMMIT))
      .then([&env, step, deadline, what, writers, parts = std::move(parts)](
                kj::Array<StatusOr<TaskCheckpoints>> committed) mutable -> kj::Promise<Reports> {
        kj::Array<StatusOr<TaskCheckpoints>> answers =
            KJ_MAP(r, committed) -> StatusOr<TaskCheckpoints> { return r; };
        StatusOr<Reports> reports = Gather(kj::mv(committed), what);
        if (!reports.ok()) {
          return UndoCommit(env, step, writers, deadline, answers, reports.status());
        }
        for (TaskCheckpoints& l : WereLeftOut(parts)) reports->push_back(std::move(l));
        return std::move(reports).value();
      });
}

// The save of checkpoint `step` once `tasks` are held: each writes its part
// as a pending file; only when every one has, each commits it. A part some
// task could not write makes the others discard theirs, and a commit some
// task could not make (or answer) makes the others take theirs back, so
// nothing of the step is left to be taken for complete; the error names
// each task that failed, with its reason and file. Until every task has
// committed, no task deletes an older checkpoint (pruning comes after), so
// the newest step complete on every task stays there whatever fails. What
// each part holds tells which tasks may be left out from now on
// (CheckpointParticipants); a task whose part is empty may be left out of
// the commit already.
kj::Promise<Reports> WriteAndCommit(TaskEnv& env, int64_t step,
                                    const std::vector<std::string>& tasks,
                                    kj::TimePoint deadline) {
  const std::string what = "checkpoint of step " + std::to_string(step);
  return AskTasks(env, tasks, deadline, "saveCheckpoint", SaveCall(step))
      .then([&env, step, tasks, deadline, what](
                kj::Array<StatusOr<TaskCheckpoints>> written) -> kj::Promise<Reports> {
        for (const auto& w : written) {
          if (w.ok()) env.checkpoint_participants.LearnFromPart(*w);
        }
        StatusOr<Reports> parts = Gather(kj::mv(written), "writing the " + what);
        if (!parts.ok()) {
          return FinishOn(env, tasks, step, proto::CheckpointAction::DISCARD, deadline,
                          "discarding the parts written")
              .then([failed = parts.status()]() -> Reports { ThrowIfError(failed); return {}; });
        }
        if (!AnyDirectory(*parts)) ThrowIfError(NoCheckpointDir(env.cluster.TaskNames()));
        return Commit(env, step, std::move(parts).value(), deadline);
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
                       [&env, step, deadline, at](const std::vector<std::string>& held) {
                         kj::Promise<int64_t> named = step.has_value()
                                                          ? kj::Promise<int64_t>(*step)
                                                          : ReadGlobalStep(env, held, deadline);
                         return named.then([&env, deadline, at, held](int64_t s) {
                           *at = s;
                           return WriteAndCommit(env, s, held, deadline);
                         });
                       })
      .then(
          [&env, deadline, at](Reports reports) {
            env.metrics.cluster_checkpoints.Saved(std::chrono::system_clock::now());
            // Outside the hold: retention does not keep the steps waiting.
            return FinishOn(env, TookPart(reports), *at, proto::CheckpointAction::PRUNE,
                            deadline, "deleting older checkpoints")
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
    return WithStepsHeld(env, deadline, "restoring a checkpoint",
                         [&env, step, deadline](const std::vector<std::string>& held) {
                           return CallTasks(env, held, deadline, "restoreCheckpoint",
                                            RestoreCall(step));
                         });
  }
  return ListClusterCheckpoints(env, deadline, true).then([&env, deadline](Reports lists) {
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
                         [&env, deadline, at](const std::vector<std::string>& held) {
                           return CallTasks(env, held, deadline, "restoreCheckpoint",
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
  return CallTasks(env, env.cluster.TaskNames(), deadline, "listCheckpoints", ListCall(verify))
      .then([&env](Reports lists) {
        for (const TaskCheckpoints& l : lists) env.checkpoint_participants.LearnFromList(l);
        return lists;
      });
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
