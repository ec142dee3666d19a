#include "bench/train_runs.h"

#include <sched.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <barrier>
#include <boost/asio/thread_pool.hpp>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <thread>

#include "api/train_signature.h"
#include "bench/stats.h"
#include "bench/tfd_cluster.h"
#include "common/allowed_cpus.h"
#include "daemon/client/training/signal_stop_hook.h"
#include "daemon/client/training/trainer.h"
#include "daemon/task_host.h"
#include "daemon/tfd_config.h"
#include "daemon/runtime/executor.h"
#include "daemon/runtime/local_session.h"
#include "examples/mnist/mnist_model.h"
#include "kernels/gpu/gpu_device.h"
#include "kernels/register_all.h"

namespace tfd::bench {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
namespace sig = train::signature;

// Long enough for a step on a busy machine, short enough not to look hung.
constexpr std::chrono::milliseconds kStepTimeout = 60s;
// The input must outlast every step a measurement takes; a dataset repeats
// lazily, so a large count costs nothing.
constexpr int64_t kEpochs = 100000;

Status PinTo(const std::vector<int>& cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int cpu : cpus) CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof(set), &set) != 0) {
    return errors::Internal("cannot pin to ", cpus.size(), " CPUs: ", strerror(errno));
  }
  return OkStatus();
}

// The model as examples/mnist builds it for `workers` replicas: the very
// graph `tfctl train` runs, with variables on /job:ps.
StatusOr<GraphDef> ModelGraph(const OpRegistry& registry, const TrainSetup& setup, int workers) {
  examples::MnistOptions o;
  o.model = setup.model;
  o.ps_tasks = setup.ps_tasks();
  o.workers = workers;
  o.epochs = kEpochs;
  o.prefetch = setup.prefetch;
  o.gpu = setup.worker_gpu;
  Scope root = Scope::NewRootScope(registry);
  TFD_RETURN_IF_ERROR(examples::BuildMnist(root, o));
  return root.ToGraphDef();
}

StatusOr<double> LossOf(const std::vector<Tensor>& fetches) {
  if (fetches.size() == 1 && fetches[0].shape().num_elements() == 1) {
    if (fetches[0].dtype() == DType::kFloat32) return fetches[0].scalar<float>();
    if (fetches[0].dtype() == DType::kFloat64) return fetches[0].scalar<double>();
  }
  return errors::Internal("expected the scalar '", sig::kLoss, "' back, got ", fetches.size(),
                          " fetches");
}

struct StepResult {
  StepStats stats;
  double loss = 0;
};
using StepFn = std::function<StatusOr<StepResult>(bool trace)>;

// Warm-up, timed repetitions (counted by `section`), traced steps.
Status TimeSteps(const TrainSetup& o, const StepFn& step, const TimedSection& section,
                 TrainFigures* f) {
  for (int i = 0; i < o.warmup; ++i) TFD_RETURN_IF_ERROR(step(false).status());
  section(true);
  for (int r = 0; r < o.reps; ++r) {
    const auto start = Clock::now();
    for (int i = 0; i < o.steps; ++i) TFD_RETURN_IF_ERROR(step(false).status());
    f->rates.push_back(o.steps / Seconds(Clock::now() - start));
  }
  section(false);
  for (int i = 0; i < o.traced; ++i) {
    const int64_t start = WallMicros();
    TFD_ASSIGN_OR_RETURN(StepResult r, step(true));
    f->phases.push_back(PhasesOf(r.stats, start, WallMicros()));
    f->last_loss = r.loss;
  }
  return OkStatus();
}

// A step as `tfctl train` runs it: a callable prepared once.
StatusOr<StepFn> ClientStep(Client& client) {
  TFD_ASSIGN_OR_RETURN(Client::CallableHandle callable,
                       client.MakeCallable({}, {sig::kLoss}, {sig::kTrain}));
  return StepFn([&client, callable](bool trace) -> StatusOr<StepResult> {
    TFD_ASSIGN_OR_RETURN(auto out, client.RunCallable(callable, {},
                                                      {.timeout = kStepTimeout, .trace = trace}));
    TFD_ASSIGN_OR_RETURN(double loss, LossOf(out.fetches));
    return StepResult{std::move(out.stats), loss};
  });
}

// Soft placement with GPU workers: the ops without a GPU kernel (and every
// op, on a host without a GPU) run on the worker's CPU.
std::vector<std::string> DaemonFlags(const TrainSetup& o) {
  std::vector<std::string> flags{"--data-dir", o.data_dir};
  if (o.worker_gpu) flags.push_back("--allow-soft-placement");
  return flags;
}

