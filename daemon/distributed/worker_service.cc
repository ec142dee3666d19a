#include "daemon/distributed/worker_service.h"

#include <boost/asio/post.hpp>
#include <functional>

#include "common/graph.h"
#include "common/graph_io.h"
#include "common/tensor_proto.h"
#include "daemon/rpc/checkpoint_wire.h"
#include "daemon/checkpoint/checkpoint_manager.h"
#include "daemon/distributed/checkpoint_fanout.h"
#include "daemon/runtime/executor.h"
#include "daemon/distributed/on_pool.h"
#include "kernels/gpu/gpu_device.h"
#include "daemon/distributed/partition_run.h"
#include "daemon/distributed/peers.h"
#include "daemon/rpc/kj_status.h"
#include "daemon/rpc/tensor_wire.h"
#include "daemon/rpc/trace_wire.h"
#include "daemon/transport/data_plane.h"
#include "kernels/framework/resource.h"

namespace tfd {
namespace {

// A partition registered here: held, and on offer to its master's runs,
// until the master lets go of the capability. It has no methods of its own:
// the master runs it over the step channel by the offer's handle.
class RegisteredGraphImpl final : public CountedServer<proto::RegisteredGraph> {
 public:
  // `session`: its master session's presence here, kept while registered.
  // `offer`: the partition's place on the step channel, withdrawn with it.
  RegisteredGraphImpl(TaskEnv& env, std::shared_ptr<Executor> executor,
                      std::shared_ptr<const std::string> session,
                      std::unique_ptr<StepChannel::Offer> offer,
                      std::unique_ptr<Quota::Slot> slot)
      : CountedServer(env.metrics),
        partition_(env, std::move(executor)),
        session_(std::move(session)),
        offer_(std::move(offer)),
        slot_(std::move(slot)) {}

