// Queue ops: FIFOQueue, PaddingFIFOQueue and RandomShuffleQueue (create or
// find the resource), QueueEnqueue, QueueEnqueueMany, QueueDequeue, QueueDequeueMany,
// QueueDequeueUpTo (asynchronous: they wait without holding a thread),
// QueueSize, QueueIsClosed, QueueClose.
#include <algorithm>
#include <cstring>
#include <string>

#include "common/op_kernel.h"
#include "kernels/data_flow/data_flow_ops_internal.h"
#include "kernels/data_flow/queue.h"

namespace tfd::kernels::data_flow {
namespace {

StatusOr<std::shared_ptr<Queue>> QueueInput(const OpKernelContext& ctx) {
  return ctx.input_ref<Queue>(0);
}

// The op's declared component types against the queue's.
Status CheckComponentTypes(const Queue& q, const std::vector<DType>& types) {
  if (types.size() != q.component_types().size()) {
    return errors::InvalidArgument("queue '", q.name(), "' has ", q.component_types().size(),
                                   " components but the op names ", types.size());
  }
  for (size_t i = 0; i < types.size(); ++i) {
    if (types[i] != q.component_types()[i]) {
      return errors::InvalidArgument("component ", i, " of queue '", q.name(), "' is ",
                                     DTypeName(q.component_types()[i]), " but the op expects ",
                                     DTypeName(types[i]));
    }
  }
  return OkStatus();
}

// -1 is unbounded (the default); any other value must be positive. TensorFlow
// lets any negative value mean unbounded, which lets a typo (or an
// underflowed computation) pass as a queue that never blocks.
Status CheckCapacity(int64_t capacity) {
  if (capacity == -1 || capacity > 0) return OkStatus();
  return errors::InvalidArgument("capacity must be positive, or -1 for unbounded, not ",
                                 capacity);
}

// A RandomShuffleQueue that may keep every element it can hold would never
// hand one out.
Status CheckMinAfterDequeue(int64_t min_after_dequeue, int64_t capacity) {
  if (min_after_dequeue < 0) {
    return errors::InvalidArgument("min_after_dequeue must be >= 0, not ", min_after_dequeue);
  }
  if (capacity > 0 && min_after_dequeue >= capacity) {
    return errors::InvalidArgument("min_after_dequeue (", min_after_dequeue,
                                   ") must be less than the capacity (", capacity, ")");
  }
  return OkStatus();
}

// Checked when the graph is, so a bad capacity is refused by `tfctl graph
// validate` and session creation rather than at the first step.
Status QueueShape(InferenceContext& c) {
  TFD_ASSIGN_OR_RETURN(int64_t capacity, c.GetAttr<int64_t>("capacity"));
  TFD_RETURN_IF_ERROR(CheckCapacity(capacity));
  if (c.attrs().count("min_after_dequeue") != 0) {
    TFD_ASSIGN_OR_RETURN(int64_t keep, c.GetAttr<int64_t>("min_after_dequeue"));
    TFD_RETURN_IF_ERROR(CheckMinAfterDequeue(keep, capacity));
  }
  return shape_fns::Unknown(c);
}

// FIFOQueue, PaddingFIFOQueue and RandomShuffleQueue: the node's queue,
// made by its first run.
class QueueOp : public OpKernel {
 public:
  explicit QueueOp(OpKernelConstruction& c) : OpKernel(c) {
    if (c.def().name == "RandomShuffleQueue") {
      Queue::Shuffle shuffle;
      c.SetStatus(c.GetAttr("min_after_dequeue", &shuffle.min_after_dequeue));
      c.SetStatus(c.GetAttr("seed", &shuffle.seed));
      c.SetStatus(c.GetAttr("seed2", &shuffle.seed2));
      shuffle_ = shuffle;
    }
    std::vector<PartialShape> shapes;
    c.SetStatus(c.GetAttr("component_types", &component_types_));
    c.SetStatus(c.GetAttr("shapes", &shapes));
    c.SetStatus(c.GetAttr("capacity", &capacity_));
    c.SetStatus(c.GetAttr("container", &container_));
    c.SetStatus(c.GetAttr("shared_name", &shared_name_));
    if (!shapes.empty() && shapes.size() != component_types_.size()) {
      c.SetStatus(errors::InvalidArgument("shapes has ", shapes.size(), " entries but there are ",
                                          component_types_.size(), " component types"));
    }
    // A PaddingFIFOQueue's elements may vary along unknown dimensions.
    const bool padding = c.def().name == "PaddingFIFOQueue";
    for (size_t i = 0; i < shapes.size(); ++i) {
      if (padding ? !shapes[i].rank_known() : !shapes[i].IsFullyDefined()) {
        c.SetStatus(errors::InvalidArgument(
            "shape ", i, " is ", shapes[i].ToString(), "; a ",
            padding ? "PaddingFIFOQueue needs shapes of known rank"
                    : "queue needs fully defined shapes (a PaddingFIFOQueue takes unknown "
                      "dimensions)"));
        return;
      }
    }
    shapes_ = std::move(shapes);
    c.SetStatus(CheckCapacity(capacity_));
    if (shuffle_) c.SetStatus(CheckMinAfterDequeue(shuffle_->min_after_dequeue, capacity_));
  }
  bool is_cheap() const override { return true; }