using Jobs = std::vector<std::pair<std::string, std::vector<TaskCpus>>>;

// The ps and worker jobs on `split`'s CPUs; null: every task unpinned.
Jobs JobsOn(const TrainSetup& o, const CpuSplit* split, int workers) {
  std::vector<TaskCpus> ps, worker;
  for (int t = 0; t < o.ps_tasks(); ++t) {
    ps.push_back(split != nullptr ? TaskCpus(split->ps[t]) : TaskCpus(-1));
  }
  for (int t = 0; t < workers; ++t) {
    worker.push_back(split != nullptr ? TaskCpus(split->workers[t]) : TaskCpus(-1));
  }
  return {{"ps", ps}, {"worker", worker}};
}

// This process, then every ps task, then the workers unless this process
// hosts them: what CounterWatch watches, and the names the report gives
// them.
void WatchCluster(const TrainSetup& o, const BenchCluster& cluster, int workers, bool hosted,
                  std::vector<pid_t>* pids, std::vector<std::string>* names) {
  pids->push_back(getpid());
  names->push_back(!hosted ? "client" : workers == 1 ? "client+worker:0" : "client+workers");
  for (int t = 0; t < o.ps_tasks(); ++t) {
    pids->push_back(cluster.Pid("ps", t));
    names->push_back("ps:" + std::to_string(t));
  }
  for (int t = 0; t < (hosted ? 0 : workers); ++t) {
    pids->push_back(cluster.Pid("worker", t));
    names->push_back("worker:" + std::to_string(t));
  }
}

// Where each daemon of `cluster` runs (hosted workers are this process).
std::vector<std::string> DaemonPlacements(const TrainSetup& o, const BenchCluster& cluster,
                                          int workers, bool hosted) {
  std::vector<std::string> out;
  for (int t = 0; t < o.ps_tasks(); ++t) {
    out.push_back("ps:" + std::to_string(t) + ": " + cluster.Placement("ps", t));
  }
  for (int t = 0; t < (hosted ? 0 : workers); ++t) {
    out.push_back("worker:" + std::to_string(t) + ": " + cluster.Placement("worker", t));
  }
  return out;
}

uint64_t PushedBytes(const TaskStatusInfo& s) {
  return s.data_plane.bytes_sent + s.data_plane.bytes_received;
}

