// allreduce_train: synchronous training without a ps (api/all_reduce_training.h)
// among N tfd workers on loopback, each on CPUs of its own, beside torch's
// DistributedDataParallel over gloo on the same model and CPUs
// (bench/torch_ps_mlp.py --model ddp).
//
//   allreduce_train [--tfd PATH] [--workers 4] [--cpus-per-task N|even]
//                   [--steps 30] [--warmup 3] [--layers 784,2048,2048,10] [--json FILE]
//
// The model is examples/mnist's "large" (784-2048-2048-10, ReLU, He-scaled
// truncated-normal weights with a seed, so every replica starts equal;
// softmax cross-entropy, SGD at 0.001) on a fixed random batch of 100 held
// in the graph, so a step is the compute and the all-reduce of every
// gradient. Each replica's step runs as its own session's Run; the figure
// is the steps of all workers over the time the slowest took. Then worker
// 0 alone runs the same graph built for a group of one (its collectives
// are the identity): the compute ceiling the all-reduce is measured
// against.
#include <unistd.h>

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "api/all_reduce_training.h"
#include "bench/bench_flags.h"
#include "bench/figures_json.h"
#include "bench/tfd_cluster.h"
#include "common/allowed_cpus.h"
#include "common/cpu_split.h"
#include "kernels/register_all.h"

#ifndef TFD_DEFAULT_PATH
#define TFD_DEFAULT_PATH "tfd"
#endif

namespace tfd::bench {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr int64_t kBatch = 100;
struct Setup {
  std::string tfd, json_path, cpus_per_task = "even";
  int workers = 4, steps = 30, warmup = 3;
  std::vector<int64_t> layers{784, 2048, 2048, 10};
};

// The command line into `o`; exits on --help or a bad flag.
void ParseFlags(int argc, char** argv, Setup& o) {
  BenchFlags flags("allreduce_train", "synchronous training without a ps among N tfd workers "
                                      "(CollectiveReduce), beside torch DDP");
  flags.TfdBinary(TFD_DEFAULT_PATH, &o.tfd)
      .Int("workers", 1, 100000, "replicas, one tfd worker each", &o.workers)
      .Text("cpus-per-task", "N|even", "each worker on CPUs of its own", &o.cpus_per_task)
      .Int("steps", 1, 100000, "timed steps per worker, after --warmup ones", &o.steps)
      .Int("warmup", 1, 100000, "untimed steps first", &o.warmup)
      .IntList("layers", 1, 100000, "the MLP's widths, two or more", &o.layers)
      .Json(&o.json_path);
  flags.ParseOrExit(argc, argv);
  if (o.layers.size() < 2) {
    std::fprintf(stderr, "allreduce_train: error: INVALID_ARGUMENT: --layers needs two widths "
                         "or more\n");
    std::exit(2);
  }
}

Tensor RandomBatch(int64_t width) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> pixel(0, 1);
  std::vector<float> v(static_cast<size_t>(kBatch * width));
  for (float& x : v) x = pixel(rng);
  return Tensor::FromVector<float>(v, TensorShape{kBatch, width});
}

Tensor RandomLabels(int64_t classes) {
  std::mt19937 rng(2);
  std::vector<int32_t> v(kBatch);
  for (int32_t& y : v) y = static_cast<int32_t>(rng() % static_cast<uint32_t>(classes));
  return Tensor::FromVector<int32_t>(v, TensorShape{kBatch});
}

// The replica's graph for a group of `group_size` workers: "init", "train".
StatusOr<GraphDef> ReplicaGraph(const Setup& o, const OpRegistry& registry, int group_size) {
  const Scope root = Scope::NewRootScope(registry).WithDevice("/job:worker");
  Output x = ops::Const(root.WithOpName("images"), RandomBatch(o.layers.front()));
  const Output labels = ops::Const(root.WithOpName("labels"), RandomLabels(o.layers.back()));
  for (size_t i = 0; i + 1 < o.layers.size(); ++i) {
    const std::string n = std::to_string(i + 1);
    const double stddev = std::sqrt(2.0 / static_cast<double>(o.layers[i]));
    ops::Variable w(root.WithOpName("w" + n), {o.layers[i], o.layers[i + 1]}, DType::kFloat32,
                    ops::Initializer::TruncatedNormal(stddev, static_cast<int64_t>(i + 1)));
    ops::Variable b(root.WithOpName("b" + n), {o.layers[i + 1]}, DType::kFloat32,
                    ops::Initializer::Zeros());
    x = ops::BiasAdd(root, ops::MatMul(root, x, w), b);
    if (i + 2 < o.layers.size()) x = ops::Relu(root, x);
  }
  const Output loss = ops::Mean(root.WithOpName("loss"),
                                ops::SparseSoftmaxCrossEntropyWithLogits(root, x, labels).loss, 0);
  train::AllReduceMinimize(root.WithOpName("train"), train::GradientDescent(0.001), loss,
                           {.group_size = group_size});
  ops::GlobalVariablesInitializer(root);
  TFD_RETURN_IF_ERROR(root.status());
  return root.ToGraphDef();
}

