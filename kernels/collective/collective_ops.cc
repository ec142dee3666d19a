// CollectiveReduce: TensorFlow's all-reduce op (CollectiveAllReduceStrategy)
// on tfd's workers. The group is tasks 0..group_size-1 of the kernel's own
// job; each member's rank is its task index. Members match one another's
// runs by (group_key, instance_key, the n-th run of that instance on the
// task: CollectiveSequence), never by step id, so every worker runs its own
// session. The transfers go over the step's rendezvous (RingAllReduce).
#define EIGEN_USE_THREADS
#include <unsupported/Eigen/CXX11/Tensor>

#include <cstring>

#include "common/device_name.h"
#include "common/op_kernel.h"
#include "kernels/collective/collective_ops.h"
#include "kernels/collective/collective_sequence.h"
#include "kernels/collective/ring_all_reduce.h"
#include "kernels/framework/intra_op_pool.h"

namespace tfd::kernels {
namespace {

class CollectiveReduceOp : public AsyncOpKernel {
 public:
  explicit CollectiveReduceOp(OpKernelConstruction& c) : AsyncOpKernel(c) {
    int64_t group_size = 0;
    std::string merge, final_op;
    c.SetStatus(c.GetAttr("group_size", &group_size));
    c.SetStatus(c.GetAttr("group_key", &params_.group_key));
    c.SetStatus(c.GetAttr("instance_key", &params_.instance_key));
    c.SetStatus(c.GetAttr("merge_op", &merge));
    c.SetStatus(c.GetAttr("final_op", &final_op));
    if (!c.status().ok()) return;
    auto m = ParseMergeOp(merge);
    auto f = ParseFinalOp(final_op);
    if (!m.ok() || !f.ok()) {
      const Status& bad = m.ok() ? f.status() : m.status();
      c.SetStatus(errors::InvalidArgument("CollectiveReduce '", c.node().name, "': ",
                                          bad.message()));
      return;
    }
    params_.merge = *m;
    params_.final_op = *f;
    c.SetStatus(Members(c.node(), group_size));
  }

  void ComputeAsync(OpKernelContext& ctx, DoneCallback done) override {
    const Tensor& input = ctx.input(0);
    Tensor* output = nullptr;
    Status s = ctx.allocate_output_for_overwrite(0, input.shape(), &output);
    if (s.ok() && params_.group_size() == 1) {
      // Alone in the group: the reduction of one tensor is itself.
      if (input.num_elements() > 0) {
        std::memcpy(output->raw_data(), input.raw_data(), input.total_bytes());
      }
    } else if (s.ok()) {
      s = StartRing(ctx, input, *output, done);
      if (s.ok()) return;  // `done` runs when the ring ends
    }
    ctx.SetStatus(s);
    done();
  }

 private:
  // The group's devices, and this task's rank among them.
  Status Members(const NodeInfo& node, int64_t group_size) {
    if (group_size < 1) {
      return errors::InvalidArgument("CollectiveReduce '", node.name,
                                     "': group_size must be at least 1, got ", group_size);
    }
    TFD_ASSIGN_OR_RETURN(DeviceName me, DeviceName::Parse(node.device));
    const int task = me.task.value_or(0);
    if (task >= group_size) {
      return errors::InvalidArgument(
          "CollectiveReduce '", node.name, "' runs on ", node.device, ", task ", task,
          " of its job, but its group is tasks 0..", group_size - 1, " (group_size ", group_size,
          ")");
    }
    params_.rank = task;
    params_.node = node.name;
    for (int64_t t = 0; t < group_size; ++t) {
      DeviceName d = me;
      d.task = static_cast<int>(t);
      params_.devices.push_back(d.ToString());
    }
    return OkStatus();
  }

  Status StartRing(OpKernelContext& ctx, const Tensor& input, Tensor& output,
                   DoneCallback& done) {
    Rendezvous* rendezvous = ctx.step().rendezvous;
    if (rendezvous == nullptr) {
      return errors::FailedPrecondition(
          "CollectiveReduce '", ctx.node().name, "' has group_size ", params_.group_size(),
          ": it needs a cluster of that many tasks (tfd daemons), not a run in one process");
    }
    TFD_ASSIGN_OR_RETURN(auto sequence, CollectiveSequence::ForTask(ctx.resources()));
    RingParams params = params_;
    params.invocation = sequence->Next(params.group_key, params.instance_key);
    // Merges of large segments off the data plane's event loop, on the
    // task's intra-op threads (none where the task has one CPU: then where
    // they complete); small ones stay where they complete (inline_bytes).
    TFD_ASSIGN_OR_RETURN(std::shared_ptr<IntraOpPool> pool, IntraOpPool::ForTask(ctx.env()));
    if (pool) {
      params.schedule = [pool](std::function<void()> f) {
        pool->device().enqueueNoNotification(std::move(f));
      };
    }
    RingAllReduce::Run(*rendezvous, ctx.cancellation(), std::move(params), input, output,
                       [&ctx, done = std::move(done)](const Status& s) {
                         ctx.SetStatus(s);
                         done();
                       });
    return OkStatus();
  }

  RingParams params_;  // all but the invocation, fixed at construction
};

}  // namespace

Status RegisterCollectiveOps(OpRegistry& r) {
  return r.Add<CollectiveReduceOp>(
      OpDefBuilder("CollectiveReduce")
          .Input("input: T")
          .Output("data: T")
          .Attr("T: {float32, float64, int32, int64}")
          .Attr("group_size: int")
          .Attr("group_key: int")
          .Attr("instance_key: int")
          .Attr("merge_op: string")
          .Attr("final_op: string")
          .Attr("subdiv_offsets: list(int) = []")
          .SetIsStateful()
          .Doc("All-reduce among the workers of a job, without a ps (TensorFlow's "
               "CollectiveAllReduceStrategy): every member gets the input of all members "
               "merged element-wise by merge_op (Add, Mul, Min or Max), then final_op applied "
               "(Id, or Div: divided by group_size; integers truncate). The group is tasks "
               "0..group_size-1 of the node's own job, each member's rank its task index; a "
               "task index >= group_size is INVALID_ARGUMENT. Members run their own sessions: "
               "the n-th run of (group_key, instance_key) on one task meets the n-th on every "
               "other, so every member must run the same collectives in the same order. A ring "
               "all-reduce over the data plane; waits end at the step's deadline with "
               "DEADLINE_EXCEEDED naming the members never heard from. group_size 1 is the "
               "identity; more in one process (tfctl run) is FAILED_PRECONDITION. "
               "subdiv_offsets is accepted and ignored. No gradient. Shape: the input's."),
      shape_fns::UnchangedShape);
}

}  // namespace tfd::kernels