// worker:`task` of `cluster` hosted on `io` (pinned as the calling thread
// is), with the daemons' flags and this process's environment
// (TFD_THREADS, say), so the A/B switches apply to it too.
StatusOr<std::unique_ptr<TaskHost>> HostWorker(const TrainSetup& o, const BenchCluster& cluster,
                                               int task, kj::AsyncIoContext& io) {
  std::vector<std::string> flags{"--cluster", cluster.spec().ToJson(), "--job", "worker",
                                 "--task", std::to_string(task), "--log-level", "warn"};
  for (const std::string& flag : DaemonFlags(o)) flags.push_back(flag);
  TFD_ASSIGN_OR_RETURN(TfdConfig config,
                       ParseTfdFlags(flags, [](const char* v) { return std::getenv(v); }));
  auto logger = std::make_shared<spdlog::logger>(
      "worker:" + std::to_string(task), std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
  logger->set_level(spdlog::level::warn);
  return TaskHost::Start(config, io, logger);
}

// Init, then MeasureOneWorker's timed and traced steps through `client`,
// worker:0's master, counting `pids` (f->processes names them).
Status TrainOneWorker(const TrainSetup& o, const GraphDef& graph, Client& client,
                      const std::vector<pid_t>& pids, TrainFigures* f) {
  TFD_RETURN_IF_ERROR(client.CreateSession(graph, kStepTimeout));
  TFD_RETURN_IF_ERROR(client.Run({}, {}, {sig::kInit}, {.timeout = kStepTimeout}).status());
  CounterWatch watch(pids);
  TFD_ASSIGN_OR_RETURN(TaskStatusInfo before, client.GetStatus(kStepTimeout));
  TFD_ASSIGN_OR_RETURN(StepFn step, ClientStep(client));
  TFD_RETURN_IF_ERROR(TimeSteps(o, step, watch.Section(o.reps * o.steps, &f->per_step), f));
  TFD_ASSIGN_OR_RETURN(TaskStatusInfo after, client.GetStatus(kStepTimeout));
  // Every step of the graph moves the same tensors.
  f->bytes_per_step = static_cast<double>(PushedBytes(after) - PushedBytes(before)) /
                      (o.warmup + o.reps * o.steps + o.traced);
  return client.CloseSession();
}

// tfctl train's options when given no flags but --steps (cli/
// train_command.cc): progress every 10 s off a terminal, a checkpoint
// every 600 s when a task keeps them (none here: the policy asks and finds
// none), restores for a model found at a saved step, SIGINT/SIGTERM
// polled. The progress goes nowhere: printing is tfctl's, not the loop's.
training::TrainerOptions TfctlDefaults() {
  training::TrainerOptions options;
  options.step_timeout = kStepTimeout;
  options.progress_every = 10s;
  options.checkpoint_every_seconds = 600;
  options.evaluate = false;
  options.stop_requested = training::StopSignalReason;
  auto step_of = [](const std::vector<TaskCheckpoints>& tasks) -> StatusOr<int64_t> {
    for (const TaskCheckpoints& task : tasks) {
      if (!task.checkpoints.empty()) return task.checkpoints.front().step;
    }
    return errors::NotFound("no task holds the checkpoint");
  };
  options.save_checkpoint = [step_of](Client& client) -> StatusOr<int64_t> {
    TFD_ASSIGN_OR_RETURN(auto tasks, client.SaveCheckpoint(std::nullopt, kStepTimeout));
    return step_of(tasks);
  };
  options.restore_checkpoint = [step_of](Client& client, int64_t step) -> StatusOr<int64_t> {
    TFD_ASSIGN_OR_RETURN(auto tasks, client.RestoreCheckpoint(step, kStepTimeout));
    return step_of(tasks);
  };
  options.cluster_keeps_checkpoints = [](Client& client) -> StatusOr<bool> {
    auto listed = client.ListCheckpoints(kStepTimeout, /*verify=*/false);
    if (listed.ok()) return true;
    if (listed.status().code() == Code::kFailedPrecondition) return false;
    return listed.status();
  };
  return options;
}

// `steps` steps of a Trainer from global step `global`: its steps/s.
StatusOr<double> TrainerRate(Client& client, const GraphDef& graph, int64_t& global,
                             int64_t steps) {
  training::TrainerOptions options = TfctlDefaults();
  options.max_steps = global + steps;
  training::Trainer trainer(client, graph, options);
  TFD_ASSIGN_OR_RETURN(training::TrainResult r, trainer.Run(nullptr));
  if (r.last.local_steps != steps || r.last.seconds <= 0) {
    return errors::Internal("the trainer was to run ", steps, " steps to global step ",
                            options.max_steps, ", ran ", r.last.local_steps, " (", r.stopped, ")");
  }
  global = r.last.global_step;
  return r.last.local_steps / r.last.seconds;
}

// `steps` steps of the bench's loop (ClientStep) in a session of its own.
StatusOr<double> BenchLoopRate(Client& client, const GraphDef& graph, int64_t steps) {
  TFD_RETURN_IF_ERROR(client.CreateSession(graph, kStepTimeout));
  TFD_ASSIGN_OR_RETURN(StepFn step, ClientStep(client));
  const auto start = Clock::now();
  for (int64_t i = 0; i < steps; ++i) TFD_RETURN_IF_ERROR(step(false).status());
  const double rate = steps / Seconds(Clock::now() - start);
  TFD_RETURN_IF_ERROR(client.CloseSession());
  return rate;
}

}  // namespace

StatusOr<CpuSplit> PlaceTasks(const TrainSetup& o, int workers) {
  if (o.cpus_per_task != 0) {
    return SplitCpusByRole(o.cpus, o.ps_tasks(), workers, o.cpus_per_task);
  }
  // Like the hosts of a real cluster: each ps task beside a worker.
  CpuSplit split;
  for (int t = 0; t < o.ps_tasks(); ++t) split.ps.push_back({t % 2 == 0 ? o.cpu_b : o.cpu_a});
  for (int t = 0; t < workers; ++t) split.workers.push_back({t % 2 == 0 ? o.cpu_a : o.cpu_b});
  split.client = {o.cpu_b};
  return split;
}