 private:
  HeldPartition partition_;
  std::shared_ptr<const std::string> session_;
  std::unique_ptr<StepChannel::Offer> offer_;
  std::unique_ptr<Quota::Slot> slot_;
};

// How long a registration waits to reach its master over the data plane,
// which it needs to answer the master's runs; the master just reached this
// task, so it is up: this is a login's patience (Peers::kLoginTimeout).
constexpr kj::Duration kReachMaster = 10 * kj::SECONDS;

// Longer than any name NewSessionName makes; bounds what a caller can store.
constexpr size_t kMaxSessionName = 256;

}  // namespace

WorkerService::WorkerService(TaskEnv& env, int max_registered_graphs)
    : CountedServer(env.metrics),
      env_(env),
      registered_(max_registered_graphs),
      rendezvous_(env),
      channel_(env, rendezvous_) {}

kj::Promise<void> WorkerService::registerGraph(RegisterGraphContext context) {
  // Read, checked and given its kernels on the pool: constants may be large
  // (each Const kernel holds its value), and the loop serves meanwhile.
  auto params = context.getParams();
  std::string master = params.getMaster();
  const std::string session_name = params.getSession();
  // The master is another task of the cluster: its steps are counted as
  // its replica's, and this task answers them over the data plane.
  if (master == env_.task || !env_.cluster.HasTask(master)) {
    return KjFromStatus(errors::InvalidArgument("registerGraph names master '", master,
                                                "', which is no other task of ", env_.task,
                                                "'s cluster"));
  }
  if (session_name.empty() || session_name.size() > kMaxSessionName) {
    return KjFromStatus(errors::InvalidArgument("registerGraph's session name is ",
                                                session_name.size(), " bytes; 1 to ",
                                                kMaxSessionName, " are accepted"));
  }
  // Its place is taken first, so that registrations under way count too.
  auto slot = registered_.TryTake();
  if (slot == nullptr) {
    const Status full = errors::ResourceExhausted(
        env_.task, " holds ", registered_.held(), " partitions registered by masters, the most "
        "it takes (--max-registered-graphs ", registered_.limit(), ")");
    return KjFromStatus(full.WithDetails({.task = env_.task}));  // named: no second name
  }
  auto session = SessionPresenceFor(session_name);
  auto def = OwnedCopy(params.getGraph());
  using Built = std::shared_ptr<Executor>;
  // The task's env outlives the pool's work; this service may not. The
  // constants are charged as they are decoded, and stay charged while the
  // partition's kernels hold them.
  return OnPool<Built>(*env_.pool,
                       [&env = env_, def, master, weak = SessionPresence(session)]() -> StatusOr<Built> {
                         TFD_ASSIGN_OR_RETURN(GraphDef parsed,
                                              GraphFromProto(def->getRoot<proto::GraphDef>(),
                                                             env.kernel_env->limits,
                                                             env.kernel_env->memory));
                         return MakePartitionExecutor(env, std::move(parsed), master, weak);
                       })
      .then([this, master](Built executor) {
        auto offered = channel_.OfferTo(master, executor, kReachMaster);
        return offered.then([executor](std::unique_ptr<StepChannel::Offer> offer) mutable {
          return std::make_pair(std::move(executor), std::move(offer));
        });
      })
      .then([this, context, session, slot = std::move(slot)](auto built) mutable {
        auto results = context.getResults();
        results.setStepChannel(built.second->handle());
        results.setGraph(kj::heap<RegisteredGraphImpl>(env_, std::move(built.first), session,
                                                       std::move(built.second), std::move(slot)));
      });
}

kj::Promise<PartitionResult> WorkerService::RunHere(std::shared_ptr<Executor> executor,
                                                    PartitionStep step) {
  return RunPartition(env_, rendezvous_, std::move(executor), std::move(step));
}

kj::Promise<StepStats> WorkerService::RunThere(const std::string& task, uint64_t handle,
                                               int64_t step_id, int64_t timeout_ms, bool trace) {
  return channel_.Run(task, handle, step_id, timeout_ms, trace);
}

std::shared_ptr<const std::string> WorkerService::SessionPresenceFor(const std::string& session) {
  std::erase_if(sessions_, [](const auto& entry) { return entry.second.expired(); });
  auto& slot = sessions_[session];
  auto presence = slot.lock();
  if (!presence) {
    presence = std::make_shared<const std::string>(session);
    slot = presence;
  }
  return presence;
}

kj::Promise<void> WorkerService::abortStep(AbortStepContext context) {
  auto params = context.getParams();
  const auto code = CodeFromName(params.getCode().cStr()).value_or(Code::kAborted);
  const capnp::Text::Reader wire = params.getDetails();
  const std::string_view details(wire.cStr(), wire.size());
  const Status why =
      Status(code == Code::kOk ? Code::kAborted : code, params.getMessage().cStr())
          .WithDetails(ParseStatusDetails(details).details);
  env_.rendezvous.Abort(params.getStepId(), why);
  env_.steps.Abort(params.getStepId(), why);
  return kj::READY_NOW;
}

namespace {

// A variable as `tfctl vars` shows it, known through kernels::Resource alone.
struct VariableListing {
  std::string name;       // its name in its container
  std::string full_name;  // "name", or "container/name" outside the default container
  kernels::ResourceDescription description;
  std::shared_ptr<kernels::Resource> resource;
};

std::vector<VariableListing> ListVariables(const ResourceMgr& resources) {
  std::vector<VariableListing> out;
  for (const auto& [key, base] : resources.List()) {
    auto resource = std::dynamic_pointer_cast<kernels::Resource>(base);
    if (resource == nullptr) continue;
    kernels::ResourceDescription d = resource->Describe();
    if (d.kind != kernels::kVariableKind) continue;
    out.push_back({key.name, key.container.empty() ? key.name : key.container + "/" + key.name,
                   std::move(d), std::move(resource)});
  }
  return out;
}

void VariableToProto(const VariableListing& v, const std::string& device,
                     proto::VariableInfo::Builder out) {
  out.setName(v.full_name);
  out.setDtype(DTypeToProto(v.description.dtype));
  ShapeToProto(v.description.shape, out.initShape());
  out.setInitialized(v.description.initialized);
  out.setDevice(device);
  if (v.description.slice) out.setSlice(v.description.slice->ToString());
}

}  // namespace

kj::Promise<void> WorkerService::status(StatusContext context) {
  auto s = context.getResults().initStatus();
  s.setTask(env_.task);
  s.setAddress(env_.address);
  s.setUptimeSeconds(std::chrono::duration<double>(std::chrono::steady_clock::now() - env_.started).count());
  s.setSessions(env_.sessions);
  s.setRegisteredGraphs(env_.registered_graphs);
  s.setVariables(static_cast<uint32_t>(ListVariables(*env_.kernel_env->resources).size()));
  s.setPid(getpid());
  s.setIncarnation(env_.incarnation);
  s.setRestoredAlone(env_.restored_alone);
  const auto& gpus = gpu::GpuDevices();
  auto devices = s.initDevices(1 + static_cast<unsigned>(env_.kernel_env->gpus.size()));
  devices.set(0, env_.cpu_device());
  for (size_t i = 0; i < env_.kernel_env->gpus.size() && i < gpus.size(); ++i) {
    devices.set(1 + i, env_.task + "/device:" + gpus[i]->name() + ": " + gpus[i]->description());
  }
  auto plane = s.initDataPlane();
  plane.setStepsHeld(static_cast<uint32_t>(env_.rendezvous.num_steps()));
  if (env_.data_plane != nullptr) {
    const DataPlane::Stats d = env_.data_plane->stats();
    plane.setTransports(env_.data_plane->transports());
    plane.setPushesSent(d.pushes_sent);
    plane.setBytesSent(d.bytes_sent);
    plane.setPushesReceived(d.pushes_received);
    plane.setBytesReceived(d.bytes_received);
    plane.setPushesRefused(d.pushes_refused);
    plane.setHeldBack(d.held_back);
    plane.setBytesHeld(d.pool.bytes_in_use);
    plane.setPushesAbandoned(d.pushes_abandoned);
    plane.setStepsServed(channel_.steps_served());
  }
  return kj::READY_NOW;
}

kj::Promise<void> WorkerService::listVariables(ListVariablesContext context) {
  const auto vars = ListVariables(*env_.kernel_env->resources);
  auto out = context.getResults().initVariables(static_cast<unsigned>(vars.size()));
  for (unsigned i = 0; i < vars.size(); ++i) VariableToProto(vars[i], env_.cpu_device(), out[i]);
  return kj::READY_NOW;
}

kj::Promise<void> WorkerService::readVariable(ReadVariableContext context) {
  const std::string name = context.getParams().getName();
  for (const VariableListing& v : ListVariables(*env_.kernel_env->resources)) {
    if (v.full_name != name && v.name != name) continue;
    auto results = context.getResults();
    VariableToProto(v, env_.cpu_device(), results.initInfo());
    auto value = v.resource->Read();
    if (value.ok()) TensorToWire(*value, results.initValue());
    return kj::READY_NOW;
  }
  return KjFromStatus(errors::NotFound("no variable '", name, "' on ", env_.task));
}

namespace {

// Checkpoint file work blocks, so it runs on the pool; errors name the task.
kj::Promise<void> OnPoolNamingTask(TaskEnv& env, std::function<Status()> work) {
  return OnPool(*env.pool, [work = std::move(work), task = env.task] {
    return work().WithTask(task);
  });
}

// The answer of a task without a checkpoint dir, or the start of any other.
std::shared_ptr<TaskCheckpoints> NewReport(const TaskEnv& env) {
  auto report = std::make_shared<TaskCheckpoints>();
  report->task = env.task;
  if (env.checkpoints != nullptr) report->directory = env.checkpoints->dir().string();
  return report;
}

}  // namespace

kj::Promise<void> WorkerService::saveCheckpoint(SaveCheckpointContext context) {
  auto report = NewReport(env_);
  if (env_.checkpoints == nullptr) {
    TaskCheckpointsToProto(*report, context.getResults().initResult());
    return kj::READY_NOW;
  }
  const int64_t step = context.getParams().getStep();
  const bool pending = context.getParams().getPending();
  return OnPoolNamingTask(env_, [ckpts = env_.checkpoints, &metrics = env_.metrics, step,
                                 pending, report]() -> Status {
           if (pending) {  // a part of a cluster checkpoint: finishCheckpoint commits it
             TFD_ASSIGN_OR_RETURN(CheckpointInfo written, ckpts->Write(step));
             report->checkpoints.push_back(std::move(written));
             return OkStatus();
           }
           TFD_ASSIGN_OR_RETURN(CheckpointManager::Saved saved, ckpts->Save(step));
           metrics.CheckpointSaved(std::chrono::system_clock::now());
           report->checkpoints.push_back(std::move(saved.checkpoint));
           return OkStatus();
         })
      .then([context, report]() mutable {
        TaskCheckpointsToProto(*report, context.getResults().initResult());
      });
}

kj::Promise<void> WorkerService::finishCheckpoint(FinishCheckpointContext context) {
  auto report = NewReport(env_);
  if (env_.checkpoints == nullptr) {
    TaskCheckpointsToProto(*report, context.getResults().initResult());
    return kj::READY_NOW;
  }
  const int64_t step = context.getParams().getStep();
  const proto::CheckpointAction action = context.getParams().getAction();
  return OnPoolNamingTask(env_, [ckpts = env_.checkpoints, &metrics = env_.metrics, step, action,
                                 report]() -> Status {
           return FinishCheckpointOnTask(*ckpts, metrics, step, action, *report);
         })
      .then([context, report]() mutable {
        TaskCheckpointsToProto(*report, context.getResults().initResult());
      });
}

kj::Promise<void> WorkerService::restoreCheckpoint(RestoreCheckpointContext context) {
  auto report = NewReport(env_);
  if (env_.checkpoints == nullptr) {
    TaskCheckpointsToProto(*report, context.getResults().initResult());
    return kj::READY_NOW;
  }
  const int64_t step = context.getParams().getStep();
  if (step < -1) {
    return KjFromStatus(errors::InvalidArgument("checkpoint step must be >= 0 (or -1 for the "
                                                "latest), not ", step));
  }
  return OnPoolNamingTask(env_, [ckpts = env_.checkpoints, step, report]() -> Status {
           TFD_ASSIGN_OR_RETURN(CheckpointManager::Restored restored,
                                ckpts->Restore(step < 0 ? std::nullopt : std::optional(step)));
           report->checkpoints.push_back(std::move(restored.checkpoint));
           report->variables = std::move(restored.variables);
           report->skipped = std::move(restored.skipped);
           return OkStatus();
         })
      .then([this, context, report]() mutable {
        env_.restored_alone = false;  // back in step with the cluster
        TaskCheckpointsToProto(*report, context.getResults().initResult());
      });
}

kj::Promise<void> WorkerService::listCheckpoints(ListCheckpointsContext context) {
  auto report = NewReport(env_);
  if (env_.checkpoints == nullptr) {
    TaskCheckpointsToProto(*report, context.getResults().initResult());
    return kj::READY_NOW;
  }
  const bool verify = context.getParams().getVerify();
  return OnPoolNamingTask(env_, [ckpts = env_.checkpoints, verify, report]() -> Status {
           TFD_ASSIGN_OR_RETURN(report->checkpoints, ckpts->List(verify));
           return OkStatus();
         })
      .then([context, report]() mutable {
        TaskCheckpointsToProto(*report, context.getResults().initResult());
      });
}

namespace {

// A hold of holdSteps, as its caller's capability: dropping it (or the
// caller's connection ending) releases the hold, so a master that went away
// mid-checkpoint does not freeze this task's steps until holdMs.
class StepHoldImpl final : public proto::StepHold::Server {
 public:
  // `gate` is the task's (TaskEnv), which outlives every capability.
  StepHoldImpl(StepGate& gate, uint64_t id) : gate_(gate), id_(id) {}
  ~StepHoldImpl() { gate_.Release(id_); }  // no-op once released or expired

