// The kernel interface: how an op's computation is written.
//
// A kernel object is built once per node (OpKernelConstruction: attrs are
// read and checked there) and run once per step (OpKernelContext: inputs,
// outputs, the task's resources, the step's cancellation and deadline).
// Synchronous kernels override Compute; kernels that must wait (a dequeue
// from an empty queue, a receive) derive from AsyncOpKernel and call `done`
// when finished, from any thread, without parking a thread meanwhile.
//
//   class NegOp : public OpKernel {
//    public:
//     using OpKernel::OpKernel;
//     void Compute(OpKernelContext& ctx) override {
//       Tensor* out;
//       TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, ctx.input(0).shape(), &out));
//       ...
//     }
//   };
//   registry.Add<NegOp>(OpDefBuilder("Neg").Input("x: T").Output("y: T")
//                           .Attr("T: {float32, float64}"), shape_fns::UnchangedShape);
//
// Thread-safety: Compute may run concurrently for different steps on the same
// kernel object; keep per-step state in the context, guard anything else.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <spdlog/logger.h>

#include "common/attr_value.h"
#include "common/cancellation.h"
#include "common/memory_budget.h"
#include "common/op_def.h"
#include "common/op_registry.h"
#include "common/rendezvous.h"
#include "common/resource_mgr.h"
#include "common/size_limits.h"
#include "common/status.h"
#include "common/tensor.h"

namespace tfd {

// What a task offers every kernel it runs. Built by main() (tfd, tfctl) or a
// test, and outliving every kernel.
struct KernelEnv {
  ResourceMgr* resources = nullptr;
  // Sizes the task accepts (graph constants, feeds, one kernel output).
  SizeLimits limits;
  // What kernels' outputs may hold at once. Each buffer keeps its budget
  // alive, so outputs that outlive the env (a fetched tensor) still give
  // their bytes back. Never null; the default is MemoryBudget::DefaultLimit.
  std::shared_ptr<MemoryBudget> memory =
      std::make_shared<MemoryBudget>(MemoryBudget::DefaultLimit());
  std::shared_ptr<spdlog::logger> logger;  // Print and warnings go here
  std::string task = "/job:localhost/replica:0/task:0";
  // File-touching ops (Save, Restore, readers) may only use paths inside
  // these directories; relative paths resolve against the first.
  std::vector<std::filesystem::path> io_dirs;
  // Threads one kernel may split its work over (kernels/framework/
  // intra_op_pool.h): tfd's --threads; 0 for one per CPU this process may
  // run on.
  int compute_threads = 0;
  // The task's usable GPUs: "GPU:i" is gpus[i]. Empty where there is none
  // (kernels/gpu/gpu_devices.h finds them); outlive every kernel.
  std::vector<DeviceMemory*> gpus;

  // `path` resolved and checked against io_dirs: INVALID_ARGUMENT naming the
  // path when it leaves them (or when no directory is allowed at all).
  StatusOr<std::filesystem::path> ResolveIoPath(const std::string& path) const;
};

// What flows along an edge: a tensor, or a reference to a resource (a
// variable or queue) for inputs and outputs declared Ref(...). A reference
// output may also carry a tensor: the value an update op produced, which a
// consumer taking the output by value receives instead of reading the
// resource again (Assign, AssignAdd). Without one, such a consumer reads the
// resource when it starts (ResourceBase::Read).
//
// A dead value (TensorFlow's dead tensor) is what the untaken output of a
// Switch carries: no tensor, only the fact that this side of a cond does not
// run. The executor runs no node that has a dead input or a dead control
// input, and marks all of that node's outputs dead in turn; a Merge runs
// when one of its inputs is live (docs/ops.md, "Switch" and "Merge").
struct Value {
  Tensor tensor;
  std::shared_ptr<ResourceBase> ref;
  bool is_dead = false;
  bool is_ref() const { return ref != nullptr; }
  static Value Dead() { return Value{Tensor(), nullptr, true}; }
};

// Identity of the node a kernel was built for.
struct NodeInfo {
  std::string name;
  std::string op;
  std::string device;  // canonical assigned device
  // Where the kernel's outputs live: null for host memory; a GPU kernel's
  // device, except for the outputs in host_outputs (bit i: output i).
  DeviceMemory* memory = nullptr;
  uint64_t host_outputs = 0;
};

class OpKernelConstruction {
 public:
  OpKernelConstruction(const NodeInfo& node, const OpDef& def, const AttrMap& attrs,
                       std::vector<DType> input_types, std::vector<DType> output_types,
                       const KernelEnv& env);