StatusOr<TrainFigures> MeasureTrainerLoop(const TrainSetup& o) {
  TFD_RETURN_IF_ERROR(PinTo(o.cpus));
  OpRegistry registry;
  TFD_RETURN_IF_ERROR(kernels::RegisterAll(registry));
  TFD_ASSIGN_OR_RETURN(GraphDef graph, ModelGraph(registry, o, 1));
  auto io = kj::setupAsyncIo();
  BenchCluster cluster(o.tfd, JobsOn(o, nullptr, 1), DaemonFlags(o));
  TFD_RETURN_IF_ERROR(cluster.Start(io));
  TFD_ASSIGN_OR_RETURN(auto client, cluster.Connect(io, "worker", 0));
  TrainFigures f;
  int64_t global = 0;
  // The chief's initialization, and the warm-up.
  TFD_RETURN_IF_ERROR(TrainerRate(*client, graph, global, std::max(o.warmup, 1)).status());
  for (int r = 0; r < o.reps; ++r) {
    TFD_ASSIGN_OR_RETURN(double bench, BenchLoopRate(*client, graph, o.steps));
    global += o.steps;
    f.bench_loop_rates.push_back(bench);
    TFD_ASSIGN_OR_RETURN(double trainer, TrainerRate(*client, graph, global, o.steps));
    f.rates.push_back(trainer);
  }
  client.reset();
  TFD_RETURN_IF_ERROR(cluster.Stop());
  return f;
}