  void Compute(OpKernelContext& ctx) override {
    const std::string& name = shared_name_.empty() ? ctx.node().name : shared_name_;
    auto q = ctx.resources().LookupOrCreate<Queue>(
        container_, name, [&]() -> StatusOr<std::shared_ptr<Queue>> {
          return std::make_shared<Queue>(name, component_types_, shapes_, capacity_, shuffle_);
        });
    TFD_OP_REQUIRES_OK(ctx, q.status());
    TFD_OP_REQUIRES_OK(ctx, (*q)->CheckSameSpec(component_types_, shapes_, capacity_, shuffle_));
    ctx.set_output_ref(0, *q);
  }

 private:
  std::vector<DType> component_types_;
  std::vector<PartialShape> shapes_;
  int64_t capacity_ = -1;
  std::optional<Queue::Shuffle> shuffle_;
  std::string container_, shared_name_;
};

class QueueEnqueueOp : public AsyncOpKernel {
 public:
  explicit QueueEnqueueOp(OpKernelConstruction& c) : AsyncOpKernel(c) {
    c.SetStatus(c.GetAttr("Tcomponents", &types_));
    c.SetStatus(c.GetAttr("timeout_ms", &timeout_ms_));
    many_ = c.def().name == "QueueEnqueueMany";
  }

  void ComputeAsync(OpKernelContext& ctx, DoneCallback done) override {
    auto q = QueueInput(ctx);
    TFD_OP_REQUIRES_OK_ASYNC(ctx, q.status(), done);
    TFD_OP_REQUIRES_OK_ASYNC(ctx, CheckComponentTypes(**q, types_), done);
    std::vector<Queue::Tuple> tuples;
    TFD_OP_REQUIRES_OK_ASYNC(ctx, many_ ? SplitBatch(ctx, **q, &tuples) : Single(ctx, **q, &tuples),
                             done);
    (*q)->TryEnqueue(std::move(tuples), &ctx.cancellation(),
                     [&ctx, done = std::move(done)](const Status& s) {
                       ctx.SetStatus(s);
                       done();
                     });
  }

 private:
  static Status Single(const OpKernelContext& ctx, const Queue& q, std::vector<Queue::Tuple>* out) {
    Queue::Tuple t;
    for (int i = 1; i < ctx.num_inputs(); ++i) t.push_back(ctx.input(i));
    TFD_RETURN_IF_ERROR(q.ValidateTuple(t));
    out->push_back(std::move(t));
    return OkStatus();
  }

