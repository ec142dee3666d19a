#include "daemon/distributed/master_session.h"

#include <fmt/format.h>

#include <atomic>
#include <optional>
#include <random>
#include <set>

#include "common/device_name.h"
#include "common/graph.h"
#include "common/graph_io.h"
#include "common/op_registry.h"
#include "daemon/distributed/on_pool.h"
#include "daemon/runtime/partition.h"
#include "daemon/distributed/peers.h"
#include "daemon/distributed/request_timeout.h"
#include "daemon/distributed/step_errors.h"
#include "daemon/runtime/placement.h"
#include "daemon/rpc/tensor_wire.h"
#include "daemon/rpc/trace_wire.h"
#include "kernels/gpu/gpu_device.h"

namespace tfd {
namespace {

// How long an aborted step keeps trying to tell its tasks.
constexpr kj::Duration kAbortGrace = 2 * kj::SECONDS;
// How long after its abort a step waits for the partitions that have not
// answered yet, whose own errors may tell more: a task that answers at all
// answers an abort in a round trip. Well inside the 2 s a client adds to a
// step's timeout (daemon/client), so a step that fails because one task no
// longer answers still reaches its client, naming that task.
constexpr kj::Duration kAnswerAfterAbort = 500 * kj::MILLISECONDS;
// How long close waits for the session's steps to end once it has aborted
// them. A partition that has not answered gets kAnswerAfterAbort from the
// abort, so a step whose tasks answer at all ends well inside this; one
// held by a task that answers nothing (a registration still in flight
// there waits for the step's own deadline) must not hold the close, nor the
// client waiting for it. kAbortGrace: by then its aborts were given up too.
constexpr kj::Duration kCloseGrace = kAbortGrace;

// "session 3 of /job:worker/replica:0/task:0 (incarnation 9f3a...)": unique
// among every session any incarnation of any task opens, so that the tasks
// it registers partitions with can tell its sessions apart.
std::string NewSessionName(const TaskEnv& env) {
  static std::atomic<uint64_t> opened{0};
  return fmt::format("session {} of {} (incarnation {:016x})", ++opened, env.task,
                     env.incarnation);
}

int64_t NewStepId() {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  return static_cast<int64_t>(rng() >> 1);
}

std::string SignatureKey(const std::vector<std::pair<TensorId, Tensor>>& feeds,
                         const std::vector<TensorId>& fetches,
                         const std::vector<std::string>& targets) {
  std::string key;
  for (const auto& [id, t] : feeds) key += id.ToString() + ",";
  key += ";";
  for (const auto& id : fetches) key += id.ToString() + ",";
  key += ";";
  for (const auto& t : targets) key += t + ",";
  return key;
}

}  // namespace

struct MasterSession::StepState {
  int64_t step_id = NewStepId();
  std::shared_ptr<Prepared> prepared;
  std::vector<Status> errors;  // of every partition, in the order they came
  bool aborted = false;
  bool finished = false;
  std::vector<Tensor> fetches;  // from this task's partition
  StepStats local_stats;        // this task's nodes, when traced
  std::vector<StepStats> remote_stats;  // other tasks' nodes, when traced
  std::vector<std::string> restarted;  // in its answer: MasterSession::unreported_restarts_
  // Its place past the step gate: the step counts as running (for a
  // checkpoint's hold, for the task's drain) until the last reference to
  // this state goes, which includes the aborts still being sent.
  kj::Own<StepGate::Ticket> ticket;
  // Fulfilled by Abort. From then on a partition that has not answered has
  // kAnswerAfterAbort to do so, so that one task that no longer answers at all
  // (stopped, hung) cannot hold the step's answer past its abort.
  kj::Own<kj::PromiseFulfiller<void>> on_abort;
  kj::ForkedPromise<void> aborting = nullptr;
  // Set when the session's close aborted the step: what it ends with.
  Status closed;
  // Fulfilled when the step has ended (its call answered or dropped): what
  // close waits for.
  kj::Own<kj::PromiseFulfiller<void>> on_end;
  kj::ForkedPromise<void> ended = nullptr;
};

template <typename Results>
void MasterSession::WriteStepReport(const StepState& step, Results results) {
  WriteTrace(step, results.initTrace(TraceSize(step)));
  if (step.restarted.empty()) return;
  auto restarted = results.initRestarted(static_cast<unsigned>(step.restarted.size()));
  for (unsigned i = 0; i < restarted.size(); ++i) restarted.set(i, step.restarted[i]);
}

// Each run of a callable: the feeds' values in order, nothing else to parse.
class MasterSession::CallableServer final : public CountedServer<proto::Callable> {
 public:
  CallableServer(MasterSession& session, std::vector<TensorId> feeds,
                 std::vector<TensorId> fetches, std::vector<std::string> targets)
      : CountedServer(session.env_.metrics),
        session_(session),
        session_cap_(session.thisCap()),
        feeds_(std::move(feeds)),
        fetches_(std::move(fetches)),
        targets_(std::move(targets)) {
    session_.callables_.insert(this);
  }
  ~CallableServer() { session_.callables_.erase(this); }

