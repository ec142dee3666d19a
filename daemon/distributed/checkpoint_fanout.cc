// Cluster checkpoints: fan out, gather, agree on a step.
#include "daemon/distributed/checkpoint_fanout.h"

#include <functional>
#include <map>
#include <string>

#include "common/tensor_proto.h"
#include "daemon/rpc/checkpoint_wire.h"
#include "daemon/distributed/peers.h"
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

// `s` with `task` in front, unless it already starts with it (a worker names
// itself in its own errors).
Status OnTask(const std::string& task, const Status& s) {
  return s.message().rfind(task, 0) == 0 ? s : s.WithContext(task);
}

Status NoCheckpointDir(const std::vector<std::string>& tasks) {
  std::string list;
  for (const auto& t : tasks) list += (list.empty() ? "" : ", ") + t;
  return errors::FailedPrecondition("no task of the cluster has a checkpoint directory (asked ",
                                    list, "); start the tasks that hold variables with "
                                    "--checkpoint-dir");
}

// Sends `call` to every task's worker and gathers the answers in cluster
// order. Any failure fails the whole, naming every task that failed.
kj::Promise<Reports> CallEveryTask(TaskEnv& env, kj::TimePoint deadline, std::string method,
                                   TaskCall call) {
  const std::vector<std::string> tasks = env.cluster.TaskNames();
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
  return kj::joinPromises(calls.releaseAsArray())
      .then([tasks, method](kj::Array<StatusOr<TaskCheckpoints>> results) {
        Reports reports;
        std::string failures;
        std::optional<Code> code;
        bool any_dir = false;
        for (auto& r : results) {
          if (!r.ok()) {
            if (!code) code = r.status().code();
            failures += (failures.empty() ? "" : "; ") + r.status().message();
            continue;
          }
          any_dir = any_dir || !r->directory.empty();
          reports.push_back(std::move(r).value());
        }
        if (code) ThrowIfError(Status(*code, method + " failed: " + failures));
        if (!any_dir) ThrowIfError(NoCheckpointDir(tasks));
        return reports;
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

// The newest step that verifies on every task with a dir, ranked by its
// newest write.
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
    ++with_dir;
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

TaskCall SaveCall(int64_t step) {
  return [step](proto::Worker::Client& worker) {
    auto request = worker.saveCheckpointRequest();
    request.setStep(step);
    return request.send().then([](capnp::Response<proto::Worker::SaveCheckpointResults>&& r) {
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

}  // namespace

kj::Promise<std::vector<TaskCheckpoints>> SaveClusterCheckpoint(TaskEnv& env,
                                                                std::optional<int64_t> step,
                                                                kj::TimePoint deadline) {
  if (step.has_value() && *step < 0) {
    return KjFromStatus(errors::InvalidArgument("checkpoint step must be >= 0, not ", *step));
  }
  kj::Promise<int64_t> at = step.has_value() ? kj::Promise<int64_t>(*step)
                                             : ReadGlobalStep(env, deadline);
  return at.then([&env, deadline](int64_t s) {
    return CallEveryTask(env, deadline, "saveCheckpoint", SaveCall(s));
  });
}

kj::Promise<std::vector<TaskCheckpoints>> RestoreClusterCheckpoint(TaskEnv& env, int64_t step,
                                                                   kj::TimePoint deadline) {
  if (step < -1) {
    return KjFromStatus(errors::InvalidArgument("checkpoint step must be >= 0 (or -1 for the "
                                                "latest), not ", step));
  }
  if (step >= 0) return CallEveryTask(env, deadline, "restoreCheckpoint", RestoreCall(step));
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
        return CallEveryTask(env, deadline, "restoreCheckpoint", RestoreCall(*chosen))
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

}  // namespace tfd