 private:
  StepGate& gate_;
  const uint64_t id_;
};

}  // namespace

kj::Promise<void> WorkerService::holdSteps(HoldStepsContext context) {
  // A caller that gives up before the answer takes its hold with it
  // (StepGate::Hold).
  context.allowCancellation();
  constexpr int64_t kMaxMs = 10 * 60 * 1000;
  const auto params = context.getParams();
  for (const auto& [name, ms] : {std::pair<const char*, int64_t>{"drainMs", params.getDrainMs()},
                                 {"holdMs", params.getHoldMs()}}) {
    if (ms < 0 || ms > kMaxMs) {
      return KjFromStatus(errors::InvalidArgument("holdSteps: ", name, " must be within 0..",
                                                  kMaxMs, ", not ", ms));
    }
  }
  return env_.step_gate
      .Hold(env_.peers->timer(), params.getDrainMs() * kj::MILLISECONDS,
            params.getHoldMs() * kj::MILLISECONDS)
      .then([this, context](StepGate::Held held) mutable {
        auto results = context.getResults();
        results.setHoldId(held.id);
        results.setRunning(held.running);
        results.setHold(kj::heap<StepHoldImpl>(env_.step_gate, held.id));
      });
}

kj::Promise<void> WorkerService::releaseSteps(ReleaseStepsContext context) {
  env_.step_gate.Release(context.getParams().getHoldId());
  return kj::READY_NOW;
}

}  // namespace tfd
