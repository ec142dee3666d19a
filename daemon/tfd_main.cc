// tfd: one task of a cluster. Serves its master (sessions, barriers) and
// worker (partitions, transfers, variables) over Cap'n Proto RPC until
// SIGTERM or SIGINT.
//
// Exit status: 0 after a clean stop; 1 when the task cannot run (the
// address is taken, ...); 2 for bad flags or configuration.
#include <kj/async-io.h>
#include <kj/async-unix.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/thread_pool.hpp>
#include <cstdio>
#include <thread>

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "common/allowed_cpus.h"
#include "common/memory_budget.h"
#include "common/resource_mgr.h"
#include "common/size_limits.h"
#include "common/thread_name.h"
#include "daemon/checkpoint/checkpoint_manager.h"
#include "daemon/distributed/loop_inbox.h"
#include "daemon/distributed/task_server.h"
#include "daemon/http_endpoint.h"
#include "daemon/metrics_page.h"
#include "daemon/rpc/kj_status.h"
#include "daemon/runtime/executor.h"
#include "daemon/runtime/pool_names.h"
#include "daemon/runtime/step_deadlines.h"
#include "daemon/systemd_notify.h"
#include "daemon/transport/data_plane.h"
#include "daemon/transport/ucx_worker.h"
#include "kernels/gpu/gpu_device.h"
#include "daemon/tfd_config.h"
#include "kernels/register_all.h"
#include "tfd_version.h"