  // The session closed: its partitions go now, not when the client drops this.
  void Release() { prepared_ = nullptr; }

 protected:
  kj::Promise<void> run(RunContext context) override {
    return CountStep(session_.env_.metrics.runs, Run(context));
  }

 private:
  kj::Promise<void> Run(RunContext context) {
    context.allowCancellation();
    if (session_.closed_) {
      return KjFromStatus(errors::FailedPrecondition("the callable's session was closed"));
    }
    auto params = context.getParams();
    auto wire = params.getFeeds();
    if (wire.size() != feeds_.size()) {
      return KjFromStatus(errors::InvalidArgument("the callable takes ", feeds_.size(),
                                                  " feeds, not ", wire.size()));
    }
    const KernelEnv& kernel_env = *session_.env_.kernel_env;
    std::vector<Tensor> feeds;
    feeds.reserve(wire.size());
    for (unsigned i = 0; i < wire.size(); ++i) {
      // Charged for as long as the step holds it, as a kernel's output is.
      auto value = TensorFromProto(wire[i], kernel_env.limits.max_tensor_bytes, kernel_env.memory);
      if (!value.ok()) {
        return KjFromStatus(value.status().WithContext("feed '" + feeds_[i].ToString() + "'"));
      }
      feeds.push_back(std::move(value).value());
    }
    const RunFlags flags = RunFlags::From(params.getOptions());
    // The request's message (and its frame's charge) need not wait for the
    // step: the feeds are copied out.
    context.releaseParams();
    if (prepared_ == nullptr) {
      // The first run's values stand in for declared types where the graph
      // cannot say (see RewriteForRun), as for Session.run.
      std::vector<std::pair<TensorId, Tensor>> samples;
      for (size_t i = 0; i < feeds.size(); ++i) samples.emplace_back(feeds_[i], feeds[i]);
      auto prepared = session_.Prepare(samples, fetches_, targets_,
                                       SignatureKey(samples, fetches_, targets_));
      if (!prepared.ok()) return KjFromStatus(prepared.status());
      prepared_ = *std::move(prepared);
    }
    return session_.RunPrepared(prepared_, std::move(feeds), fetches_.size(), flags)
        .then([context](std::shared_ptr<StepState> step) mutable {
          auto results = context.getResults();
          auto out = results.initFetches(static_cast<unsigned>(step->fetches.size()));
          for (unsigned i = 0; i < out.size(); ++i) TensorToWire(step->fetches[i], out[i]);
          WriteStepReport(*step, results);
        });
  }

