// allreduce_bench: CollectiveReduce among N tfd workers on loopback, each
// running its own session at once (synchronous data parallelism without a
// ps), for the sizes torch.distributed's gloo all_reduce is measured at by
// bench/torch_allreduce.py.
//
//   allreduce_bench [--tfd PATH] [--workers 4] [--sizes 1,4,16,64,256] [--reps 5]
//                   [--cpus-per-task even] [--json FILE]
//
// Per size: each worker's graph holds a float32 variable of that size
// (filled once) and reduces it (merge_op Add); every rep starts on all
// workers together (a barrier) and lasts until the slowest is done. Printed:
// the median rep, the algorithm bandwidth size/time and the bus bandwidth
// 2(N-1)/N * size/time (NCCL-tests' convention), as torch_allreduce.py does.
#include <unistd.h>

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_flags.h"
#include "bench/figures_json.h"
#include "bench/tfd_cluster.h"
#include "common/allowed_cpus.h"
#include "common/cpu_split.h"

#ifndef TFD_DEFAULT_PATH
#define TFD_DEFAULT_PATH "tfd"
#endif

namespace tfd::bench {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

struct Setup {
  std::string tfd, json_path;
  int workers = 4, reps = 5;
  std::vector<int64_t> sizes_mib{1, 4, 16, 64, 256};
  std::string cpus_per_task = "even";  // common/cpu_split.h
};

// The command line into `o`; exits on --help or a bad flag.
void ParseFlags(int argc, char** argv, Setup& o) {
  BenchFlags flags("allreduce_bench", "CollectiveReduce among N tfd workers, beside gloo's "
                                      "all_reduce (bench/torch_allreduce.py)");
  flags.TfdBinary(TFD_DEFAULT_PATH, &o.tfd)
      .Int("workers", 2, 4096, "tfd workers in the group", &o.workers)
      .IntList("sizes", 1, 4096, "float32 tensor sizes in MiB", &o.sizes_mib)
      .Int("reps", 1, 4096, "timed all-reduces per size, after one warm-up", &o.reps)
      .Text("cpus-per-task", "N|even", "each worker on CPUs of its own, which its merges run on",
            &o.cpus_per_task)
      .Json(&o.json_path);
  flags.ParseOrExit(argc, argv);
}

NodeDef Node(std::string name, std::string op, std::vector<std::string> inputs, AttrMap attrs) {
  return NodeDef{std::move(name), std::move(op), std::move(inputs), "/job:worker",
                 std::move(attrs)};
}

// Per size S: v_S (float32[S MiB / 4]) with init_S filling it, and
// reduce_S all-reducing it as instance S of group 1.
GraphDef WorkerGraph(const Setup& o) {
  GraphDef g;
  for (int64_t mib : o.sizes_mib) {
    const std::string s = std::to_string(mib);
    const int64_t n = mib * (int64_t{1} << 20) / 4;
    g.nodes.push_back(Node("dims_" + s, "Const", {},
                           {{"value", Tensor::FromVector<int64_t>({n})},
                            {"dtype", DType::kInt64}}));
    g.nodes.push_back(Node("one_" + s, "Const", {},
                           {{"value", Tensor::Scalar(1.0f)}, {"dtype", DType::kFloat32}}));
    g.nodes.push_back(Node("fill_" + s, "Fill", {"dims_" + s, "one_" + s},
                           {{"T", DType::kFloat32}, {"index_type", DType::kInt64}}));
    g.nodes.push_back(Node("v_" + s, "VariableV2", {},
                           {{"dtype", DType::kFloat32}, {"shape", PartialShape({n})}}));
    g.nodes.push_back(Node("init_" + s, "Assign", {"v_" + s, "fill_" + s}, {}));
    g.nodes.push_back(Node("reduce_" + s, "CollectiveReduce", {"v_" + s},
                           {{"T", DType::kFloat32},
                            {"group_size", int64_t{o.workers}},
                            {"group_key", int64_t{1}},
                            {"instance_key", mib},
                            {"merge_op", std::string("Add")},
                            {"final_op", std::string("Id")}}));
  }
  return g;
}

// seconds[size][rep][worker]: each worker's time for each rep.
using Times = std::vector<std::vector<std::vector<double>>>;

// Worker k's part: a session, the variables filled, then per size one
// warm-up and `reps` timed runs, each after the barrier.
Status RunWorker(const Setup& o, BenchCluster& cluster, int k, std::barrier<>& together,
                 Times& times) {
  auto io = kj::setupAsyncIo();
  TFD_ASSIGN_OR_RETURN(auto client, cluster.Connect(io, "worker", k));
  TFD_RETURN_IF_ERROR(client->CreateSession(WorkerGraph(o), 300s));
  const Client::RunOptions run{.timeout = 300s};
  for (size_t s = 0; s < o.sizes_mib.size(); ++s) {
    const std::string size = std::to_string(o.sizes_mib[s]);
    TFD_RETURN_IF_ERROR(client->Run({}, {}, {"init_" + size}, run).status());
    for (int rep = -1; rep < o.reps; ++rep) {
      together.arrive_and_wait();
      const auto start = Clock::now();
      TFD_RETURN_IF_ERROR(client->Run({}, {}, {"reduce_" + size}, run).status());
      if (rep >= 0) {
        times[s][rep][k] = std::chrono::duration<double>(Clock::now() - start).count();
      }
    }
  }
  return client->CloseSession();
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void Report(const Setup& o, const Times& times, FiguresJson& json) {
  std::printf("%8s %12s %12s %12s\n", "MiB", "median ms", "algbw GB/s", "busbw GB/s");
  for (size_t s = 0; s < o.sizes_mib.size(); ++s) {
    std::vector<double> reps;  // a rep lasts until its slowest worker is done
    for (const auto& workers : times[s]) {
      reps.push_back(*std::max_element(workers.begin(), workers.end()));
    }
    const double bytes = static_cast<double>(o.sizes_mib[s]) * (1 << 20);
    const double t = Median(reps);
    const double alg = bytes / t / 1e9, bus = alg * 2 * (o.workers - 1) / o.workers;
    std::printf("%8lld %12.3f %12.3f %12.3f\n", static_cast<long long>(o.sizes_mib[s]), t * 1e3,
                alg, bus);
    const std::string row = std::to_string(o.sizes_mib[s]) + " MiB";
    const std::string table = "allreduce " + std::to_string(o.workers) + " workers";
    json.AddSamples(table, row, "tfd", "ms", [&] {
      std::vector<double> ms;
      for (double r : reps) ms.push_back(r * 1e3);
      return ms;
    }());
    json.Add(table, row, "tfd algbw", "GB/s", alg);
    json.Add(table, row, "tfd busbw", "GB/s", bus);
  }
}

int Main(int argc, char** argv) {
  Setup o;
  ParseFlags(argc, argv, o);
  FiguresJson json("allreduce_bench", argc, argv);
  // "even" with fewer CPUs than workers: they share them all, unpinned.
  auto sets = SplitCpus(o.cpus_per_task, AllowedCpus(), o.workers);
  if (!sets.ok() && o.cpus_per_task == "even") sets = std::vector<std::vector<int>>(o.workers);
  if (!sets.ok()) {
    std::fprintf(stderr, "allreduce_bench: error: %s\n", sets.status().ToString().c_str());
    return 2;
  }
  std::vector<TaskCpus> worker_cpus;
  for (std::vector<int>& set : *sets) worker_cpus.emplace_back(std::move(set));
  BenchCluster cluster(o.tfd, {{"worker", worker_cpus}});
  auto io = kj::setupAsyncIo();
  if (Status s = cluster.Start(io); !s.ok()) {
    std::fprintf(stderr, "allreduce_bench: error: %s\n", s.ToString().c_str());
    return 1;
  }
  Times times(o.sizes_mib.size(),
              std::vector<std::vector<double>>(o.reps, std::vector<double>(o.workers, 0)));
  std::barrier together(o.workers);
  std::vector<Status> results(o.workers);
  std::vector<std::thread> threads;
  for (int k = 0; k < o.workers; ++k) {
    threads.emplace_back([&, k] {
      results[k] = RunWorker(o, cluster, k, together, times);
      // A worker that failed leaves the barrier, so the others are not held.
      if (!results[k].ok()) together.arrive_and_drop();
    });
  }
  for (auto& t : threads) t.join();
  for (int k = 0; k < o.workers; ++k) {
    if (!results[k].ok()) {
      std::fprintf(stderr, "allreduce_bench: worker %d: error: %s\n", k,
                   results[k].ToString().c_str());
      return 1;
    }
  }
  Report(o, times, json);
  if (Status s = json.Write(o.json_path); !s.ok()) {
    std::fprintf(stderr, "allreduce_bench: error: %s\n", s.ToString().c_str());
    return 1;
  }
  return cluster.Stop().ok() ? 0 : 1;
}

}  // namespace
}  // namespace tfd::bench

int main(int argc, char** argv) { return tfd::bench::Main(argc, argv); }