  const NodeInfo& node() const { return node_; }
  const OpDef& def() const { return def_; }
  const AttrMap& attrs() const { return attrs_; }
  DType input_type(int i) const { return input_types_[i]; }
  DType output_type(int i) const { return output_types_[i]; }
  int num_inputs() const { return static_cast<int>(input_types_.size()); }
  int num_outputs() const { return static_cast<int>(output_types_.size()); }
  const KernelEnv& env() const { return env_; }

  // The attr as T (defaults were filled in before construction).
  template <typename T>
  Status GetAttr(const std::string& name, T* out) const {
    auto it = attrs_.find(name);
    if (it == attrs_.end()) return errors::InvalidArgument("missing attr '", name, "'");
    if (const T* v = std::get_if<T>(&it->second)) {
      *out = *v;
      return OkStatus();
    }
    if constexpr (requires { typename T::value_type; } && !std::is_same_v<T, std::string>) {
      if (std::holds_alternative<EmptyList>(it->second)) {
        *out = T{};
        return OkStatus();
      }
    }
    return errors::InvalidArgument("attr '", name, "' has type ", AttrTypeName(it->second));
  }

  // A constructor reports a problem here; the first error wins.
  void SetStatus(const Status& s) {
    if (status_.ok()) status_ = s;
  }
  const Status& status() const { return status_; }

 private:
  const NodeInfo& node_;
  const OpDef& def_;
  const AttrMap& attrs_;
  std::vector<DType> input_types_, output_types_;
  const KernelEnv& env_;
  Status status_;
};

class OpKernelContext;

class OpKernel {
 public:
  explicit OpKernel(OpKernelConstruction& c) : node_(c.node()) {}
  virtual ~OpKernel() = default;
  OpKernel(const OpKernel&) = delete;
  OpKernel& operator=(const OpKernel&) = delete;

  virtual void Compute(OpKernelContext& ctx) = 0;
  virtual bool is_async() const { return false; }
  // Kernels whose cost is a few nanoseconds run inline on the thread that
  // made them ready rather than being scheduled.
  virtual bool is_cheap() const { return false; }
  // For a kernel whose cost follows the size of its inputs (a variable's
  // update: a few operations per element): it is cheap, as above, for a
  // run whose tensor inputs hold at most this many elements in all. The
  // executor counts them when the node is ready, so one kernel object runs
  // inline for a scalar and on the pool for a 5.8 M-element layer. A
  // reference input (the variable itself) counts nothing; a value input
  // not yet read from its variable makes the run not cheap. 0: never cheap
  // by size. Choose the bound from a measurement: the elements the kernel
  // gets through in the time a hand-off to the pool costs (see
  // kernels/state/state_ops_internal.h).
  //
  // TensorFlow's OpKernel::IsExpensive is a per-kernel flag (our is_cheap)
  // which its executor refines by timing each kernel (our kernel_costs.h,
  // kept for blocking runs only: timing on a task's event loop cost more
  // than it saved). Neither looks at the inputs; this bound does.
  virtual int64_t cheap_up_to_elements() const { return 0; }

  const NodeInfo& node() const { return node_; }
  const std::string& name() const { return node_.name; }