  // Row k of every component makes element k; rows share the inputs' buffers.
  static Status SplitBatch(const OpKernelContext& ctx, const Queue& q,
                           std::vector<Queue::Tuple>* out) {
    int64_t batch = -1;
    for (int i = 1; i < ctx.num_inputs(); ++i) {
      const Tensor& c = ctx.input(i);
      if (c.rank() == 0) {
        return errors::InvalidArgument("component ", i - 1,
                                       " of an EnqueueMany must have rank "
                                       ">= 1 (a batch) but is ",
                                       c.Describe());
      }
      if (batch >= 0 && c.dim(0) != batch) {
        return errors::InvalidArgument("component ", i - 1, " of an EnqueueMany has ", c.dim(0),
                                       " rows but component 0 has ", batch);
      }
      batch = c.dim(0);
    }
    for (int64_t k = 0; k < batch; ++k) {
      Queue::Tuple t;
      for (int i = 1; i < ctx.num_inputs(); ++i) {
        const Tensor& c = ctx.input(i);
        TensorShape row = c.shape();
        row.RemoveDim(0);
        TFD_ASSIGN_OR_RETURN(Tensor r, c.Slice(k, k + 1).Reshaped(row));
        t.push_back(std::move(r));
      }
      TFD_RETURN_IF_ERROR(q.ValidateTuple(t));
      out->push_back(std::move(t));
    }
    return OkStatus();
  }

  std::vector<DType> types_;
  int64_t timeout_ms_ = -1;  // accepted, as TensorFlow does; the step deadline bounds waits
  bool many_ = false;
};

// Copies `n` elements of `src` from `from` to `dst` at `to`.
void CopyElements(const Tensor& src, int64_t from, Tensor* dst, int64_t to, int64_t n) {
  if (src.dtype() == DType::kString) {
    std::copy_n(src.data<std::string>() + from, n, dst->data<std::string>() + to);
  } else if (n > 0) {
    const int64_t size = DTypeSize(src.dtype());
    std::memcpy(static_cast<char*>(dst->raw_data()) + to * size,
                static_cast<const char*>(src.raw_data()) + from * size, n * size);
  }
}

// Copies `src` into element slot `index` of the stacked `dst`, whose slots
// have shape `slot`, each dimension at least src's: src lands in the slot's
// leading corner, one innermost row at a time, the rest of the slot left
// as it is (a PaddingFIFOQueue's zeros).
void CopyRow(const Tensor& src, Tensor* dst, int64_t index, const TensorShape& slot) {
  const int rank = src.rank();
  const int64_t n = src.num_elements();
  if (n == 0) return;
  if (src.shape() == slot) {
    CopyElements(src, 0, dst, index * n, n);
    return;
  }
  const int64_t row = src.dim(rank - 1);  // a scalar always fits its slot exactly
  std::vector<int64_t> at(rank - 1, 0);   // the row's index in src
  for (int64_t r = 0; r < n / row; ++r) {
    int64_t offset = 0;
    for (int d = 0; d < rank - 1; ++d) offset = offset * slot.dim(d) + at[d];
    CopyElements(src, r * row, dst, index * slot.num_elements() + offset * slot.dim(rank - 1), row);
    for (int d = rank - 2; d >= 0 && ++at[d] == src.dim(d); --d) at[d] = 0;
  }
}

// The shape of component `i`'s slots in a dequeue of `got`: the queue's,
// its unknown dimensions the largest among the elements (0 when none).
TensorShape SlotShape(const Queue& q, const std::vector<Queue::Tuple>& got, size_t i) {
  std::vector<int64_t> dims = q.shapes()[i].dims();
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] >= 0) continue;
    dims[d] = 0;
    for (const Queue::Tuple& t : got) dims[d] = std::max(dims[d], t[i].dim(static_cast<int>(d)));
  }
  return TensorShape(dims);
}

