#include "daemon/distributed/master_service.h"

#include <memory>
#include <optional>
#include <set>

#include "common/graph.h"
#include "common/graph_io.h"
#include "daemon/distributed/checkpoint_fanout.h"
#include "daemon/distributed/init_poll.h"
#include "daemon/rpc/checkpoint_wire.h"
#include "daemon/distributed/master_session.h"
#include "daemon/distributed/on_pool.h"
#include "daemon/distributed/peers.h"
#include "daemon/distributed/request_timeout.h"
#include "daemon/distributed/step_errors.h"
#include "daemon/rpc/kj_status.h"

namespace tfd {
namespace {

// When a call given `timeout_ms` must answer (RequestTimeout: 0 or less is
// the task's step timeout, more than a week a week).
kj::TimePoint DeadlineAfter(TaskEnv& env, int64_t timeout_ms) {
  return env.peers->timer().now() +
         RequestTimeout(timeout_ms, env.step_timeout).count() * kj::MILLISECONDS;
}

// `call`, or DEADLINE_EXCEEDED at `deadline`: a task that is connected but
// answers nothing (stopped, hung) must not hold a barrier that asks every
// task past its deadline.
template <typename T>
kj::Promise<T> AnsweredBy(kj::Promise<T> call, kj::Timer& timer, kj::TimePoint deadline,
                          const char* what) {
  return call.exclusiveJoin(timer.atTime(deadline).then([what]() -> kj::Promise<T> {
    return KjFromStatus(errors::DeadlineExceeded(
        "no answer to ", what, " before the deadline: is the task stopped or overloaded?"));
  }));
}

// One task's variables, or nullopt when it gave no answer by `deadline`.
kj::Promise<std::optional<InitPoll::Listing>> ListedBy(TaskEnv& env, const std::string& task,
                                                       kj::TimePoint deadline) {
  return env.peers->Services(task, deadline)
      .then([&env, deadline](TaskServices s) {
        using Listed = capnp::Response<proto::Worker::ListVariablesResults>;
        return AnsweredBy<Listed>(s.worker.listVariablesRequest().send(), env.peers->timer(),
                                  deadline, "listVariables");
      })
      .then(
          [](capnp::Response<proto::Worker::ListVariablesResults>&& r) {
            InitPoll::Listing out;
            for (auto v : r.getVariables()) out.emplace_back(v.getName().cStr(), v.getInitialized());
            return std::optional<InitPoll::Listing>(std::move(out));
          },
          [](kj::Exception&&) {
            // An unreachable task is reported, not fatal: it may be starting.
            return std::optional<InitPoll::Listing>();
          });
}

// Asks the tasks `poll` names, round after round (init_poll.h), until the
// variables it waits for are initialized or the deadline passes.
kj::Promise<void> PollInitialized(TaskEnv& env, std::shared_ptr<InitPoll> poll,
                                  kj::TimePoint deadline) {
  const auto round_deadline = kj::min(deadline, env.peers->timer().now() + 1 * kj::SECONDS);
  kj::Vector<kj::Promise<void>> answers;
  for (std::string& task : poll->TasksToAsk()) {
    answers.add(ListedBy(env, task, round_deadline)
                    .then([poll, task](std::optional<InitPoll::Listing> listing) {
                      poll->Record(task, std::move(listing));
                    }));
  }
  return kj::joinPromises(answers.releaseAsArray())
      .then([&env, poll, deadline]() mutable -> kj::Promise<void> {
        const InitPoll::Next next = poll->EndRound();
        if (next == InitPoll::Next::kDone) return kj::READY_NOW;
        if (next == InitPoll::Next::kNow) return PollInitialized(env, kj::mv(poll), deadline);
        if (env.peers->timer().now() + 100 * kj::MILLISECONDS >= deadline) {
          std::string list;
          for (auto& w : poll->Waiting()) list += (list.empty() ? "" : ", ") + w;
          return KjFromStatus(errors::DeadlineExceeded("variables still not initialized: ", list));
        }
        return env.peers->timer().afterDelay(100 * kj::MILLISECONDS)
            .then([&env, poll = kj::mv(poll), deadline]() mutable {
              return PollInitialized(env, kj::mv(poll), deadline);
            });
      });
}

// One round that asks every task (InitPoll's first), then: the names no
// task holds initialized, or UNAVAILABLE naming the tasks that did not
// answer, which may hold one initialized.
kj::Promise<std::vector<std::string>> ReportUninitialized(TaskEnv& env,
                                                          std::vector<std::string> names,
                                                          kj::TimePoint deadline) {
  auto poll = std::make_shared<InitPoll>(env.cluster.TaskNames(), std::move(names));
  kj::Vector<kj::Promise<void>> answers;
  for (std::string& task : poll->TasksToAsk()) {
    answers.add(
        ListedBy(env, task, deadline).then([poll, task](std::optional<InitPoll::Listing> listing) {
          poll->Record(task, std::move(listing));
        }));
  }
  return kj::joinPromises(answers.releaseAsArray()).then([poll]() {
    const std::vector<std::string> unanswered = poll->Unanswered();
    if (!unanswered.empty()) {
      std::string list;
      for (const std::string& t : unanswered) list += (list.empty() ? "" : ", ") + t;
      const Status none =
          errors::Unavailable("cannot tell which variables are initialized: no answer from ", list,
                              " before the deadline");
      ThrowIfError(none.WithDetails(StatusDetails{.task = unanswered.front()}));
    }
    return poll->Uninitialized();
  });
}

// Whether a task that did not answer a status call never will while it runs
// as it does: it refused this task's login (another token) or is no task of
// the cluster it was asked as. Asking it again cannot help.
bool RefusedForGood(const Status& s) {
  return s.code() == Code::kUnauthenticated || s.code() == Code::kNotFound;
}

// A task's answer to a status call, or why there was none.
struct StatusAnswer {
  Status status;
  kj::Maybe<capnp::Response<proto::Worker::StatusResults>> response;
};

// Whether `task` answers a status call, trying until `deadline`. A kept
// connection to a task that died since fails the call (and is forgotten by
// Peers): the next try reaches the task restarted meanwhile, so a cluster
// whose ps was killed twice in a row is whole again as soon as it is up.
kj::Promise<StatusAnswer> AnswersBy(Peers& peers, const std::string& task, kj::TimePoint deadline) {
  return peers.Services(task, deadline)
      .then([&peers, deadline](TaskServices s) {
        using Answered = capnp::Response<proto::Worker::StatusResults>;
        return AnsweredBy<Answered>(s.worker.statusRequest().send(), peers.timer(), deadline,
                                    "a status call");
      })
      .then([](capnp::Response<proto::Worker::StatusResults>&& r) {
              return StatusAnswer{OkStatus(), kj::mv(r)};
            },
            [task](kj::Exception&& e) {
              // Peers' own errors name the task already; a call's do not.
              return StatusAnswer{OnTask(task, StatusFromKj(e)), nullptr};
            })
      .then([&peers, task, deadline](StatusAnswer a) -> kj::Promise<StatusAnswer> {
        const Status& s = a.status;
        if (s.ok() || RefusedForGood(s) || peers.timer().now() >= deadline) return kj::mv(a);
        return peers.timer().afterDelay(50 * kj::MILLISECONDS).then([&peers, task, deadline] {
          return AnswersBy(peers, task, deadline);
        });
      });
}

}  // namespace

kj::Promise<void> MasterService::createSession(CreateSessionContext context) {
  auto params = context.getParams();
  const auto timeout = RequestTimeout(params.getOptions().getStepTimeoutMs(), env_.step_timeout);
  // Its place is taken first, so that sessions being made count too.
  auto slot = quota_.TryTake();
  if (slot == nullptr) {
    return KjFromStatus(errors::ResourceExhausted(
        "this client holds ", quota_.held(), " sessions, the most one login may hold "
        "(--max-sessions-per-client ", quota_.limit(), "): close one first"));
  }
  // Read and checked on the pool: a graph's constants may be large, and the
  // loop serves everyone else meanwhile. Bad graphs fail here, not at run;
  // so do constants that do not fit in the memory budget. The request's
  // frame stays charged until the call returns (daemon/rpc/frame_ledger.h),
  // which covers the copy the pool reads.
  auto graph = OwnedCopy(params.getGraph());
  return OnPool<GraphDef>(*env_.pool,
                          [graph, registry = env_.registry, limits = env_.kernel_env->limits,
                           memory = env_.kernel_env->memory]() -> StatusOr<GraphDef> {
                            TFD_ASSIGN_OR_RETURN(
                                GraphDef def,
                                GraphFromProto(graph->getRoot<proto::GraphDef>(), limits, memory));
                            TFD_RETURN_IF_ERROR(Graph::Build(def, *registry).status());
                            return def;
                          })
      .then([this, context, timeout, slot = std::move(slot)](GraphDef def) mutable {
        context.getResults().setSession(
            kj::heap<MasterSession>(env_, local_, std::move(def), timeout, std::move(slot)));
      });
}

kj::Promise<void> MasterService::waitCluster(WaitClusterContext context) {
  context.allowCancellation();
  const auto deadline = DeadlineAfter(env_, context.getParams().getTimeoutMs());
  kj::Vector<kj::Promise<StatusAnswer>> checks;
  const auto tasks = env_.cluster.TaskNames();
  for (const std::string& task : tasks) checks.add(AnswersBy(*env_.peers, task, deadline));
  return kj::joinPromises(checks.releaseAsArray())
      .then([context](kj::Array<StatusAnswer> answers) mutable {
        // When every task that did not answer refused for good, the wait
        // ended early and fails with the first refusal's code: a caller
        // waiting for the cluster must not take it for a deadline and wait
        // again.
        std::string down;
        std::optional<Code> refused;
        bool all_refused = true;
        for (const StatusAnswer& a : answers) {
          if (a.status.ok()) continue;
          down += (down.empty() ? "" : "; ") + a.status.message();
          if (!RefusedForGood(a.status)) {
            all_refused = false;
          } else if (!refused) {
            refused = a.status.code();
          }
        }
        if (!down.empty()) {
          const Code code = all_refused ? *refused : Code::kDeadlineExceeded;
          ThrowIfError(Status(code, "cluster not ready: " + down));
        }
        auto out = context.getResults().initTasks(static_cast<unsigned>(answers.size()));
        for (unsigned i = 0; i < answers.size(); ++i) {
          KJ_IF_MAYBE(r, answers[i].response) { out.setWithCaveats(i, r->getStatus()); }
        }
      });
}

kj::Promise<void> MasterService::waitInitialized(WaitInitializedContext context) {
  context.allowCancellation();
  auto params = context.getParams();
  std::vector<std::string> names;
  for (auto n : params.getNames()) names.emplace_back(n.cStr());
  return PollInitialized(env_, std::make_shared<InitPoll>(env_.cluster.TaskNames(), std::move(names)),
                         DeadlineAfter(env_, params.getTimeoutMs()));
}

namespace {

template <typename Results>
void ReportsToProto(const std::vector<TaskCheckpoints>& reports, Results results) {
  auto list = results.initTasks(static_cast<unsigned>(reports.size()));
  for (unsigned i = 0; i < reports.size(); ++i) TaskCheckpointsToProto(reports[i], list[i]);
}

}  // namespace

kj::Promise<void> MasterService::reportUninitialized(ReportUninitializedContext context) {
  context.allowCancellation();
  auto params = context.getParams();
  std::vector<std::string> names;
  for (auto n : params.getNames()) names.emplace_back(n.cStr());
  return ReportUninitialized(env_, std::move(names), DeadlineAfter(env_, params.getTimeoutMs()))
      .then([context](std::vector<std::string> missing) mutable {
        auto out = context.getResults().initNames(static_cast<unsigned>(missing.size()));
        for (unsigned i = 0; i < missing.size(); ++i) out.set(i, missing[i]);
      });
}

kj::Promise<void> MasterService::saveCheckpoint(SaveCheckpointContext context) {
  context.allowCancellation();
  auto params = context.getParams();
  const std::optional<int64_t> step =
      params.getHasStep() ? std::optional<int64_t>(params.getStep()) : std::nullopt;
  return SaveClusterCheckpoint(env_, step, DeadlineAfter(env_, params.getTimeoutMs()))
      .then([context](std::vector<TaskCheckpoints> reports) mutable {
        ReportsToProto(reports, context.getResults());
      });
}

kj::Promise<void> MasterService::restoreCheckpoint(RestoreCheckpointContext context) {
  context.allowCancellation();
  auto params = context.getParams();
  return RestoreClusterCheckpoint(env_, params.getStep(), DeadlineAfter(env_, params.getTimeoutMs()))
      .then([context](std::vector<TaskCheckpoints> reports) mutable {
        ReportsToProto(reports, context.getResults());
      });
}

kj::Promise<void> MasterService::listCheckpoints(ListCheckpointsContext context) {
  context.allowCancellation();
  return ListClusterCheckpoints(env_, DeadlineAfter(env_, context.getParams().getTimeoutMs()),
                                context.getParams().getVerify())
      .then([context](std::vector<TaskCheckpoints> reports) mutable {
        ReportsToProto(reports, context.getResults());
      });
}

}  // namespace tfd
