// Executor: runs the steps of one validated graph on a compute pool.
//
// Kernels are built once, when the executor is created. A step runs every
// node in dependency order; independent nodes run in parallel on the pool
// (inter-op parallelism), except kernels too cheap to be worth a hand-off,
// which run on the thread that made them ready (declared so, declared so
// for inputs of the size they were given (an update of a small variable),
// or, in a blocking Run, measured: kernel_costs.h). Asynchronous kernels (queue
// waits, receives) hold no thread while they wait. The first error cancels
// the step — waiting kernels are woken through the step's
// CancellationManager — and the step ends once every started kernel has
// finished. A step past its deadline is cancelled with DEADLINE_EXCEEDED
// naming the nodes still running.
//
// While loops run as TensorFlow 1.x runs them (frames and iterations, see
// loop_frames.h): each node's state (pending inputs, deadness) is kept per
// iteration of the frame it runs in, an iteration's state is freed once
// every node of it has finished and the iteration before it is gone, and at
// most the loop's parallel_iterations iterations are alive at once; so a
// loop's memory does not grow with its iteration count. A loop that never
// ends runs until the step's deadline or cancellation.
//
// Every slot of the frame's retvals must be filled by the graph's _Retval of
// that index: a step that ends with one unfilled fails (INVALID_ARGUMENT
// naming the fetch whose producer never ran, INTERNAL for a slot that no
// _Retval has), so an OK step never hands back an empty tensor as a fetch.
//
// With Options::inline_kernels no kernel
// goes to the pool: each runs on the thread that made it ready (see
// InlineKernelsFor).
//
//   TFD_ASSIGN_OR_RETURN(auto exec, Executor::Create(graph, {&registry, &env, &pool}));
//   CancellationManager cm;
//   exec->RunAsync({.step_id = 7, .frame = &frame, .cancellation = &cm}, [](Status s, StepStats st) {...});
//   // or, blocking:  Status s = exec->Run(args, &stats);
//
// Thread-safety: RunAsync may be called from any thread, concurrently for
// different steps. The executor must outlive its steps.
#pragma once

#include <boost/asio/thread_pool.hpp>
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "common/graph.h"
#include "common/op_kernel.h"
#include "common/step_stats.h"
#include "daemon/runtime/kernel_costs.h"
#include "daemon/runtime/loop_frames.h"

namespace tfd {

class Executor {
 public:
  struct Options {
    const OpRegistry* registry = nullptr;
    const KernelEnv* env = nullptr;
    boost::asio::thread_pool* pool = nullptr;
    std::string device_type = kDeviceCpu;  // which kernels to instantiate
    std::string device;                    // canonical device name, for traces
    // The task whose master registered the graph, and the session it
    // registered it for (StepContext::master, ::session); empty for a
    // session in one process.
    std::string master;
    SessionPresence session;
    // Every kernel on the thread that made it ready, the expensive ones
    // too; `pool` is then not used. See InlineKernelsFor.
    bool inline_kernels = false;
  };
  // What a step's while loops did (RunArgs::loop_stats): iterations started,
  // and the most iterations (over every loop and every instance of a loop)
  // and the most loop frames alive at once.
  struct LoopStats {
    int64_t iterations = 0;
    int64_t peak_live_iterations = 0;
    int64_t peak_live_frames = 0;
  };
  struct RunArgs {
    int64_t step_id = 0;
    CallFrame* frame = nullptr;                    // feeds and fetches; may be null
    Rendezvous* rendezvous = nullptr;              // cross-partition transfers; may be null
    CancellationManager* cancellation = nullptr;   // required; owned by the caller
    std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
    bool trace = false;                            // collect per-node timings
    LoopStats* loop_stats = nullptr;               // filled in before `done` runs; may be null
    // Asked every kInterruptPoll while Run waits for the step (RunAsync
    // never asks): true cancels the step, which ends CANCELLED. For a
    // caller whose waiting thread is the one to notice an interrupt (the
    // Python binding's main thread, where signal handlers run).
    std::function<bool()> interrupted;
  };
  static constexpr std::chrono::milliseconds kInterruptPoll{100};
  using DoneCallback = std::function<void(const Status&, StepStats)>;