class QueueDequeueOp : public AsyncOpKernel {
 public:
  explicit QueueDequeueOp(OpKernelConstruction& c) : AsyncOpKernel(c) {
    c.SetStatus(c.GetAttr("component_types", &types_));
    c.SetStatus(c.GetAttr("timeout_ms", &timeout_ms_));
    many_ = c.def().name != "QueueDequeue";
    take_ = c.def().name == "QueueDequeueUpTo" ? Queue::Take::kUpTo : Queue::Take::kExactly;
  }

  void ComputeAsync(OpKernelContext& ctx, DoneCallback done) override {
    auto q = QueueInput(ctx);
    TFD_OP_REQUIRES_OK_ASYNC(ctx, q.status(), done);
    TFD_OP_REQUIRES_OK_ASYNC(ctx, CheckComponentTypes(**q, types_), done);
    int64_t n = 1;
    if (many_) TFD_OP_REQUIRES_OK_ASYNC(ctx, CountToDequeue(ctx, **q, &n), done);
    (*q)->TryDequeue(n, take_, &ctx.cancellation(),
                     [many = many_, &ctx, q = *q, done = std::move(done)](
                         const Status& s, std::vector<Queue::Tuple> got) {
                       if (s.ok()) {
                         ctx.SetStatus(many ? Stack(ctx, *q, got) : Single(ctx, got));
                       } else {
                         ctx.SetStatus(s);
                       }
                       done();
                     });
  }

 private:
  static Status CountToDequeue(const OpKernelContext& ctx, const Queue& q, int64_t* n) {
    const Tensor& nt = ctx.input(1);
    if (nt.rank() != 0) return errors::InvalidArgument("n must be a scalar but is ", nt.Describe());
    *n = nt.scalar<int32_t>();
    if (*n < 0) return errors::InvalidArgument("n must be >= 0 but is ", *n);
    if (q.shapes().empty()) {
      return errors::InvalidArgument(ctx.node().op, " needs queue '", q.name(),
                                     "' to have fully defined component shapes");
    }
    return OkStatus();
  }

  static Status Single(OpKernelContext& ctx, std::vector<Queue::Tuple>& got) {
    for (size_t i = 0; i < got[0].size(); ++i)
      ctx.set_output(static_cast<int>(i), std::move(got[0][i]));
    return OkStatus();
  }

  // Stacks each component along a new dimension 0; a PaddingFIFOQueue's
  // elements padded with zeros (empty strings) to the largest of each
  // unknown dimension, as TensorFlow's.
  static Status Stack(OpKernelContext& ctx, const Queue& q, const std::vector<Queue::Tuple>& got) {
    for (size_t i = 0; i < q.shapes().size(); ++i) {
      const TensorShape slot = SlotShape(q, got, i);
      TensorShape shape = slot;
      shape.InsertDim(0, static_cast<int64_t>(got.size()));
      Tensor* out;
      TFD_RETURN_IF_ERROR(ctx.allocate_output(static_cast<int>(i), shape, &out));
      if (!q.shapes()[i].IsFullyDefined() && out->dtype() != DType::kString) {
        std::memset(out->raw_data(), 0, out->total_bytes());
      }
      for (size_t k = 0; k < got.size(); ++k)
        CopyRow(got[k][i], out, static_cast<int64_t>(k), slot);
    }
    return OkStatus();
  }

  std::vector<DType> types_;
  int64_t timeout_ms_ = -1;
  bool many_ = false;
  Queue::Take take_ = Queue::Take::kExactly;
};

class QueueSizeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  bool is_cheap() const override { return true; }
  void Compute(OpKernelContext& ctx) override {
    auto q = QueueInput(ctx);
    TFD_OP_REQUIRES_OK(ctx, q.status());
    Tensor* out;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, TensorShape(), &out));
    out->scalar<int32_t>() = static_cast<int32_t>((*q)->size());
  }
};

class QueueIsClosedOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  bool is_cheap() const override { return true; }
  void Compute(OpKernelContext& ctx) override {
    auto q = QueueInput(ctx);
    TFD_OP_REQUIRES_OK(ctx, q.status());
    Tensor* out;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, TensorShape(), &out));
    out->scalar<bool>() = (*q)->closed();
  }
};

class QueueCloseOp : public OpKernel {
 public:
  explicit QueueCloseOp(OpKernelConstruction& c) : OpKernel(c) {
    c.SetStatus(c.GetAttr("cancel_pending_enqueues", &cancel_pending_enqueues_));
  }
  void Compute(OpKernelContext& ctx) override {
    auto q = QueueInput(ctx);
    TFD_OP_REQUIRES_OK(ctx, q.status());
    (*q)->Close(cancel_pending_enqueues_);
  }

 private:
  bool cancel_pending_enqueues_ = false;
};

// The queue's shapes live on the queue's node, out of reach here: only n
// (its rank, and its sign when it is a constant) can be checked at graph time.
Status DequeueManyShape(InferenceContext& c) {
  TFD_RETURN_IF_ERROR(c.WithRank(1, 0));
  if (auto n = c.InputAsInts(1); n && n->size() == 1 && (*n)[0] < 0) {
    return errors::InvalidArgument("n must be >= 0 but is ", (*n)[0]);
  }
  return shape_fns::Unknown(c);
}

// The definition every queue-making op shares: its handle, component
// types and shapes, capacity, the kind's own attrs (`extra`), container and
// shared_name, and `doc`.
OpDefBuilder QueueDef(const char* name, const std::vector<std::string>& extra, std::string doc) {
  OpDefBuilder b(name);
  b.Output("handle: Ref(string)")
      .Attr("component_types: list(type) >= 1")
      .Attr("shapes: list(shape) >= 0 = []")
      .Attr("capacity: int = -1");
  for (const std::string& attr : extra) b.Attr(attr);
  b.Attr("container: string = \"\"")
      .Attr("shared_name: string = \"\"")
      .SetIsStateful()
      .Doc(std::move(doc));
  return b;
}

}  // namespace