 private:
  NodeInfo node_;
};

class AsyncOpKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  using DoneCallback = std::function<void()>;

  // Must eventually call `done` exactly once (after setting outputs or an
  // error status on ctx); ctx stays valid until then.
  virtual void ComputeAsync(OpKernelContext& ctx, DoneCallback done) = 0;
  bool is_async() const final { return true; }
  void Compute(OpKernelContext& ctx) final;  // not used for async kernels
};

// A step's feeds and fetches, read by the _Arg and written by the _Retval
// kernels that the session puts in place of fed and fetched tensors. Each
// retval slot is written by exactly one kernel.
struct CallFrame {
  std::vector<Tensor> args;
  std::vector<Tensor> retvals;
};

// A master session's presence on a task: the object lives while the session
// holds partitions there (dropped when the session closes or its client
// goes), and says which session it is ("session 3 of /job:worker/...").
using SessionPresence = std::weak_ptr<const std::string>;

// Per-step facts shared by every kernel of the step.
struct StepContext {
  CallFrame* frame = nullptr;
  Rendezvous* rendezvous = nullptr;  // for _Send/_Recv; null when unpartitioned
  int64_t step_id = 0;
  CancellationManager* cancellation = nullptr;
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  bool trace = false;  // the step is traced: kernels may note what they did
  // The task whose master runs the step ("/job:worker/replica:0/task:1"):
  // in between-graph replication, the replica the step belongs to. Empty for
  // a session in one process. Valid while the step runs.
  std::string_view master;
  // The session the step runs for, while it holds partitions on this task;
  // its text names it for messages. Empty for a session in one process, and
  // expired once the session closed. Kernels that tie task state to one
  // session at a time (a dataset's cursor) keep weak references.
  SessionPresence session;
};

class OpKernelContext {
 public:
  OpKernelContext(const OpKernel& kernel, const KernelEnv& env, const StepContext& step,
                  std::vector<Value> inputs, std::vector<DType> output_types);

  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  // The tensor of input i (for a reference input: empty; use input_ref).
  const Tensor& input(int i) const { return inputs_[i].tensor; }
  // Whether input i is dead (see Value); only a Merge ever sees one.
  bool input_is_dead(int i) const { return inputs_[i].is_dead; }
  // The resource of reference input i, as R; FAILED_PRECONDITION otherwise.
  template <typename R>
  StatusOr<std::shared_ptr<R>> input_ref(int i) const {
    if (!inputs_[i].is_ref()) {
      return errors::InvalidArgument("input ", i, " of '", node().name, "' is not a reference");
    }
    if (auto r = std::dynamic_pointer_cast<R>(inputs_[i].ref)) return r;
    return errors::InvalidArgument("input ", i, " of '", node().name, "' is a ",
                                   inputs_[i].ref->Kind(), ", not the kind of resource ",
                                   node().op, " takes");
  }
  DType output_type(int i) const { return output_types_[i]; }

  // A fresh zero-filled output of the declared dtype, in the memory the
  // node's device keeps that output in (NodeInfo::memory), charged to the
  // task's memory budget until its buffer is freed when in host memory. RESOURCE_EXHAUSTED naming the
  // node, output and shape when it would take more than
  // env().limits.max_tensor_bytes or what is left of the budget;
  // INVALID_ARGUMENT for more than kMaxTensorElements elements. Nothing is
  // allocated then. Every tensor a kernel makes should come from here, so
  // that these checks see it.
  Status allocate_output(int i, const TensorShape& shape, Tensor** out);
  // allocate_output without the zero fill, for a kernel that writes every
  // element of the output before it returns (an Eigen assignment, a copy):
  // the elements start as whatever the memory held, possibly another
  // tensor's bytes. Where any element might stay unwritten (an empty
  // reduction, a scatter), use allocate_output.
  Status allocate_output_for_overwrite(int i, const TensorShape& shape, Tensor** out);
  void set_output(int i, Tensor t);
  void set_output_ref(int i, std::shared_ptr<ResourceBase> r);
  // Output i carries no value: the nodes that consume it do not run (Switch).
  void set_output_dead(int i) { outputs_[i] = Value::Dead(); }