  MasterSession& session_;
  proto::Session::Client session_cap_;  // keeps session_ alive while this is held
  const std::vector<TensorId> feeds_, fetches_;
  const std::vector<std::string> targets_;
  std::shared_ptr<Prepared> prepared_;  // on the first run
};

MasterSession::MasterSession(TaskEnv& env, PartitionRunner& runner, GraphDef graph,
                             std::chrono::milliseconds step_timeout,
                             std::unique_ptr<Quota::Slot> slot)
    : CountedServer(env.metrics),
      env_(env),
      runner_(runner),
      slot_(std::move(slot)),
      graph_(std::move(graph)),
      step_timeout_(step_timeout),
      presence_(std::make_shared<const std::string>(NewSessionName(env))),
      errors_(env.logger, "a step abort or cleanup"),
      background_(errors_) {
  auto closing = kj::newPromiseAndFulfiller<void>();
  on_close_ = kj::mv(closing.fulfiller);
  closing_ = closing.promise.fork();
  ++env_.sessions;
}

MasterSession::~MasterSession() { --env_.sessions; }

kj::Promise<void> MasterSession::extend(ExtendContext context) {
  auto more = OwnedCopy(context.getParams().getGraph());
  // Extensions apply one after the other, each to the graph the previous
  // one left; the merge is read and checked on the pool (see createSession).
  auto applied = extended_.addBranch().then([this, more]() {
    return OnPool<GraphDef>(*env_.pool,
                            [more, merged = graph_, registry = env_.registry,
                             limits = env_.kernel_env->limits,
                             memory = env_.kernel_env->memory]() mutable -> StatusOr<GraphDef> {
                              TFD_ASSIGN_OR_RETURN(
                                  GraphDef added,
                                  GraphFromProto(more->getRoot<proto::GraphDef>(), limits, memory));
                              TFD_RETURN_IF_ERROR(CheckGraphVersions(added.versions));
                              for (NodeDef& n : added.nodes) merged.nodes.push_back(std::move(n));
                              merged.versions =
                                  CombineGraphVersions(merged.versions, added.versions);
                              TFD_RETURN_IF_ERROR(Graph::Build(merged, *registry).status());
                              return merged;
                            })
        .then([this](GraphDef merged) {
          if (closed_) return;  // what it holds went with close()
          graph_ = std::move(merged);
          prepared_.clear();
        });
  });
  auto result = applied.fork();
  extended_ = result.addBranch().catch_([](kj::Exception&&) {}).fork();
  return result.addBranch();
}

kj::Promise<void> MasterSession::close(CloseContext) {
  if (!closed_) {
    closed_ = true;
    on_close_->fulfill();
    prepared_.clear();  // releases every registered partition not running a step
    presence_.reset();  // what it read on each task is free for another session
    for (CallableServer* c : callables_) c->Release();
    // Its constants leave the memory budget, and its place the client's
    // quota, now: a client may keep a closed session's capability.
    graph_ = GraphDef();
    slot_.reset();
  }
  // As TF1's Session.close: the steps still running are cancelled, on
  // every task, through the step's own abort. A step already aborted (its
  // deadline, a failed partition) keeps its own error. A second close
  // waits for the same steps.
  const std::vector<std::shared_ptr<StepState>> steps(running_.begin(), running_.end());
  for (const auto& step : steps) {
    if (step->aborted) continue;
    step->closed =
        errors::Cancelled("the session was closed while step ", step->step_id, " was running");
    Abort(step, step->closed);
  }
  return StepsEnded();
}

kj::Promise<void> MasterSession::StepsEnded() {
  if (running_.empty()) return kj::READY_NOW;
  kj::Vector<kj::Promise<void>> ended;
  for (const auto& step : running_) ended.add(step->ended.addBranch());
  return kj::joinPromises(ended.releaseAsArray())
      .exclusiveJoin(env_.peers->timer().afterDelay(kCloseGrace));
}

StatusOr<std::shared_ptr<MasterSession::Prepared>> MasterSession::Prepare(
    const std::vector<std::pair<TensorId, Tensor>>& feeds, const std::vector<TensorId>& fetches,
    const std::vector<std::string>& targets, const std::string& key) {
  if (auto it = prepared_.find(key); it != prepared_.end()) return it->second;
  auto prepared = std::make_shared<Prepared>();
  TFD_ASSIGN_OR_RETURN(GraphDef rewritten, RewriteForRun(graph_, *env_.registry, feeds, fetches,
                                                         targets, &prepared->feeds));
  // Feeds enter and fetches leave through the master's own partition.
  for (NodeDef& n : rewritten.nodes) {
    if (n.op == "_Arg" || n.op == "_Retval") n.device = env_.task;
  }
  TFD_ASSIGN_OR_RETURN(Graph graph, Graph::Build(std::move(rewritten), *env_.registry));
  PlacementOptions options;
  options.cluster = env_.cluster;
  TFD_ASSIGN_OR_RETURN(options.master, DeviceName::Parse(env_.task));
  options.logger = env_.logger;
  options.master_gpus = static_cast<int>(env_.kernel_env->gpus.size());
  options.gpus_unavailable = gpu::GpuUnavailableReason();
  options.allow_soft_placement = env_.allow_soft_placement;
  std::optional<Graph> whole;
  if (options.master_gpus > 0) {
    TFD_ASSIGN_OR_RETURN(whole, Graph::Build(graph_, *env_.registry));
    options.whole_graph = &*whole;
  }
  TFD_ASSIGN_OR_RETURN(std::vector<std::string> devices, Place(graph, options));
  if (env_.log_device_placement && env_.logger) {
    for (int id = 0; id < graph.num_nodes(); ++id) {
      const Graph::Node& n = graph.node(id);
      if (n.op()[0] == '_') continue;  // the runtime's own feed/fetch nodes
      env_.logger->info("placement: {} ({}) -> {}", n.name(), n.op(), devices[id]);
    }
  }
  TFD_ASSIGN_OR_RETURN(auto parts, PartitionGraph(graph, devices));
  for (auto& [task, def] : parts) {
    auto part = std::make_unique<Part>();
    part->task = task;
    part->graph = std::move(def);
    part->local = task == env_.task;
    if (part->local) prepared->master_part = part.get();
    prepared->parts.push_back(std::move(part));
  }
  prepared_.emplace(key, prepared);
  return prepared;
}

kj::Promise<void> MasterSession::Register(Part& part, kj::TimePoint deadline) {
  if (part.local) {
    if (part.held) return kj::READY_NOW;
    // Built on the pool, as a registration with another task would be.
    return OnPool<std::shared_ptr<Executor>>(
               *env_.pool,
               [&env = env_, graph = part.graph, session = SessionPresence(presence_)]() {
                 return MakePartitionExecutor(env, graph, env.task, session);
               })
        .then([this, &part](std::shared_ptr<Executor> executor) {
          part.held = std::make_unique<HeldPartition>(env_, std::move(executor));
        });
  }
  if (!presence_) {
    return KjFromStatus(errors::FailedPrecondition("the session was closed before ", part.task,
                                                   " had its partition"));
  }
  const uint64_t connection = env_.peers->ConnectionNumber(part.task);
  if (part.registration != nullptr && part.connection == connection) return kj::READY_NOW;
  part.registration = nullptr;
  part.handle = 0;
  return env_.peers->Services(part.task, deadline, Peers::Patience::kWaitForFirstStart)
      .then([this, &part, deadline](TaskServices services) {
        // A restart is reported; a connection that only dropped (the same
        // incarnation) is not.
        auto [seen, first] = incarnations_.emplace(part.task, services.incarnation);
        if (!first && seen->second != services.incarnation) {
          seen->second = services.incarnation;
          unreported_restarts_.insert(part.task);
        }
        auto request = services.worker.registerGraphRequest();
        // Without default attrs, as graph files are written: a task on an
        // older tfd (of this peer protocol) takes partitions that set
        // nothing it lacks.
        GraphDef wire = part.graph;
        StripDefaultAttrs(*env_.registry, wire);
        GraphToProto(wire, request.initGraph());
        request.setMaster(env_.task);
        request.setSession(*presence_);
        // A task that is connected but does not answer (stopped, hung)
        // fails the step at its deadline, as one that cannot be reached does.
        using Registered = capnp::Response<proto::Worker::RegisterGraphResults>;
        kj::Promise<Registered> sent = request.send();
        return sent.exclusiveJoin(env_.peers->timer().atTime(deadline).then(
            []() -> kj::Promise<Registered> {
              // The handler below names the task.
              return KjFromStatus(errors::DeadlineExceeded(
                  "no answer to the registration of its partition before the step's deadline: "
                  "is the task stopped or overloaded?"));
            }));
      })
      .then(
          [&part, connection](capnp::Response<proto::Worker::RegisterGraphResults>&& r) {
            part.registration = r.getGraph();
            part.handle = r.getStepChannel();
            part.connection = connection;
          },
          [&part](kj::Exception&& e) {
            Status s = StatusFromKj(e);
            // Peers' own errors already name the task; others get it here.
            kj::throwFatalException(KjFromStatus(OnTask(part.task, s)));
          });
}

kj::Promise<void> MasterSession::RunPart(std::shared_ptr<StepState> step, Part& part,
                                         std::vector<Tensor> feeds, size_t num_fetches,
                                         int64_t timeout_ms, bool trace) {
  kj::Promise<void> ran = nullptr;
  if (part.local) {
    PartitionStep run{.step_id = step->step_id, .timeout_ms = timeout_ms, .trace = trace,
                      .feeds = std::move(feeds), .num_fetches = num_fetches};
    ran = runner_.RunHere(part.held->executor(), std::move(run))
              .then([step](PartitionResult r) {
                step->fetches = std::move(r.fetches);
                step->local_stats = std::move(r.stats);
              });
  } else if (part.registration != nullptr) {
    // One data-plane message each way; feeds and fetches are this task's
    // alone (_Arg and _Retval live here).
    kj::Timer& timer = env_.peers->timer();
    ran = runner_.RunThere(part.task, part.handle, step->step_id, timeout_ms, trace)
              .then([step](StepStats stats) {
                if (!stats.nodes.empty()) step->remote_stats.push_back(std::move(stats));
              })
              .exclusiveJoin(step->aborting.addBranch()
                                 .then([&timer]() { return timer.afterDelay(kAnswerAfterAbort); })
                                 .then([]() {
                                   // RunPart's catch_ names the task.
                                   ThrowIfError(errors::DeadlineExceeded(
                                       "no answer within ", kAnswerAfterAbort / kj::MILLISECONDS,
                                       " ms of the step's abort: is the task stopped or "
                                       "overloaded?"));
                                 }));
  } else {
    // Another step of this signature lost the task since it was registered.
    ran = KjFromStatus(errors::Unavailable(part.task, " went away before step ", step->step_id,
                                           " could start there"));
  }
  return ran
      .catch_([this, step, &part](kj::Exception&& e) {
        const Status s = OnTask(part.task, StatusFromKj(e));
        if (!part.local && s.code() == Code::kUnavailable) {
          env_.peers->Forget(part.task);
          part.registration = nullptr;
          part.handle = 0;
        }
        // The first error aborts the step; which one is reported is
        // decided once every partition has answered (MostTelling).
        step->errors.push_back(s);
        Abort(step, s);
      })
      // KJ runs a continuation only when someone pulls on it, and a join
      // pulls only once every branch is done: without this, a failed
      // partition would abort the others only after they had finished (or
      // hit their deadline) anyway.
      .eagerlyEvaluate(nullptr);
}

void MasterSession::Abort(const std::shared_ptr<StepState>& step, const Status& why) {
  if (step->aborted) return;
  step->aborted = true;
  if (step->on_abort) step->on_abort->fulfill();
  kj::Timer& timer = env_.peers->timer();
  const auto deadline = timer.now() + kAbortGrace;
  for (const auto& part : step->prepared->parts) {
    const int64_t step_id = step->step_id;
    const std::string code(CodeName(why.code())), message = why.message();
    const std::string details = EncodeStatusDetails(why.details());
    // A task that is gone has nothing to abort: no waiting for it to start.
    background_.add(env_.peers->Services(part->task, deadline, Peers::Patience::kFailIfDown)
                        .then([step_id, code, message, details](TaskServices s) {
                          auto request = s.worker.abortStepRequest();
                          request.setStepId(step_id);
                          request.setCode(code);
                          request.setMessage(message);
                          if (!details.empty()) request.setDetails(details);
                          return request.send().ignoreResult();
                        })
                        .exclusiveJoin(timer.atTime(deadline))
                        .catch_([](kj::Exception&&) {})
                        .attach(std::shared_ptr<StepState>(step)));
  }
}

kj::Promise<void> MasterSession::makeCallable(MakeCallableContext context) {
  if (closed_) return KjFromStatus(errors::FailedPrecondition("the session was closed"));
  auto params = context.getParams();
  auto parse = [](capnp::List<capnp::Text>::Reader names, const char* what,
                  std::vector<TensorId>& out) -> Status {
    for (auto name : names) {
      auto id = ParseTensorId(name);
      if (!id.ok()) return id.status().WithContext(what);
      out.push_back(std::move(id).value());
    }
    return OkStatus();
  };
  std::vector<TensorId> feeds, fetches;
  Status s = parse(params.getFeeds(), "a callable's feed", feeds);
  if (s.ok()) s = parse(params.getFetches(), "a callable's fetch", fetches);
  if (!s.ok()) return KjFromStatus(s);
  std::vector<std::string> targets;
  for (auto t : params.getTargets()) targets.emplace_back(t.cStr());
  // Names are checked now; placing waits for the first run's values.
  std::set<std::string> nodes;
  for (const NodeDef& n : graph_.nodes) nodes.insert(n.name);
  std::set<TensorId> fed;
  for (const TensorId& id : feeds) {
    if (!nodes.count(id.node)) {
      return KjFromStatus(errors::NotFound("feed '", id.ToString(), "' names no node in the graph"));
    }
    if (!fed.insert(id).second) {
      return KjFromStatus(errors::InvalidArgument("'", id.ToString(), "' is fed twice"));
    }
  }
  for (const TensorId& id : fetches) {
    if (!nodes.count(id.node)) {
      return KjFromStatus(errors::NotFound("fetch '", id.ToString(), "' names no node in the graph"));
    }
  }
  for (const std::string& t : targets) {
    if (!nodes.count(t)) {
      return KjFromStatus(errors::NotFound("target '", t, "' names no node in the graph"));
    }
  }
  context.getResults().setCallable(kj::heap<CallableServer>(*this, std::move(feeds),
                                                            std::move(fetches), std::move(targets)));
  return kj::READY_NOW;
}

kj::Promise<void> MasterSession::run(RunContext context) {
  return CountStep(env_.metrics.runs, Run(context));
}

kj::Promise<void> MasterSession::Run(RunContext context) {
  context.allowCancellation();
  auto params = context.getParams();
  std::vector<std::pair<TensorId, Tensor>> feeds;
  for (auto f : params.getFeeds()) {
    auto id = ParseTensorId(f.getName());
    if (!id.ok()) return KjFromStatus(id.status());
    // Charged for as long as the step holds it, as a kernel's output is.
    auto value = TensorFromProto(f.getTensor(), env_.kernel_env->limits.max_tensor_bytes,
                                 env_.kernel_env->memory);
    if (!value.ok()) return KjFromStatus(value.status().WithContext("feed '" + std::string(f.getName().cStr()) + "'"));
    feeds.emplace_back(std::move(id).value(), std::move(value).value());
  }
  std::vector<TensorId> fetches;
  for (auto f : params.getFetches()) {
    auto id = ParseTensorId(f);
    if (!id.ok()) return KjFromStatus(id.status());
    fetches.push_back(std::move(id).value());
  }
  std::vector<std::string> targets;
  for (auto t : params.getTargets()) targets.emplace_back(t.cStr());
  const RunFlags flags = RunFlags::From(params.getOptions());
  // The request's message (and its frame's charge) need not wait for the
  // step: everything in it is copied out.
  context.releaseParams();

  auto prepared = Prepare(feeds, fetches, targets, SignatureKey(feeds, fetches, targets));
  if (!prepared.ok()) return KjFromStatus(prepared.status());
  std::vector<Tensor> values;
  for (auto& [id, tensor] : feeds) values.push_back(std::move(tensor));
  return RunPrepared(*std::move(prepared), std::move(values), fetches.size(), flags)
      .then([context, fetches = std::move(fetches)](std::shared_ptr<StepState> step) mutable {
        auto results = context.getResults();
        auto out = results.initFetches(static_cast<unsigned>(fetches.size()));
        for (unsigned i = 0; i < out.size(); ++i) {
          out[i].setName(fetches[i].ToString());
          if (i < step->fetches.size()) TensorToWire(step->fetches[i], out[i].initTensor());
        }
        WriteStepReport(*step, results);
      });
}

MasterSession::RunFlags MasterSession::RunFlags::From(proto::RunOptions::Reader options) {
  return {options.getTimeoutMs(), options.getTrace(),
          options.getInputPipeline() ? StepGate::Kind::kInput : StepGate::Kind::kHeld};
}

kj::Promise<std::shared_ptr<MasterSession::StepState>> MasterSession::RunPrepared(
    std::shared_ptr<Prepared> prepared, std::vector<Tensor> feeds, size_t num_fetches,
    RunFlags flags) {
  for (size_t i = 0; i < feeds.size(); ++i) {
    Status s = CheckFeed(prepared->feeds[i], feeds[i]);
    if (!s.ok()) return KjFromStatus(s);
  }
  const int64_t timeout_ms = RequestTimeout(flags.timeout_ms, step_timeout_).count();
  const bool trace = flags.trace;
  const auto deadline = env_.peers->timer().now() + timeout_ms * kj::MILLISECONDS;
  // Past the gate first: a cluster checkpoint being taken holds new steps
  // (daemon/distributed/step_gate.h), at most until this step's deadline;
  // a task that is stopping lets none through.
  KJ_IF_MAYBE (ticket, env_.step_gate.TryEnter(flags.kind)) {
    return RunEntered(kj::mv(*ticket), std::move(prepared), std::move(feeds), num_fetches,
                      timeout_ms, trace, deadline);
  }
  auto entered =
      env_.step_gate.Enter(flags.kind)
          .exclusiveJoin(env_.peers->timer().atTime(deadline).then(
              []() -> kj::Promise<kj::Own<StepGate::Ticket>> {
                return KjFromStatus(errors::DeadlineExceeded(
                    "the step waited past its deadline for a checkpoint of the cluster to finish"));
              }))
          .exclusiveJoin(closing_.addBranch().then([]() -> kj::Promise<kj::Own<StepGate::Ticket>> {
            return KjFromStatus(errors::Cancelled(
                "the session was closed while the step waited for a checkpoint of the cluster"));
          }));
  return entered.then([this, prepared = std::move(prepared), feeds = std::move(feeds), num_fetches,
                       timeout_ms, trace, deadline](kj::Own<StepGate::Ticket> ticket) mutable
                      -> kj::Promise<std::shared_ptr<StepState>> {
    if (closed_) {
      // Its session closed while it waited (let through in the same turn).
      return KjFromStatus(errors::Cancelled("the session was closed before the step started"));
    }
    return RunEntered(kj::mv(ticket), std::move(prepared), std::move(feeds), num_fetches,
                      timeout_ms, trace, deadline);
  });
}

// A step that failed on a task restarted under this session (found when
// the step registered its partition there again) may have failed because
// the task's state started over: a variable uninitialized, a queue empty.
// It is ABORTED, as TF1's master answers a step on a restarted worker, so
// that a trainer opens a new session and initializes or restores again;
// the restart is then reported.
Status MasterSession::RestartedUnder(Status failed) {
  if (failed.ok() || unreported_restarts_.empty()) return failed;
  std::string tasks;
  for (const std::string& t : unreported_restarts_) tasks += (tasks.empty() ? "" : ", ") + t;
  unreported_restarts_.clear();
  const std::string message = tasks +
                              " restarted under this session (its variables and queues started "
                              "over), and the step failed: " +
                              failed.ToString();
  return Status(Code::kAborted, message).WithDetails(failed.details());
}

kj::Promise<std::shared_ptr<MasterSession::StepState>> MasterSession::RunEntered(
    kj::Own<StepGate::Ticket> ticket, std::shared_ptr<Prepared> prepared,
    std::vector<Tensor> feeds, size_t num_fetches, int64_t timeout_ms, bool trace,
    kj::TimePoint deadline) {
  auto step = std::make_shared<StepState>();
  step->prepared = std::move(prepared);
  auto abort = kj::newPromiseAndFulfiller<void>();
  step->on_abort = kj::mv(abort.fulfiller);
  step->aborting = abort.promise.fork();
  auto end = kj::newPromiseAndFulfiller<void>();
  step->on_end = kj::mv(end.fulfiller);
  step->ended = end.promise.fork();
  running_.insert(step);
  // The task stopping (TaskHost::Drain, through StepGate::CancelAll) ends
  // the step now, whatever its partitions wait for: aborted on every task,
  // its client told why.
  auto cancelled = ticket->Cancelled().then(
      []() -> std::shared_ptr<StepState> { KJ_UNREACHABLE; },
      [this, step](kj::Exception&& e) -> std::shared_ptr<StepState> {
        Abort(step, StatusFromKj(e));
        kj::throwFatalException(kj::mv(e));
      });
  step->ticket = kj::mv(ticket);

  kj::Vector<kj::Promise<void>> registrations;
  for (auto& part : step->prepared->parts) registrations.add(Register(*part, deadline));

  kj::Promise<void> registered = kj::joinPromises(registrations.releaseAsArray());
  if (!closed_) {
    // A close stops the wait for a registration (a task that does not
    // answer would hold the step until its deadline); the step's abort
    // then tells every task, as for a step that ran. (A run that comes
    // after the close is refused as before: its graph is gone.)
    registered = registered.exclusiveJoin(closing_.addBranch().then([step]() -> kj::Promise<void> {
      return KjFromStatus(step->closed.ok() ? errors::Cancelled("the session was closed")
                                            : step->closed);
    }));
  }
  auto ran = registered
      .then([this, step, feeds = std::move(feeds), num_fetches, timeout_ms, trace]() mutable {
        kj::Vector<kj::Promise<void>> runs;
        for (auto& part : step->prepared->parts) {
          const bool is_master = part.get() == step->prepared->master_part;
          runs.add(RunPart(step, *part, is_master ? std::move(feeds) : std::vector<Tensor>(),
                           is_master ? num_fetches : 0, timeout_ms, trace));
        }
        return kj::joinPromises(runs.releaseAsArray());
      })
      // The step's deadline aborts it even when no partition fails by
      // itself (a task stopped after its last tensor went out but before it
      // answered): the partitions that have not answered then get
      // kAnswerAfterAbort, and the step's error names them.
      .exclusiveJoin(env_.peers->timer().atTime(deadline).then([this, step]() -> kj::Promise<void> {
        Abort(step, errors::DeadlineExceeded("step ", step->step_id, " passed its deadline"));
        return kj::NEVER_DONE;
      }))
      .then([this, step]() {
        step->finished = true;
        // Its partitions' errors only say what the close's abort made of them.
        if (!step->closed.ok() && !step->errors.empty()) ThrowIfError(step->closed);
        ThrowIfError(RestartedUnder(MostTelling(step->errors)));
        // Told by the first run that succeeds (or by RestartedUnder).
        step->restarted.assign(unreported_restarts_.begin(), unreported_restarts_.end());
        unreported_restarts_.clear();
        return step;
      });
  // A step dropped before it finished — its client cancelled the call or
  // went away, or the drain cancelled it (aborted already) — is aborted
  // everywhere. Each task forgets a step's transfers itself when its
  // partition ends (or the step aborts).
  //
  // Lifetime: this runs wherever `ran` is dropped, and touches the session
  // and the task's peers. The call that holds it keeps the session; the
  // task's peers outlive every step because the task's drain cancels each
  // step through the gate, and waits until it has ended, before it takes
  // its services and peers down (TaskHost::Drain, then ~TaskHost).
  return ran
      .attach(kj::defer([this, step]() {
        if (!step->finished) {
          Abort(step, errors::Cancelled("the client cancelled step ", step->step_id));
        }
        running_.erase(step);
        step->on_end->fulfill();
      }))
      .exclusiveJoin(kj::mv(cancelled));
}

unsigned MasterSession::TraceSize(const StepState& step) {
  size_t total = step.local_stats.nodes.size();
  for (auto& s : step.remote_stats) total += s.nodes.size();
  return static_cast<unsigned>(total);
}

void MasterSession::WriteTrace(const StepState& step, capnp::List<proto::NodeTrace>::Builder out) {
  TraceToProto(step.local_stats, out);
  unsigned k = static_cast<unsigned>(step.local_stats.nodes.size());
  for (auto& s : step.remote_stats) {
    TraceToProto(s, out, k);
    k += static_cast<unsigned>(s.nodes.size());
  }
}

}  // namespace tfd