Status RegisterQueueOps(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(r.Add<QueueOp>(
      QueueDef("FIFOQueue", {},
               "A first-in first-out queue of tuples of tensors kept by the task, found by "
               "container and shared_name (the node name when empty); capacity is positive, "
               "or -1 for unbounded (any other value is INVALID_ARGUMENT when the graph is "
               "checked); shapes fully defined, or [] to allow any. Shape: a reference, no "
               "value shape."),
      QueueShape));
  TFD_RETURN_IF_ERROR(r.Add<QueueOp>(
      QueueDef("PaddingFIFOQueue", {},
               "A FIFOQueue whose shapes may leave dimensions unknown (-1; the rank must be "
               "known), along which elements vary: QueueDequeueMany and QueueDequeueUpTo "
               "pad each element with zeros (empty strings) to the largest size of each such "
               "dimension among those dequeued together. Shape: a reference, no value shape."),
      QueueShape));
  TFD_RETURN_IF_ERROR(r.Add<QueueOp>(
      QueueDef("RandomShuffleQueue",
               {"min_after_dequeue: int = 0", "seed: int = 0", "seed2: int = 0"},
               "A queue that hands out a random element among those it holds; while open it "
               "keeps min_after_dequeue of them (a dequeue waits for more), once closed it "
               "hands out the rest. min_after_dequeue must be below the capacity. seed and "
               "seed2 key its draws (both 0: a different order every run). Otherwise as "
               "FIFOQueue. Shape: a reference, no value shape."),
      QueueShape));
  TFD_RETURN_IF_ERROR(r.Add<QueueEnqueueOp>(
      OpDefBuilder("QueueEnqueue")
          .Input("handle: Ref(string)")
          .Input("components: Tcomponents")
          .Attr("Tcomponents: list(type) >= 1")
          .Attr("timeout_ms: int = -1")
          .SetIsStateful()
          .Doc("Adds one element, waiting (without a thread) while the queue is full; "
               "CANCELLED once the queue is closed. timeout_ms is accepted and ignored: the "
               "step deadline bounds the wait. Shape: no outputs."),
      shape_fns::NoOutputs));
  TFD_RETURN_IF_ERROR(r.Add<QueueEnqueueOp>(
      OpDefBuilder("QueueEnqueueMany")
          .Input("handle: Ref(string)")
          .Input("components: Tcomponents")
          .Attr("Tcomponents: list(type) >= 1")
          .Attr("timeout_ms: int = -1")
          .SetIsStateful()
          .Doc("Adds the rows (dimension 0) of the components as elements, in order, waiting "
               "for room as needed. Shape: no outputs."),
      shape_fns::NoOutputs));
  TFD_RETURN_IF_ERROR(r.Add<QueueDequeueOp>(
      OpDefBuilder("QueueDequeue")
          .Input("handle: Ref(string)")
          .Output("components: component_types")
          .Attr("component_types: list(type) >= 1")
          .Attr("timeout_ms: int = -1")
          .SetIsStateful()
          .Doc("Removes the oldest element, waiting (without a thread) while the queue is "
               "empty; OUT_OF_RANGE once it is closed and empty. Shape: the queue's component "
               "shapes, known at run time."),
      shape_fns::Unknown));
  TFD_RETURN_IF_ERROR(r.Add<QueueDequeueOp>(
      OpDefBuilder("QueueDequeueMany")
          .Input("handle: Ref(string)")
          .Input("n: int32")
          .Output("components: component_types")
          .Attr("component_types: list(type) >= 1")
          .Attr("timeout_ms: int = -1")
          .SetIsStateful()
          .Doc("Removes n elements and stacks them along a new dimension 0; the queue must "
               "have fully defined shapes. Shape: [n] + the queue's component shapes, known at run "
               "time; n must be a scalar."),
      DequeueManyShape));
  TFD_RETURN_IF_ERROR(r.Add<QueueDequeueOp>(
      OpDefBuilder("QueueDequeueUpTo")
          .Input("handle: Ref(string)")
          .Input("n: int32")
          .Output("components: component_types")
          .Attr("component_types: list(type) >= 1")
          .Attr("timeout_ms: int = -1")
          .SetIsStateful()
          .Doc("As QueueDequeueMany, but once the queue is closed and holds fewer than n "
               "elements (with none on their way) it takes what is left; OUT_OF_RANGE when "
               "that is nothing. Shape: [<= n] + the queue's component shapes, known at run "
               "time; n must be a scalar."),
      DequeueManyShape));
  TFD_RETURN_IF_ERROR(
      r.Add<QueueSizeOp>(OpDefBuilder("QueueSize")
                             .Input("handle: Ref(string)")
                             .Output("size: int32")
                             .SetIsStateful()
                             .Doc("The number of elements in the queue. Shape: []."),
                         shape_fns::Scalar));
  TFD_RETURN_IF_ERROR(r.Add<QueueIsClosedOp>(OpDefBuilder("QueueIsClosed")
                                                 .Input("handle: Ref(string)")
                                                 .Output("is_closed: bool")
                                                 .SetIsStateful()
                                                 .Doc("Whether the queue is closed. Shape: []."),
                                             shape_fns::Scalar));
  TFD_RETURN_IF_ERROR(r.Add<QueueCloseOp>(
      OpDefBuilder("QueueClose")
          .Input("handle: Ref(string)")
          .Attr("cancel_pending_enqueues: bool = false")
          .SetIsStateful()
          .Doc("Closes the queue: later enqueues fail with CANCELLED (pending ones too with "
               "cancel_pending_enqueues); dequeues drain what is left, then fail with "
               "OUT_OF_RANGE. Shape: no outputs."),
      shape_fns::NoOutputs));
  return OkStatus();
}

}  // namespace tfd::kernels::data_flow