  // INVALID_ARGUMENT / NOT_FOUND naming the node whose kernel cannot be built.
  static StatusOr<std::unique_ptr<Executor>> Create(std::shared_ptr<const Graph> graph,
                                                    const Options& options);
  // Use Create; the key keeps construction in this class.
  struct PrivateKey {};
  Executor(PrivateKey, std::shared_ptr<const Graph> graph, const Options& options);
  ~Executor();

  // `done` runs exactly once: on the calling thread before RunAsync returns
  // when every node is cheap (or inline_kernels) and nothing waits (an empty
  // step), else on a pool thread or the thread that completed the last
  // asynchronous kernel.
  void RunAsync(const RunArgs& args, DoneCallback done);
  // Blocks the calling thread (which must not be a pool thread) until done.
  // The caller works on the step meanwhile, as a pool thread does: a chain
  // of expensive nodes with nothing beside them runs on it, and so do the
  // kernels measured cheap.
  Status Run(const RunArgs& args, StepStats* stats = nullptr);

  const Graph& graph() const { return *graph_; }

 private:
  struct Step;
  // Nodes the executor computes itself on a CPU, outside a traced step,
  // rather than through their kernels: forwarding and choosing among their
  // inputs, or handing out a constant, costs less than a kernel's context.
  // A while loop's own nodes are mostly these, run once per iteration.
  enum class Builtin : uint8_t {
    kNone,
    kForward,  // Identity, Enter, Exit, NextIteration, LoopCond: input 0 to output 0
    kSwitch,   // input 0 to output 1 if the scalar bool input 1 is true, else to output 0
    kMerge,    // the first live input, and its index
    kConst,    // the value attr
  };

  void Start(const RunArgs& args, DoneCallback done, bool blocking);
  // Appends node `n`'s Builtin (and a kConst's value) to builtin_, in node
  // id order.
  void AddBuiltin(const Graph::Node& n, bool on_cpu);
  // Whether node `id`, its data inputs `in`, runs on the thread that made
  // it ready (see Step): declared cheap, or cheap for inputs this size
  // (OpKernel::cheap_up_to_elements); `measured`: also when measured cheap.
  bool RunsInline(int id, std::span<const Value> in, bool measured) const;
  // Whether a blocking step times this run of node `id`'s kernel for
  // costs_: every run until it is measured cheap, then one in kResample
  // (reading the clock twice costs as much as a cheap kernel), so that a
  // kernel grown slow still leaves the caller's thread within a few runs.
  bool MeasureNow(int id) const;
  static constexpr uint32_t kResample = 16;

  std::shared_ptr<const Graph> graph_;
  Options options_;
  std::vector<std::unique_ptr<OpKernel>> kernels_;  // by node id
  std::vector<bool> cheap_;                         // by node id: declared cheap
  std::vector<int64_t> cheap_elements_;             // by node id: cheap_up_to_elements()
  std::vector<Builtin> builtin_;                    // by node id
  std::vector<Tensor> const_values_;                // by node id: a kConst's value
  std::vector<Tensor> merge_index_;                 // [i]: the int32 scalar i, for kMerge
  mutable KernelCosts costs_;                       // by node id: measured
  // By node id: runs since the last timed one, once measured cheap.
  std::unique_ptr<std::atomic<uint32_t>[]> unmeasured_runs_;
  std::vector<int> roots_;                          // nodes with no inputs at all
  LoopFrames frames_;                               // node kinds and frames
};

// Whether a process should run its kernels inline (Options::inline_kernels):
// when it may run on one CPU only (common/allowed_cpus.h) and `threads`, the
// compute pool size its user asked for, is 0 (unset). A pool thread there
// can only take turns with the thread that hands it work, so each hop to it
// is a wake-up and a context switch that buy no parallelism. The price: on
// a task, a long kernel holds up the event loop while it runs, where a pool
// thread would have been preempted for it; `--threads 1` keeps the pool.
bool InlineKernelsFor(int threads);

}  // namespace tfd