  void SetStatus(const Status& s) {
    if (status_.ok() && !s.ok()) status_ = s;
  }
  const Status& status() const { return status_; }

  const NodeInfo& node() const { return kernel_.node(); }
  const KernelEnv& env() const { return env_; }
  ResourceMgr& resources() const { return *env_.resources; }
  int64_t step_id() const { return step_.step_id; }
  CancellationManager& cancellation() const { return *step_.cancellation; }
  std::chrono::steady_clock::time_point deadline() const { return step_.deadline; }
  const StepContext& step() const { return step_; }

  // The executor collects outputs here once the kernel is done.
  std::vector<Value>& outputs() { return outputs_; }

  // A short note for this node's entry in a traced step (what a transfer
  // moved, say); kernels set it only when step().trace is on, since building
  // it costs a string per run.
  void set_trace_label(std::string label) { trace_label_ = std::move(label); }
  const std::string& trace_label() const { return trace_label_; }

 private:
  // allocate_output's checks and allocation of output `output`, which
  // errors name.
  StatusOr<Tensor> Allocate(DType dtype, const TensorShape& shape, int output, Fill fill);

  const OpKernel& kernel_;
  const KernelEnv& env_;
  const StepContext& step_;
  std::vector<Value> inputs_;
  std::vector<DType> output_types_;
  std::vector<Value> outputs_;
  Status status_;
  std::string trace_label_;
};

// allocate_output's checks and allocation, for a tensor a kernel makes
// outside its Compute (an input batch prepared ahead on another thread):
// `node`'s output `output` in `memory` (null: host memory), within `limits`,
// charged to `budget`. Errors name the node, output, dtype and shape.
StatusOr<Tensor> AllocateKernelOutput(const SizeLimits& limits,
                                      const std::shared_ptr<MemoryBudget>& budget,
                                      DeviceMemory* memory, DType dtype, const TensorShape& shape,
                                      std::string_view node, int output,
                                      Fill fill = Fill::kZeros);

template <typename K>
Status OpRegistry::Add(const OpDefBuilder& def, ShapeFn shape_fn) {
  TFD_ASSIGN_OR_RETURN(OpDef d, def.Finalize());
  TFD_RETURN_IF_ERROR(Register(def, std::move(shape_fn)));
  return RegisterKernel(d.name, kDeviceCpu,
                        [](OpKernelConstruction& c) -> StatusOr<std::unique_ptr<OpKernel>> {
                          auto k = std::make_unique<K>(c);
                          if (!c.status().ok()) return c.status();
                          return std::unique_ptr<OpKernel>(std::move(k));
                        });
}

}  // namespace tfd

// In a kernel's Compute: on error, record it and return.
#define TFD_OP_REQUIRES_OK(CTX, EXPR)   \
  do {                                  \
    ::tfd::Status tfd_s_ = (EXPR);      \
    if (!tfd_s_.ok()) {                 \
      (CTX).SetStatus(tfd_s_);          \
      return;                           \
    }                                   \
  } while (0)

#define TFD_OP_REQUIRES(CTX, COND, STATUS) \
  do {                                     \
    if (!(COND)) {                         \
      (CTX).SetStatus(STATUS);             \
      return;                              \
    }                                      \
  } while (0)

// Async variant: also calls DONE before returning.
#define TFD_OP_REQUIRES_OK_ASYNC(CTX, EXPR, DONE) \
  do {                                            \
    ::tfd::Status tfd_s_ = (EXPR);                \
    if (!tfd_s_.ok()) {                           \
      (CTX).SetStatus(tfd_s_);                    \
      (DONE)();                                   \
      return;                                     \
    }                                             \
  } while (0)