StatusOr<TrainFigures> MeasureInProcess(const TrainSetup& o, const std::vector<int>& cpus) {
  TFD_RETURN_IF_ERROR(PinTo(cpus));
  OpRegistry registry;
  TFD_RETURN_IF_ERROR(kernels::RegisterAll(registry));
  TFD_ASSIGN_OR_RETURN(GraphDef graph, ModelGraph(registry, o, 1));
  // Declared before the session so it is destroyed after it (as tfctl run).
  // Sized as tfctl run and tfd size theirs: by the CPUs it was pinned to; on
  // one CPU the kernels run inline, as theirs do.
  boost::asio::thread_pool pool(NumAllowedCpus());
  ResourceMgr resources;
  KernelEnv env;
  env.resources = &resources;
  env.logger = std::make_shared<spdlog::logger>(
      "train_bench", std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
  env.logger->set_level(spdlog::level::warn);  // not the "every node runs here" note
  env.io_dirs = {o.data_dir};
  if (o.worker_gpu) env.gpus = gpu::GpuMemories();
  LocalSession session(registry, env, pool,
                       {.allow_soft_placement = o.worker_gpu,
                        .inline_kernels = InlineKernelsFor(0)});
  TFD_RETURN_IF_ERROR(session.Create(std::move(graph)));
  TFD_RETURN_IF_ERROR(session.Run({}, {}, {sig::kInit}).status());

  StepFn step = [&session](bool trace) -> StatusOr<StepResult> {
    LocalSession::RunOptions options;
    options.trace = trace;
    TFD_ASSIGN_OR_RETURN(auto out, session.Run({}, {sig::kLoss}, {sig::kTrain}, options));
    TFD_ASSIGN_OR_RETURN(double loss, LossOf(out.fetches));
    return StepResult{std::move(out.stats), loss};
  };
  TrainFigures f;
  f.processes = {"self"};
  CounterWatch watch({getpid()});
  TFD_RETURN_IF_ERROR(TimeSteps(o, step, watch.Section(o.reps * o.steps, &f.per_step), &f));
  pool.join();
  return f;
}

StatusOr<TrainFigures> MeasureOneWorker(const TrainSetup& o, bool pinned) {
  TFD_ASSIGN_OR_RETURN(const CpuSplit split, PlaceTasks(o, 1));
  TFD_RETURN_IF_ERROR(PinTo(pinned ? split.client : o.cpus));
  OpRegistry registry;
  TFD_RETURN_IF_ERROR(kernels::RegisterAll(registry));
  TFD_ASSIGN_OR_RETURN(GraphDef graph, ModelGraph(registry, o, 1));
  auto io = kj::setupAsyncIo();
  BenchCluster cluster(o.tfd, JobsOn(o, pinned ? &split : nullptr, 1), DaemonFlags(o));
  TFD_RETURN_IF_ERROR(cluster.Start(io));
  TFD_ASSIGN_OR_RETURN(auto client, cluster.Connect(io, "worker", 0));
  TrainFigures f;
  f.daemons = DaemonPlacements(o, cluster, 1, false);
  std::vector<pid_t> pids;
  WatchCluster(o, cluster, 1, false, &pids, &f.processes);
  TFD_RETURN_IF_ERROR(TrainOneWorker(o, graph, *client, pids, &f));
  client.reset();
  TFD_RETURN_IF_ERROR(cluster.Stop());
  return f;
}

StatusOr<TrainFigures> MeasureHostedWorker(const TrainSetup& o) {
  // This thread, and so the hosted task's pool, on the worker's CPUs.
  TFD_ASSIGN_OR_RETURN(const CpuSplit split, PlaceTasks(o, 1));
  TFD_RETURN_IF_ERROR(PinTo(split.workers[0]));
  OpRegistry registry;
  TFD_RETURN_IF_ERROR(kernels::RegisterAll(registry));
  TFD_ASSIGN_OR_RETURN(GraphDef graph, ModelGraph(registry, o, 1));
  auto io = kj::setupAsyncIo();
  BenchCluster cluster(o.tfd, JobsOn(o, &split, 1), DaemonFlags(o));
  cluster.HostHere("worker", 0);
  TFD_RETURN_IF_ERROR(cluster.Start(io));
  TFD_ASSIGN_OR_RETURN(auto host, HostWorker(o, cluster, 0, io));
  std::unique_ptr<Client> client = host->LocalClient();
  TrainFigures f;
  f.daemons = DaemonPlacements(o, cluster, 1, true);
  std::vector<pid_t> pids;
  WatchCluster(o, cluster, 1, true, &pids, &f.processes);
  TFD_RETURN_IF_ERROR(TrainOneWorker(o, graph, *client, pids, &f));
  client.reset();
  host->Drain();
  host.reset();
  TFD_RETURN_IF_ERROR(cluster.Stop());
  return f;
}

StatusOr<RssFigures> MeasureRss(const TrainSetup& o, int64_t total_steps, int samples) {
  TFD_ASSIGN_OR_RETURN(const CpuSplit split, PlaceTasks(o, 1));
  TFD_RETURN_IF_ERROR(PinTo(split.client));
  OpRegistry registry;
  TFD_RETURN_IF_ERROR(kernels::RegisterAll(registry));
  TFD_ASSIGN_OR_RETURN(GraphDef graph, ModelGraph(registry, o, 1));
  auto io = kj::setupAsyncIo();
  BenchCluster cluster(o.tfd, JobsOn(o, &split, 1), DaemonFlags(o));
  TFD_RETURN_IF_ERROR(cluster.Start(io));
  TFD_ASSIGN_OR_RETURN(auto client, cluster.Connect(io, "worker", 0));
  TFD_RETURN_IF_ERROR(client->CreateSession(graph, kStepTimeout));
  TFD_RETURN_IF_ERROR(client->Run({}, {}, {sig::kInit}, {.timeout = kStepTimeout}).status());
  TFD_ASSIGN_OR_RETURN(StepFn step, ClientStep(*client));
  for (int i = 0; i < o.warmup; ++i) TFD_RETURN_IF_ERROR(step(false).status());

  RssFigures f;
  std::vector<pid_t> pids;
  WatchCluster(o, cluster, 1, false, &pids, &f.processes);
  auto sample = [&](int64_t done) {
    f.steps.push_back(done);
    std::vector<size_t> now;
    for (pid_t pid : pids) now.push_back(RssBytes(pid));
    f.rss.push_back(std::move(now));
  };
  sample(0);
  for (int s = 1; s <= samples; ++s) {
    const int64_t until = total_steps * s / samples;
    for (int64_t done = f.steps.back(); done < until; ++done) {
      TFD_RETURN_IF_ERROR(step(false).status().WithContext("step " + std::to_string(done + 1)));
    }
    sample(until);
  }
  TFD_RETURN_IF_ERROR(client->CloseSession());
  client.reset();
  TFD_RETURN_IF_ERROR(cluster.Stop());
  return f;
}

StatusOr<TrainFigures> MeasureTwoWorkers(const TrainSetup& o, bool hosted) {
  TFD_ASSIGN_OR_RETURN(const CpuSplit split, PlaceTasks(o, 2));
  TFD_RETURN_IF_ERROR(PinTo(split.client));
  OpRegistry registry;
  TFD_RETURN_IF_ERROR(kernels::RegisterAll(registry));
  TFD_ASSIGN_OR_RETURN(GraphDef graph, ModelGraph(registry, o, 2));
  auto io = kj::setupAsyncIo();
  BenchCluster cluster(o.tfd, JobsOn(o, &split, 2), DaemonFlags(o));
  if (hosted) {
    cluster.HostHere("worker", 0);
    cluster.HostHere("worker", 1);
  }
  TFD_RETURN_IF_ERROR(cluster.Start(io));
  if (!hosted) {
    // The chief's job, done once before either replica steps.
    TFD_ASSIGN_OR_RETURN(auto chief, cluster.Connect(io, "worker", 0));
    TFD_RETURN_IF_ERROR(chief->CreateSession(graph, kStepTimeout));
    TFD_RETURN_IF_ERROR(chief->Run({}, {}, {sig::kInit}, {.timeout = kStepTimeout}).status());
    TFD_RETURN_IF_ERROR(chief->CloseSession());
  }

  // Each repetition starts both replicas at one barrier; the main thread
  // takes part so it can bracket the /proc counters around all of them. A
  // replica that fails drops out of the barrier, so nobody waits for it.
  // Hosted, each replica hosts its worker on its own CPUs, and worker:0's
  // replica does the chief's job before a first barrier.
  // The replicas live on until the counters are read after the last
  // repetition: they are summed over this process's threads, and a thread
  // gone by then would take its CPU time with it (a negative figure).
  constexpr int kWorkers = 2;
  std::barrier<> sync(kWorkers + 1);
  std::vector<Status> status(kWorkers);
  std::vector<std::vector<Clock::time_point>> starts(kWorkers), ends(kWorkers);
  std::vector<double> losses(kWorkers);
  auto replica = [&](int task) {
    Status s = [&]() -> Status {
      auto thread_io = kj::setupAsyncIo();
      std::unique_ptr<TaskHost> host;  // before its client, which goes first
      std::unique_ptr<Client> client;
      if (hosted) {
        TFD_RETURN_IF_ERROR(PinTo(split.workers[task]));
        TFD_ASSIGN_OR_RETURN(host, HostWorker(o, cluster, task, thread_io));
        client = host->LocalClient();
        TFD_RETURN_IF_ERROR(client->CreateSession(graph, kStepTimeout));
        if (task == 0) {
          TFD_RETURN_IF_ERROR(
              client->Run({}, {}, {sig::kInit}, {.timeout = kStepTimeout}).status());
        }
        sync.arrive_and_wait();  // the variables are initialized
      } else {
        TFD_ASSIGN_OR_RETURN(client, cluster.Connect(thread_io, "worker", task));
        TFD_RETURN_IF_ERROR(client->CreateSession(graph, kStepTimeout));
      }
      TFD_ASSIGN_OR_RETURN(const StepFn step, ClientStep(*client));
      for (int i = 0; i < o.warmup; ++i) TFD_RETURN_IF_ERROR(step(false).status());
      for (int r = 0; r < o.reps; ++r) {
        sync.arrive_and_wait();
        starts[task].push_back(Clock::now());
        for (int i = 0; i < o.steps; ++i) {
          TFD_ASSIGN_OR_RETURN(StepResult result, step(false));
          losses[task] = result.loss;
        }
        ends[task].push_back(Clock::now());
      }
      sync.arrive_and_wait();  // the last repetition ends ...
      sync.arrive_and_wait();  // ... and the counters have been read
      TFD_RETURN_IF_ERROR(client->CloseSession());
      client.reset();
      if (host) host->Drain();
      return OkStatus();
    }();
    if (!s.ok()) {
      status[task] = s.WithContext("/job:worker/task:" + std::to_string(task));
      sync.arrive_and_drop();
    }
  };
  TrainFigures f;
  f.daemons = DaemonPlacements(o, cluster, kWorkers, hosted);
  std::vector<pid_t> pids;
  WatchCluster(o, cluster, kWorkers, hosted, &pids, &f.processes);
  CounterWatch watch(pids);
  const TimedSection section = watch.Section(kWorkers * o.reps * o.steps, &f.per_step);
  std::vector<std::thread> threads;
  for (int task = 0; task < kWorkers; ++task) threads.emplace_back(replica, task);
  if (hosted) sync.arrive_and_wait();  // the chief's init
  for (int r = 0; r < o.reps; ++r) {
    sync.arrive_and_wait();
    if (r == 0) section(true);
  }
  sync.arrive_and_wait();
  section(false);
  sync.arrive_and_wait();
  for (std::thread& t : threads) t.join();
  for (const Status& s : status) TFD_RETURN_IF_ERROR(s);

  for (int r = 0; r < o.reps; ++r) {
    for (int w = 0; w < kWorkers; ++w) {
      f.worker_rates.push_back(o.steps / Seconds(ends[w][r] - starts[w][r]));
    }
  }
  f.rates = AggregateRates(starts, ends, o.steps);
  f.last_loss = losses[0];
  TFD_RETURN_IF_ERROR(cluster.Stop());
  return f;
}

}  // namespace tfd::bench
