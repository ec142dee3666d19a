// loop_bench: what a while loop's machinery costs the executor per
// iteration (issue 37's target: <= 2 us).
//
// Two graphs run as whole steps on one executor each, in one process:
//   loop:     i = 0; while i < N: i = i + 1     (WhileLoop, parallel_iterations 1..)
//   unrolled: i = 0; i = i + 1; ... N times     (the same N Adds in a chain)
// "Executor overhead per iteration" is (loop step - unrolled step) / N: what
// an iteration costs beyond its body's Add, i.e. the predicate (Less), the
// loop's own nodes (Merge, LoopCond, Switch, Identity, NextIteration) and the
// frame and iteration bookkeeping around them. Each figure is the median of
// --repeats steps, the two graphs alternated.
//
//   build/bench/loop_bench [--iterations 1000] [--repeats 200] [--threads 1]
//                          [--parallel-iterations 10] [--unrolled 1]
#include <algorithm>
#include <boost/asio/thread_pool.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "api/control_flow.h"
#include "bench/bench_flags.h"
#include "daemon/runtime/executor.h"
#include "kernels/register_all.h"

namespace tfd {
namespace {

struct Flags {
  int64_t iterations = 1000;
  int repeats = 200;
  int threads = 1;
  int parallel_iterations = 10;
  bool unrolled = true;  // --unrolled 0: the loop alone (for a profiler)
};

Flags ParseFlags(int argc, char** argv) {
  Flags f;
  bench::BenchFlags flags("loop_bench", "a while loop's executor overhead per iteration, against "
                                        "the same Adds unrolled");
  flags.Int("iterations", 1, 100000000, "iterations of the loop (and Adds unrolled)",
            &f.iterations)
      .Int("repeats", 1, 1000000, "steps of each graph, alternated", &f.repeats)
      .Int("threads", 1, 1024, "the executor's compute threads", &f.threads)
      .Int("parallel-iterations", 1, 1000000, "the loop's parallel_iterations",
           &f.parallel_iterations)
      .Bit("unrolled", "0: the loop alone (for a profiler)", &f.unrolled);
  flags.ParseOrExit(argc, argv);
  return f;
}

// One graph and its executor; Step() runs it once and returns the seconds.
class Case {
 public:
  Case(const OpRegistry& ops, boost::asio::thread_pool& pool, const Scope& root,
       const Output& fetch, int64_t expect)
      : expect_(expect) {
    env_.resources = &resources_;
    root.AddOperation("_Retval", {fetch}, {{"index", int64_t{0}}});
    Check(root.status());
    auto g = Graph::Build(root.ToGraphDef(), ops);
    Check(g.status());
    auto e = Executor::Create(std::make_shared<const Graph>(std::move(g).value()),
                              {&ops, &env_, &pool, kDeviceCpu, "cpu"});
    Check(e.status());
    exec_ = std::move(e).value();
  }

  double Step() {
    CallFrame frame;
    frame.retvals.resize(1);
    CancellationManager cm;
    const auto start = std::chrono::steady_clock::now();
    Check(exec_->Run({.step_id = ++step_, .frame = &frame, .cancellation = &cm}));
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (frame.retvals[0].data<int64_t>()[0] != expect_) Check(errors::Internal("wrong result"));
    return s;
  }

 private:
  static void Check(const Status& s) {
    if (s.ok()) return;
    std::fprintf(stderr, "error: %s\n", s.ToString().c_str());
    std::exit(1);
  }

  ResourceMgr resources_;
  KernelEnv env_;
  std::unique_ptr<Executor> exec_;
  int64_t expect_;
  int64_t step_ = 0;
};

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int Main(int argc, char** argv) {
  const Flags f = ParseFlags(argc, argv);
  static OpRegistry ops;
  if (Status s = kernels::RegisterAll(ops); !s.ok()) return 1;
  boost::asio::thread_pool pool(f.threads);

  Scope loop_root = Scope::NewRootScope(ops);
  const int64_t n = f.iterations;
  std::vector<Output> r = ops::WhileLoop(
      loop_root,
      [n](const Scope& c, const std::vector<Output>& v) {
        return ops::Less(c, v[0], ops::Input(n));
      },
      [](const Scope& b, const std::vector<Output>& v) {
        return std::vector<Output>{ops::Add(b, v[0], ops::Input(int64_t{1}))};
      },
      {ops::Const(loop_root, ops::Input(int64_t{0}))},
      {.parallel_iterations = f.parallel_iterations});
  Case loop(ops, pool, loop_root, r[0], n);
  if (!f.unrolled) {
    std::vector<double> loop_s;
    for (int i = 0; i < f.repeats; ++i) loop_s.push_back(loop.Step());
    std::printf("loop of %lld iterations: %.3f us an iteration\n", static_cast<long long>(n),
                Median(loop_s) * 1e6 / n);
    return 0;
  }

  Scope chain_root = Scope::NewRootScope(ops);
  Output x = ops::Const(chain_root, ops::Input(int64_t{0}));
  Output one = ops::Const(chain_root, ops::Input(int64_t{1}));
  for (int64_t i = 0; i < n; ++i) x = ops::Add(chain_root, x, one);
  Case chain(ops, pool, chain_root, x, n);

  for (int i = 0; i < 5; ++i) loop.Step(), chain.Step();  // warm-up: caches, cost measurements
  std::vector<double> loop_s, chain_s;
  for (int i = 0; i < f.repeats; ++i) {
    loop_s.push_back(loop.Step());
    chain_s.push_back(chain.Step());
  }
  const double l = Median(loop_s), c = Median(chain_s);
  std::printf(
      "loop of %lld iterations (parallel_iterations %d): %.1f us a step, %.3f us an iteration\n",
      static_cast<long long>(n), f.parallel_iterations, l * 1e6, l * 1e6 / n);
  std::printf("the same %lld Adds unrolled:                      %.1f us a step, %.3f us an Add\n",
              static_cast<long long>(n), c * 1e6, c * 1e6 / n);
  std::printf("executor overhead per iteration (loop - unrolled) / N: %.3f us\n",
              (l - c) * 1e6 / n);
  return 0;
}

}  // namespace
}  // namespace tfd

int main(int argc, char** argv) { return tfd::Main(argc, argv); }
