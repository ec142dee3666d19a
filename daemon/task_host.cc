#include "daemon/task_host.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>
#include <spdlog/sinks/stdout_sinks.h>

#include "common/allowed_cpus.h"
#include "common/cpu_features.h"
#include "common/memory_budget.h"
#include "common/size_limits.h"
#include "daemon/log_format.h"
#include "daemon/metrics_page.h"
#include "daemon/runtime/executor.h"
#include "daemon/runtime/pool_names.h"
#include "daemon/runtime/step_deadlines.h"
#include "kernels/gpu/gpu_device.h"
#include "kernels/register_all.h"
#include "tfd_version.h"

namespace tfd {
namespace {

std::string TaskName(const TfdConfig& config) {
  return "/job:" + config.job + "/replica:0/task:" + std::to_string(config.task);
}

// Opens the checkpoint directory and, before the task serves anyone,
// restores the newest checkpoint that verifies: a ps killed and restarted
// comes back with its saved variables. No checkpoint, or none that
// verifies, is logged and the task starts empty; a directory that cannot be
// used is an error.
Status RestoreOnStart(const TfdConfig& config, ResourceMgr& resources,
                      std::shared_ptr<MemoryBudget> memory,
                      const std::shared_ptr<spdlog::logger>& logger,
                      std::unique_ptr<CheckpointManager>& out, bool& restored_variables) {
  CheckpointManager::Options options;
  // Each task in its own subdirectory, so the tasks of a job may share one
  // --checkpoint-dir (a shared file system, or one host's run directory).
  options.dir = std::filesystem::path(config.checkpoint_dir) /
                (config.job + "-" + std::to_string(config.task));
  options.cluster_dir = config.checkpoint_dir;
  options.keep = config.checkpoint_keep;
  options.memory = std::move(memory);  // restored values count like any variable's
  auto opened = CheckpointManager::Open(options, resources, logger);
  if (!opened.ok()) return opened.status().WithContext("checkpoint directory");
  out = std::move(opened).value();
  auto restored = out->Restore(std::nullopt);
  if (restored.ok()) {
    std::string names;
    for (const auto& v : restored->variables) names += (names.empty() ? "" : ", ") + v;
    restored_variables = std::any_of(
        restored->variables.begin(), restored->variables.end(),
        [](const std::string& key) { return key.rfind("@input/", 0) != 0; });
    logger->info("restored on start: step {} from {}, {} variables: {}",
                 restored->checkpoint.step, restored->checkpoint.path, restored->variables.size(),
                 names);
  } else if (restored.status().code() == Code::kNotFound) {
    logger->info("no checkpoint in {} yet: starting without saved variables",
                 options.dir.string());
  } else {
    logger->error("nothing restored on start, starting without saved variables: {}",
                  restored.status().ToString());
  }
  return OkStatus();
}

// How often Drain looks whether the steps have ended, and how long it waits
// for cancelled ones to unwind.
constexpr kj::Duration kDrainPoll = 10 * kj::MILLISECONDS;
constexpr kj::Duration kUnwindBound = 5 * kj::SECONDS;

}  // namespace

TaskHost::TaskHost(PrivateKey, kj::AsyncIoContext& io) : io_(io) {}

std::shared_ptr<spdlog::logger> TaskHost::StderrLogger(const TfdConfig& config) {
  auto logger =
      std::make_shared<spdlog::logger>("tfd", std::make_shared<spdlog::sinks::stderr_sink_mt>());
  logger->set_formatter(MakeLogFormatter(
      config.log_format.value_or(
          DetectLogFormat([](const char* v) { return std::getenv(v); }, STDERR_FILENO)),
      TaskName(config)));
  logger->set_level(spdlog::level::from_str(config.log_level));
  logger->flush_on(spdlog::level::info);
  return logger;
}

StatusOr<std::unique_ptr<TaskHost>> TaskHost::Start(const TfdConfig& config,
                                                    kj::AsyncIoContext& io,
                                                    std::shared_ptr<spdlog::logger> logger) {
  auto host = std::make_unique<TaskHost>(PrivateKey{}, io);
  host->env_.logger = std::move(logger);
  TFD_RETURN_IF_ERROR(host->Build(config));
  return host;
}

Status TaskHost::Build(const TfdConfig& config) {
  TaskEnv& env = env_;
  env.task = TaskName(config);
  env.cluster = config.cluster;
  env.step_timeout = config.step_timeout;
  spin_wait_ = config.spin_wait;
  drain_grace_ = config.drain_grace;
  env.log_device_placement = config.log_device_placement;
  env.allow_soft_placement = config.allow_soft_placement;

  TFD_RETURN_IF_ERROR(kernels::RegisterAll(registry_).WithContext("op registry"));
  kernel_env_.resources = &resources_;
  kernel_env_.logger = env.logger;
  kernel_env_.task = env.task;
  kernel_env_.limits = config.size_limits;
  kernel_env_.compute_threads = config.threads;
  kernel_env_.gpus = gpu::GpuMemories(config.pin_host_buffers ? gpu::HostPool::kPageLocked
                                                              : gpu::HostPool::kPageable);
  if (gpu::GpuDevices().empty()) {
    env.logger->info("no GPU: {}", gpu::GpuUnavailableReason());
  }
  for (const gpu::GpuDevice* d : gpu::GpuDevices()) {
    env.logger->info("{}/device:{}: {}", env.task, d->name(), d->description());
  }
  if (std::string unused = CpuFeaturesUnused(); !unused.empty()) {
    env.logger->warn("kernels built with -Dcpu={} leave this CPU's {} unused: a build with "
                     "-Dcpu=native (or x86-64-v3 for a fleet) runs them several times faster",
                     CpuTarget(), unused);
  }
  kernel_env_.memory = std::make_shared<MemoryBudget>(
      config.memory_budget > 0 ? config.memory_budget : MemoryBudget::DefaultLimit());
  env.logger->info("tensors, graphs' constants and received frames may hold {} "
                   "(--memory-budget), one tensor {} (--max-tensor-bytes)",
                   FormatBytes(kernel_env_.memory->limit()),
                   FormatBytes(kernel_env_.limits.max_tensor_bytes));
  if (!config.data_dir.empty()) kernel_env_.io_dirs.push_back(config.data_dir);
  if (!config.checkpoint_dir.empty()) kernel_env_.io_dirs.push_back(config.checkpoint_dir);
  if (!config.checkpoint_dir.empty()) {
    bool restored_variables = false;
    TFD_RETURN_IF_ERROR(
        RestoreOnStart(config, resources_, kernel_env_.memory, env.logger, checkpoints_,
                       restored_variables));
    env.restored_alone = restored_variables;
    env.checkpoints = checkpoints_.get();
  }
  const int threads = config.threads > 0 ? config.threads : NumAllowedCpus();
  pool_ = std::make_unique<boost::asio::thread_pool>(threads);
  NamePoolThreads(*pool_, threads, "compute");
  // The thread that fires step deadlines, started now rather than by the
  // first step, when a flood of connections might have left no room for it.
  StepDeadlines::Shared();
  inbox_draining_ = inbox_.Run().eagerlyEvaluate(nullptr);
  env.registry = &registry_;
  env.kernel_env = &kernel_env_;
  env.pool = pool_.get();
  env.inline_kernels = InlineKernelsFor(config.threads);
  env.loop = &inbox_;
  env.address = config.listen;

  StartDataPlane(config);

  server_ = std::make_unique<TaskServer>(env, *io_.provider, io_.provider->getTimer(),
                                         config.auth_token, config.server_limits, config.tls);
  try {
    port_ = server_->Listen(config.listen).wait(io_.waitScope);
  } catch (const kj::Exception& e) {
    return errors::Unavailable("cannot listen on ", config.listen, ": ",
                               e.getDescription().cStr());
  }
  if (!config.auth_token_warning.empty()) env.logger->warn("{}", config.auth_token_warning);
  if (config.auth_token.empty() && !config.tls && !IsLoopbackAddress(config.listen)) {
    env.logger->warn("listening on {} beyond loopback without --auth-token-file: anyone who "
                     "can reach it can run graphs",
                     config.listen);
  }
  env.logger->info("listening on {} (port {}{}), {} compute threads{}", config.listen, port_,
                   config.tls ? ", mutual TLS" : "", threads,
                   env.inline_kernels ? "; kernels run on the thread that made them ready "
                                        "(one CPU allowed; --threads 1 keeps a pool)"
                                      : "");
  if (!config.http_listen.empty()) {
    http_ = std::make_unique<HttpEndpoint>(
        *io_.provider, io_.provider->getTimer(),
        HttpEndpoint::Pages{.metrics = [&env] { return RenderMetrics(env, TFD_VERSION); }},
        env.logger);
    try {
      const unsigned http_port = http_->Listen(config.http_listen).wait(io_.waitScope);
      env.logger->info("serving /metrics and /healthz over HTTP on {} (port {})",
                       config.http_listen, http_port);
    } catch (const kj::Exception& e) {
      return errors::Unavailable("cannot listen on ", config.http_listen, " (--http-listen): ",
                                 e.getDescription().cStr());
    }
  }
  return OkStatus();
}

void TaskHost::StartDataPlane(const TfdConfig& config) {
  TaskEnv& env = env_;
  // Shared memory with the tasks of this host when asked for; a UCX that
  // will not start costs speed, not the data plane.
  if (config.data_plane_transports == "shm") {
    auto ucx = UcxWorker::Create(io_.unixEventPort, io_.provider->getTimer(), env.logger);
    if (ucx.ok()) {
      ucx_ = std::move(ucx).value();
    } else {
      env.logger->warn("no shared memory with the tasks of this host ({}): their tensors go "
                       "over streams", ucx.status().ToString());
    }
  }
  data_plane_ = std::make_unique<DataPlane>(
      ucx_.get(), io_.provider->getTimer(),
      DataPlane::Options{.max_held_bytes = config.max_received_bytes},
      [&env](int64_t step_id, const std::string& key, StatusOr<Tensor> tensor) {
        env.rendezvous.Deliver(step_id, key, std::move(tensor));
      },
      env.logger);
  env.data_plane = data_plane_.get();
  env.logger->info("data plane: {}{}, holds at most {} of received tensors "
                   "(--max-received-bytes)",
                   data_plane_->transports(),
                   ucx_ ? std::string(" (UCX ") + ucp_get_version_string() + ")" : "",
                   FormatBytes(config.max_received_bytes));
}

std::unique_ptr<Client> TaskHost::LocalClient() {
  TaskServices services = server_->local();
  auto client = std::make_unique<Client>(io_, kj::Own<RpcConnection>(), kj::mv(services.master),
                                         kj::mv(services.worker), env_.task, env_.cluster);
  // Its waits are the task's: they poll as tfd's main loop would.
  client->set_spin_wait(spin_wait_);
  return client;
}

bool TaskHost::Idle() const {
  return env_.step_gate.running() == 0 && env_.steps.size() == 0;
}

void TaskHost::WaitForSteps(kj::Duration bound, const bool* hurry) {
  kj::Timer& timer = io_.provider->getTimer();
  const kj::TimePoint until = timer.now() + bound;
  while (!Idle() && timer.now() < until && !(hurry != nullptr && *hurry)) {
    timer.afterDelay(kDrainPoll).wait(io_.waitScope);
  }
}

void TaskHost::Drain(kj::Promise<void> cut_short) {
  if (drained_ || server_ == nullptr) return;
  drained_ = true;
  if (http_) http_->SetDraining();  // until ~TaskHost closes the port
  server_->StopAccepting();
  env_.step_gate.Close(errors::Unavailable(env_.task, " is shutting down: it starts no new step"));
  bool hurry = false;
  auto hurried = cut_short.then([&hurry]() { hurry = true; }).eagerlyEvaluate(nullptr);
  WaitForSteps(drain_grace_.count() * kj::MILLISECONDS, &hurry);
  if (!Idle()) {
    env_.logger->warn("cancelling the steps still running: {} of this task's master, {} "
                      "partition(s) here",
                      env_.step_gate.running(), env_.steps.size());
    const Status why = errors::Unavailable(
        env_.task, " is shutting down: the step was cancelled ",
        hurry ? std::string("on a second stop signal")
              : fmt::format("after the drain's grace of {:g} s (--drain-grace)",
                            static_cast<double>(drain_grace_.count()) / 1000));
    // The master's steps end now, each aborted on every task it runs on;
    // the partitions here end as their kernels notice.
    env_.step_gate.CancelAll(why);
    env_.steps.AbortAll(why);
    WaitForSteps(kUnwindBound, nullptr);
    if (!Idle()) {
      env_.logger->error("stopping with steps that did not unwind within {} s: {} of this "
                         "task's master, {} partition(s) here",
                         kUnwindBound / kj::SECONDS, env_.step_gate.running(),
                         env_.steps.size());
    }
  }
  // The answers of the cancelled steps go out before the connections close.
  kj::evalLast([]() {}).wait(io_.waitScope);
}

TaskHost::~TaskHost() {
  // Nothing that a running step touches (the services, the task's peers)
  // may go before the step has ended: a host destroyed without Drain
  // cancels its steps here first.
  Drain(kj::READY_NOW);
  http_.reset();
  server_.reset();
  // Kernels still finishing on the pool find the loop gone: their pushes
  // fail at once instead of waiting for a loop that no longer turns.
  inbox_.Stop();
  if (pool_) pool_->join();
}

}  // namespace tfd