// Worker k: init, warm-up, then the timed steps started together; seconds.
StatusOr<double> RunReplica(const Setup& o, const GraphDef& graph, BenchCluster& cluster, int k,
                            std::barrier<>& together) {
  auto io = kj::setupAsyncIo();
  TFD_ASSIGN_OR_RETURN(auto client, cluster.Connect(io, "worker", k));
  TFD_RETURN_IF_ERROR(client->CreateSession(graph, 300s));
  const Client::RunOptions run{.timeout = 300s};
  TFD_RETURN_IF_ERROR(client->Run({}, {}, {"init"}, run).status());
  for (int i = 0; i < o.warmup; ++i) {
    TFD_RETURN_IF_ERROR(client->Run({}, {}, {"train"}, run).status());
  }
  together.arrive_and_wait();
  const auto start = Clock::now();
  for (int i = 0; i < o.steps; ++i) {
    TFD_RETURN_IF_ERROR(client->Run({}, {}, {"train"}, run).status());
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  TFD_RETURN_IF_ERROR(client->CloseSession());
  return seconds;
}

// Every worker of the group at once; the slowest one's seconds.
StatusOr<double> RunGroup(const Setup& o, const GraphDef& graph, BenchCluster& cluster, int n) {
  std::barrier together(n);
  std::vector<StatusOr<double>> results(n, errors::Internal("not run"));
  std::vector<std::thread> threads;
  for (int k = 0; k < n; ++k) {
    threads.emplace_back([&, k] {
      results[k] = RunReplica(o, graph, cluster, k, together);
      if (!results[k].ok()) together.arrive_and_drop();  // the others are not held
    });
  }
  for (auto& t : threads) t.join();
  double slowest = 0;
  for (int k = 0; k < n; ++k) {
    if (!results[k].ok()) return results[k].status();
    slowest = std::max(slowest, *results[k]);
  }
  return slowest;
}

Status Measure(const Setup& o, BenchCluster& cluster, FiguresJson& json) {
  OpRegistry registry;
  TFD_RETURN_IF_ERROR(kernels::RegisterAll(registry));
  TFD_ASSIGN_OR_RETURN(GraphDef group, ReplicaGraph(o, registry, o.workers));
  TFD_ASSIGN_OR_RETURN(GraphDef alone, ReplicaGraph(o, registry, 1));
  TFD_ASSIGN_OR_RETURN(double together, RunGroup(o, group, cluster, o.workers));
  TFD_ASSIGN_OR_RETURN(double single, RunGroup(o, alone, cluster, 1));
  const double per_worker = o.steps / together, ceiling = o.steps / single;
  std::printf("%d workers, all-reduce: %.2f steps/s per worker, %.2f aggregate\n", o.workers,
              per_worker, per_worker * o.workers);
  std::printf("worker 0 alone (no all-reduce): %.2f steps/s\n", ceiling);
  std::printf("step with all-reduce over step alone: %.2fx\n", ceiling / per_worker);
  for (int k = 0; k < o.workers; ++k) {
    std::printf("worker %d: %s\n", k, cluster.Placement("worker", k).c_str());
  }
  const std::string table = "all-reduce training, " + std::to_string(o.workers) + " workers";
  json.Add(table, "steps/s per worker", "tfd", "steps/s", per_worker);
  json.Add(table, "steps/s, one worker alone", "tfd", "steps/s", ceiling);
  return Status();
}

int Main(int argc, char** argv) {
  Setup o;
  ParseFlags(argc, argv, o);
  auto sets = SplitCpus(o.cpus_per_task, AllowedCpus(), o.workers);
  if (!sets.ok() && o.cpus_per_task == "even") sets = std::vector<std::vector<int>>(o.workers);
  if (!sets.ok()) {
    std::fprintf(stderr, "allreduce_train: error: %s\n", sets.status().ToString().c_str());
    return 2;
  }
  std::vector<TaskCpus> worker_cpus;
  for (std::vector<int>& set : *sets) worker_cpus.emplace_back(std::move(set));
  BenchCluster cluster(o.tfd, {{"worker", worker_cpus}});
  auto io = kj::setupAsyncIo();
  FiguresJson json("allreduce_train", argc, argv);
  Status s = cluster.Start(io);
  if (s.ok()) s = Measure(o, cluster, json);
  if (s.ok()) s = json.Write(o.json_path);
  const Status stopped = cluster.Stop();
  if (!s.ok()) {
    std::fprintf(stderr, "allreduce_train: error: %s\n", s.ToString().c_str());
    return 1;
  }
  return stopped.ok() ? 0 : 1;
}

}  // namespace
}  // namespace tfd::bench

int main(int argc, char** argv) { return tfd::bench::Main(argc, argv); }