namespace tfd {
namespace {

// Opens the checkpoint directory and, before the task serves anyone,
// restores the newest checkpoint that verifies: a ps killed and restarted
// comes back with its saved variables. False (logged) when the directory
// cannot be used; no checkpoint, or none that verifies, is logged and the
// task starts empty.
bool RestoreOnStart(const TfdConfig& config, ResourceMgr& resources,
                    const std::shared_ptr<spdlog::logger>& logger,
                    std::unique_ptr<CheckpointManager>& out, bool& restored_variables) {
  CheckpointManager::Options options;
  // Each task in its own subdirectory, so the tasks of a job may share one
  // --checkpoint-dir (a shared file system, or one host's run directory).
  options.dir = std::filesystem::path(config.checkpoint_dir) /
                (config.job + "-" + std::to_string(config.task));
  options.keep = config.checkpoint_keep;
  auto opened = CheckpointManager::Open(options, resources, logger);
  if (!opened.ok()) {
    logger->error("checkpoint directory: {}", opened.status().ToString());
    return false;
  }
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
  return true;
}

int Serve(const TfdConfig& config) {
  // Signals must be captured before any thread starts, or a thread without
  // the mask could take them.
  kj::UnixEventPort::captureSignal(SIGTERM);
  kj::UnixEventPort::captureSignal(SIGINT);
  auto io = kj::setupAsyncIo();
  NameThisThread("event loop");

  TaskEnv env;
  env.task = "/job:" + config.job + "/replica:0/task:" + std::to_string(config.task);
  env.cluster = config.cluster;
  env.step_timeout = config.step_timeout;
  env.log_device_placement = config.log_device_placement;
  env.allow_soft_placement = config.allow_soft_placement;
  env.step_channel = config.step_channel;
  env.logger = spdlog::stderr_logger_mt("tfd");
  env.logger->set_formatter(MakeLogFormatter(
      config.log_format.value_or(
          DetectLogFormat([](const char* v) { return std::getenv(v); }, STDERR_FILENO)),
      env.task));
  env.logger->set_level(spdlog::level::from_str(config.log_level));
  env.logger->flush_on(spdlog::level::info);

  // systemd's Type=notify and watchdog (daemon/systemd_notify.h); nothing
  // without $NOTIFY_SOCKET. A bad one is logged: systemd will say the rest.
  std::unique_ptr<SystemdNotifier> systemd;
  if (auto n = SystemdNotifier::FromEnvironment([](const char* v) { return std::getenv(v); });
      n.ok()) {
    systemd = std::move(n).value();
  } else {
    env.logger->error("cannot notify systemd: {}", n.status().ToString());
  }
  auto notify = [&](const std::string& state) {
    if (!systemd) return;
    if (Status s = systemd->Notify(state); !s.ok()) env.logger->warn("{}", s.ToString());
  };

  OpRegistry registry;
  if (Status s = kernels::RegisterAll(registry); !s.ok()) {
    env.logger->error("op registry: {}", s.ToString());
    return 1;
  }
  ResourceMgr resources;
  KernelEnv kernel_env;
  kernel_env.resources = &resources;
  kernel_env.logger = env.logger;
  kernel_env.task = env.task;
  kernel_env.limits = config.size_limits;
  kernel_env.gpus = gpu::GpuMemories();
  if (gpu::GpuDevices().empty()) {
    env.logger->info("no GPU: {}", gpu::GpuUnavailableReason());
  }
  for (const gpu::GpuDevice* d : gpu::GpuDevices()) {
    env.logger->info("{}/device:{}: {}", env.task, d->name(), d->description());
  }
  kernel_env.memory = std::make_shared<MemoryBudget>(
      config.memory_budget > 0 ? config.memory_budget : MemoryBudget::DefaultLimit());
  env.logger->info("kernels' tensors may hold {} (--memory-budget), one tensor {} "
                   "(--max-tensor-bytes)",
                   FormatBytes(kernel_env.memory->limit()),
                   FormatBytes(kernel_env.limits.max_tensor_bytes));
  if (!config.data_dir.empty()) kernel_env.io_dirs.push_back(config.data_dir);
  if (!config.checkpoint_dir.empty()) kernel_env.io_dirs.push_back(config.checkpoint_dir);
  // Declared before the pool, so it outlives any checkpoint work on it.
  std::unique_ptr<CheckpointManager> checkpoints;
  if (!config.checkpoint_dir.empty()) {
    bool restored_variables = false;
    if (!RestoreOnStart(config, resources, env.logger, checkpoints, restored_variables)) return 1;
    env.restored_alone = restored_variables;
    env.checkpoints = checkpoints.get();
  }
  const int threads = config.threads > 0 ? config.threads : NumAllowedCpus();
  boost::asio::thread_pool pool(threads);
  NamePoolThreads(pool, threads, "compute");
  // The thread that fires step deadlines, started now rather than by the
  // first step, when a flood of connections might have left no room for it.
  StepDeadlines::Shared();
  LoopInbox inbox;
  auto inbox_draining = inbox.Run().eagerlyEvaluate(nullptr);
  env.registry = &registry;
  env.kernel_env = &kernel_env;
  env.pool = &pool;
  env.inline_kernels = InlineKernelsFor(config.threads);
  env.loop = &inbox;
  env.address = config.listen;

  // The data plane: tensors pushed to this task land in its rendezvous.
  // --data-plane-transports, else UCX_TLS, else UCX chooses (docs/cli.md).
  auto ucx = UcxWorker::Create(io.unixEventPort, io.provider->getTimer(),
                               {.transports = config.data_plane_transports}, env.logger);
  if (!ucx.ok()) {
    env.logger->error("no data plane: {}", ucx.status().ToString());
    pool.join();
    return 1;
  }
  DataPlane data_plane(**ucx, io.provider->getTimer(),
                       DataPlane::Options{.max_held_bytes = config.max_received_bytes,
                                          .same_host_only = config.tls != nullptr},
                       [&env](int64_t step_id, const std::string& key, StatusOr<Tensor> tensor) {
                         env.rendezvous.Deliver(step_id, key, std::move(tensor));
                       },
                       env.logger);
  env.data_plane = &data_plane;
  env.logger->info("data plane: UCX {} (transports: {}), holds at most {} of received "
                   "tensors (--max-received-bytes)",
                   ucp_get_version_string(), (*ucx)->transports(),
                   FormatBytes(config.max_received_bytes));
  if (config.tls) {
    env.logger->warn("TLS is on: the data plane (UCX, unencrypted) serves only tasks on this "
                     "host; a task on another host is refused rather than sent tensors in "
                     "clear text (docs/operations.md, \"TLS\")");
  }

  int status = 0;
  {
    TaskServer server(env, *io.provider, io.provider->getTimer(), config.auth_token,
                      config.server_limits, config.tls);
    unsigned port = 0;
    try {
      port = server.Listen(config.listen).wait(io.waitScope);
    } catch (const kj::Exception& e) {
      env.logger->error("cannot listen on {}: {}", config.listen, e.getDescription().cStr());
      pool.join();
      return 1;
    }
    if (config.auth_token.empty() && !config.tls && !IsLoopbackAddress(config.listen)) {
      env.logger->warn("listening on {} beyond loopback without --auth-token-file: anyone who "
                       "can reach it can run graphs",
                       config.listen);
    }
    env.logger->info("listening on {} (port {}{}), {} compute threads{}", config.listen, port,
                     config.tls ? ", mutual TLS" : "", threads,
                     env.inline_kernels ? "; kernels run on the thread that made them ready "
                                          "(one CPU allowed; --threads 1 keeps a pool)"
                                        : "");
    // /metrics and /healthz (--http-listen), up before READY=1 so that a
    // probe never finds the task serving RPC but not its health.
    std::unique_ptr<HttpEndpoint> http;
    if (!config.http_listen.empty()) {
      http = std::make_unique<HttpEndpoint>(
          *io.provider, io.provider->getTimer(),
          HttpEndpoint::Pages{.metrics = [&env] { return RenderMetrics(env, TFD_VERSION); }},
          env.logger);
      try {
        const unsigned http_port = http->Listen(config.http_listen).wait(io.waitScope);
        env.logger->info("serving /metrics and /healthz over HTTP on {} (port {})",
                         config.http_listen, http_port);
      } catch (const kj::Exception& e) {
        env.logger->error("cannot listen on {} (--http-listen): {}", config.http_listen,
                          e.getDescription().cStr());
        pool.join();
        return 1;
      }
    }
    notify("READY=1\nSTATUS=serving " + env.task + " on " + config.listen);
    kj::Promise<void> keep_alive =
        systemd ? systemd->KeepAlive(io.provider->getTimer(), env.logger) : kj::NEVER_DONE;

    auto stop = io.unixEventPort.onSignal(SIGTERM).exclusiveJoin(io.unixEventPort.onSignal(SIGINT));
    const siginfo_t info = stop.wait(io.waitScope);
    env.logger->info("received {}: stopping", info.si_signo == SIGTERM ? "SIGTERM" : "SIGINT");
    notify("STOPPING=1\nSTATUS=draining");
    if (http) http->SetDraining();
    server.StopAccepting();
    // In-flight steps get a grace period to finish, then are cancelled, and
    // the services go only once no step uses them.
    auto wait_for_steps = [&](int rounds) {
      for (int i = 0; i < rounds && env.steps.size() > 0; ++i) {
        io.provider->getTimer().afterDelay(100 * kj::MILLISECONDS).wait(io.waitScope);
      }
    };
    wait_for_steps(20);
    if (env.steps.size() > 0) {
      env.logger->warn("cancelling {} step(s) still running", env.steps.size());
      env.steps.AbortAll(errors::Unavailable(env.task, " is shutting down"));
      wait_for_steps(50);
    }
  }
  // Kernels still finishing on the pool find the loop gone: their pushes
  // fail at once instead of waiting for a loop that no longer turns.
  inbox.Stop();
  pool.join();
  env.logger->info("stopped");
  return status;
}

}  // namespace
}  // namespace tfd

int main(int argc, char** argv) {
  auto config = tfd::ParseTfdConfig(argc, argv, [](const char* n) { return std::getenv(n); });
  if (!config.ok()) {
    std::fprintf(stderr, "tfd: error: %s\n", config.status().ToString().c_str());
    return 2;
  }
  if (config->help) {
    std::fputs(config->usage.c_str(), stdout);
    return 0;
  }
  if (config->version) {
    std::printf("tfd %s\n", TFD_VERSION);
    return 0;
  }
  return tfd::Serve(*config);
}
