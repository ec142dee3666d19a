// _Send, _Recv and _Signal: the ops partitioning puts on every edge cut
// between tasks. A _Send leaves its input in the step's rendezvous; the
// matching _Recv (same key: send device, recv device, edge name) waits for
// it without holding a thread. Inside a while loop the executor hands them a
// rendezvous that adds the loop frame and iteration to every key, so each
// iteration's transfer is its own. A control edge between tasks becomes
// _Signal -> _Send ... _Recv -> ^consumer. A dead value (the untaken side
// of a cond) crosses as an uninitialized tensor, and the _Recv's output is
// dead in turn (common/rendezvous.h).
#include "common/op_kernel.h"
#include "kernels/framework/framework_ops.h"

namespace tfd::kernels {
namespace {

// A node's transfer, from its attrs: the two devices and the rendezvous key.
struct Transfer {
  explicit Transfer(OpKernelConstruction& c) {
    std::string edge;
    c.SetStatus(c.GetAttr("send_device", &send));
    c.SetStatus(c.GetAttr("recv_device", &recv));
    c.SetStatus(c.GetAttr("tensor_name", &edge));
    key = Rendezvous::MakeKey(send, recv, edge);
  }
  std::string send, recv, key;
};

// "4194304 bytes to DEVICE", for a traced step's entry.
std::string Moved(const Tensor& t, const char* direction, const std::string& device) {
  return std::to_string(t.total_bytes()) + " bytes " + direction + " " + device;
}

// Asynchronous: across tasks the send is done once the tensor's bytes have
// left, and a failure (the receiver gone) fails the step here.
class SendOp : public AsyncOpKernel {
 public:
  explicit SendOp(OpKernelConstruction& c) : AsyncOpKernel(c), transfer_(c) {}
  void ComputeAsync(OpKernelContext& ctx, DoneCallback done) override {
    Rendezvous* r = ctx.step().rendezvous;
    if (r == nullptr) {
      ctx.SetStatus(errors::Internal("_Send outside a partitioned step"));
      done();
      return;
    }
    // The executor runs a _Send even with a dead input, so that its _Recv
    // hears of it rather than waiting for the step's deadline.
    static const Tensor kDead;
    const Tensor& t = ctx.input_is_dead(0) ? kDead : ctx.input(0);
    if (ctx.step().trace) ctx.set_trace_label(Moved(t, "to", transfer_.recv));
    r->SendAsync(ctx.step_id(), transfer_.key, t, ctx.cancellation(),
                 [&ctx, done = std::move(done)](const Status& s) {
                   ctx.SetStatus(s);
                   done();
                 });
  }

 private:
  const Transfer transfer_;
};

class RecvOp : public AsyncOpKernel {
 public:
  explicit RecvOp(OpKernelConstruction& c) : AsyncOpKernel(c), transfer_(c) {}
  void ComputeAsync(OpKernelContext& ctx, DoneCallback done) override {
    Rendezvous* r = ctx.step().rendezvous;
    if (r == nullptr) {
      ctx.SetStatus(errors::Internal("_Recv outside a partitioned step"));
      done();
      return;
    }
    r->RecvAsync(ctx.step_id(), transfer_.key, ctx.cancellation(),
                 [this, &ctx, done = std::move(done)](StatusOr<Tensor> t) {
                   if (t.ok() && !t->initialized()) {
                     ctx.set_output_dead(0);
                   } else if (t.ok()) {
                     if (ctx.step().trace) ctx.set_trace_label(Moved(*t, "from", transfer_.send));
                     ctx.set_output(0, std::move(t).value());
                   } else {
                     ctx.SetStatus(t.status());
                   }
                   done();
                 });
  }

 private:
  const Transfer transfer_;
};

class SignalOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  bool is_cheap() const override { return true; }
  void Compute(OpKernelContext& ctx) override { ctx.set_output(0, Tensor::Scalar(true)); }
};

Status RecvShape(InferenceContext& c) {
  TFD_ASSIGN_OR_RETURN(PartialShape s, c.GetAttr<PartialShape>("shape"));
  c.set_output(0, s);
  return OkStatus();
}

}  // namespace

Status RegisterSendRecvOps(OpRegistry& r) {
  const char* kAttrs[] = {"tensor_name: string", "send_device: string", "recv_device: string"};
  OpDefBuilder send("_Send");
  send.Input("tensor: T").Attr("T: type").SetIsStateful().Doc(
      "Internal: hands its input to the _Recv with the same key on recv_device. "
      "Shape: no outputs.");
  OpDefBuilder recv("_Recv");
  recv.Output("tensor: T").Attr("T: type").Attr("shape: shape = <unknown>").SetIsStateful().Doc(
      "Internal: waits for the tensor the matching _Send hands over. Shape: the shape attr.");
  for (const char* a : kAttrs) {
    send.Attr(a);
    recv.Attr(a);
  }
  TFD_RETURN_IF_ERROR(r.Add<SendOp>(send, shape_fns::NoOutputs));
  TFD_RETURN_IF_ERROR(r.Add<RecvOp>(recv, RecvShape));
  return r.Add<SignalOp>(
      OpDefBuilder("_Signal").Output("signal: bool").Doc(
          "Internal: a true scalar standing for 'done' on a control edge between tasks. "
          "Shape: []."),
      shape_fns::Scalar);
}

}  // namespace tfd::kernels
