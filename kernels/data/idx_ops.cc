// The MNIST input pipeline ops: IdxDataset (creates or finds the dataset
// resource, reading its files once per task), IdxNextBatch (the next batch,
// scaled to [0, 1]) and IdxDatasetEpoch (where the cursor is, for progress).
#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/op_kernel.h"
#include "kernels/data/batch_prefetch.h"
#include "kernels/data/data_ops_internal.h"
#include "kernels/data/dataset_op_util.h"
#include "kernels/data/idx_batch_op.h"
#include "kernels/data/idx_dataset.h"
#include "kernels/data/idx_dataset_op.h"
#include "kernels/data/input_position.h"

namespace tfd::kernels::data {

namespace {

Status CheckIdxPaths(const std::string& images_path, const std::string& labels_path) {
  if (images_path.empty() || labels_path.empty()) {
    return errors::InvalidArgument("images_path and labels_path must both be set, but ",
                                   images_path.empty() ? "images_path" : "labels_path",
                                   " is empty");
  }
  return OkStatus();
}

// The dataset attrs a shape function can check without knowing the task.
Status CheckDatasetAttrs(const std::string& images_path, const std::string& labels_path,
                         int64_t epochs, const std::string& shard, int64_t num_shards) {
  TFD_RETURN_IF_ERROR(CheckIdxPaths(images_path, labels_path));
  return CheckDatasetShardAttrs(epochs, shard, num_shards);
}

Status ReadIdxFiles(OpKernelConstruction& c, IdxDatasetSpec& spec) {
  TFD_RETURN_IF_ERROR(c.GetAttr("images_path", &spec.images_path));
  TFD_RETURN_IF_ERROR(c.GetAttr("labels_path", &spec.labels_path));
  return CheckIdxPaths(spec.images_path, spec.labels_path);
}

class IdxDatasetOp : public IdxDatasetKernel {
 public:
  explicit IdxDatasetOp(OpKernelConstruction& c) : IdxDatasetKernel(c, ReadIdxFiles) {}
};

Status IdxDatasetShape(InferenceContext& c) {
  TFD_ASSIGN_OR_RETURN(auto images, c.GetAttr<std::string>("images_path"));
  TFD_ASSIGN_OR_RETURN(auto labels, c.GetAttr<std::string>("labels_path"));
  TFD_ASSIGN_OR_RETURN(auto epochs, c.GetAttr<int64_t>("epochs"));
  TFD_ASSIGN_OR_RETURN(auto shard, c.GetAttr<std::string>("shard"));
  TFD_ASSIGN_OR_RETURN(auto num_shards, c.GetAttr<int64_t>("num_shards"));
  TFD_RETURN_IF_ERROR(CheckDatasetAttrs(images, labels, epochs, shard, num_shards));
  return shape_fns::Unknown(c);
}

// One-hot labels are float32 and index labels int32; the op-spec language
// takes an output's dtype from a type attr only, so Tlabels must agree.
Status CheckLabelAttrs(bool one_hot, DType labels_type, int64_t num_classes) {
  const DType want = one_hot ? DType::kFloat32 : DType::kInt32;
  if (labels_type != want) {
    return errors::InvalidArgument("one_hot = ", one_hot ? "true" : "false", " gives ",
                                   DTypeName(want), " labels, so Tlabels must be ",
                                   DTypeName(want), ", not ", DTypeName(labels_type));
  }
  if (num_classes < 1) {
    return errors::InvalidArgument("num_classes must be >= 1, not ", num_classes);
  }
  return OkStatus();
}

// What an IdxNextBatch node asks of its dataset, and the tensors that makes.
struct BatchRequest {
  int64_t batch_size = 1;
  bool one_hot = false;
  int64_t num_classes = 10;
};

// The batch's images scaled to [0, 1] and its labels, allocated as `node`'s
// outputs would be (limits, budget). Runs on the step's thread or, for a
// batch drawn ahead, on the dataset's prefetch thread.
StatusOr<BatchTensors> MakeBatchTensors(const IdxDataset::Batch& batch, const BatchRequest& req,
                                        const SizeLimits& limits,
                                        const std::shared_ptr<MemoryBudget>& budget,
                                        const std::string& node) {
  const IdxDataset::Examples& ex = *batch.examples;
  const std::vector<int64_t>& idx = batch.indices;
  const auto n = static_cast<int64_t>(idx.size());
  const int64_t row = ex.images.rows * ex.images.cols * ex.channels;
  if (req.one_hot) {
    for (int64_t k = 0; k < n; ++k) {
      const int label = ex.labels.labels[static_cast<size_t>(idx[k])];
      if (label >= req.num_classes) {
        return errors::InvalidArgument("label ", label, " of example ", idx[k], " in IDX file '",
                                       ex.labels_path, "' is not below num_classes = ",
                                       req.num_classes);
      }
    }
  }
  auto allocate = [&](DType dtype, std::vector<int64_t> dims, int output,
                      Fill fill) -> StatusOr<Tensor> {
    TFD_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::Make(std::move(dims)));
    return AllocateKernelOutput(limits, budget, nullptr, dtype, shape, node, output, fill);
  };
  BatchTensors out;
  // Every pixel is written below; the one-hot labels rely on the zeros.
  TFD_ASSIGN_OR_RETURN(out.images, allocate(DType::kFloat32, {n, row}, 0, Fill::kNone));
  float* dst = out.images.data<float>();
  // The rows are scattered over a file larger than the caches, and the
  // loads of each row's first bytes were most of this function's time
  // (perf). The next rows' loads are issued while this one converts.
  constexpr int64_t kRowsAhead = 4;
  auto fetch_row = [&](int64_t k) {
    const uint8_t* src = ex.images.pixels.data() + idx[k] * row;
    for (int64_t j = 0; j < row; j += 64) __builtin_prefetch(src + j);
  };
  for (int64_t k = 0; k < std::min(n, kRowsAhead); ++k) fetch_row(k);
  for (int64_t k = 0; k < n; ++k) {
    if (k + kRowsAhead < n) fetch_row(k + kRowsAhead);
    const uint8_t* src = ex.images.pixels.data() + idx[k] * row;
    for (int64_t j = 0; j < row; ++j) dst[k * row + j] = static_cast<float>(src[j]) / 255.0f;
  }
  if (!req.one_hot) {
    TFD_ASSIGN_OR_RETURN(out.labels, allocate(DType::kInt32, {n}, 1, Fill::kNone));
    int32_t* labels = out.labels.data<int32_t>();
    for (int64_t k = 0; k < n; ++k) labels[k] = ex.labels.labels[static_cast<size_t>(idx[k])];
    return out;
  }
  TFD_ASSIGN_OR_RETURN(out.labels, allocate(DType::kFloat32, {n, req.num_classes}, 1, Fill::kZeros));
  float* labels = out.labels.data<float>();  // zero-filled
  for (int64_t k = 0; k < n; ++k) {
    labels[k * req.num_classes + ex.labels.labels[static_cast<size_t>(idx[k])]] = 1.0f;
  }
  return out;
}

class IdxNextBatchOp : public IdxBatchOpBase {
 public:
  explicit IdxNextBatchOp(OpKernelConstruction& c) : IdxBatchOpBase(c) {
    DType labels_type = DType::kInvalid;
    req_.batch_size = batch_size();
    c.SetStatus(c.GetAttr("one_hot", &req_.one_hot));
    c.SetStatus(c.GetAttr("num_classes", &req_.num_classes));
    c.SetStatus(c.GetAttr("Tlabels", &labels_type));
    if (!c.status().ok()) return;
    c.SetStatus(CheckLabelAttrs(req_.one_hot, labels_type, req_.num_classes));
  }

 private:
  PreparedBatch::Make Maker(IdxDataset::Batch batch, const KernelEnv& env) const override {
    return [batch = std::move(batch), req = req_, limits = env.limits, budget = env.memory,
            node = name()] { return MakeBatchTensors(batch, req, limits, budget, node); };
  }

  BatchRequest req_;
};

Status IdxNextBatchShape(InferenceContext& c) {
  TFD_ASSIGN_OR_RETURN(auto batch_size, c.GetAttr<int64_t>("batch_size"));
  TFD_ASSIGN_OR_RETURN(auto one_hot, c.GetAttr<bool>("one_hot"));
  TFD_ASSIGN_OR_RETURN(auto num_classes, c.GetAttr<int64_t>("num_classes"));
  TFD_ASSIGN_OR_RETURN(auto drop_remainder, c.GetAttr<bool>("drop_remainder"));
  TFD_ASSIGN_OR_RETURN(auto labels_type, c.GetAttr<DType>("Tlabels"));
  TFD_RETURN_IF_ERROR(CheckLabelAttrs(one_hot, labels_type, num_classes));
  // Only drop_remainder guarantees full batches: the dataset's epoch count
  // (which decides whether a short last batch can happen) is not visible here.
  const int64_t rows = drop_remainder ? batch_size : -1;
  c.set_output(0, PartialShape({rows, -1}));
  c.set_output(1, one_hot ? PartialShape({rows, num_classes}) : PartialShape({rows}));
  return OkStatus();
}

// IdxDatasetEpoch and IdxDatasetProgress: one scalar read from the dataset.
template <typename T, T (IdxDataset::*kRead)() const>
class IdxDatasetScalarOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  bool is_cheap() const override { return true; }

  void Compute(OpKernelContext& ctx) override {
    auto ds = ctx.input_ref<IdxDataset>(0);
    TFD_OP_REQUIRES_OK(ctx, ds.status());
    ctx.set_output(0, Tensor::Scalar<T>(((**ds).*kRead)()));
  }
};
using IdxDatasetEpochOp = IdxDatasetScalarOp<int64_t, &IdxDataset::epoch>;
using IdxDatasetProgressOp = IdxDatasetScalarOp<double, &IdxDataset::progress>;

class IdxDatasetResetOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  bool is_cheap() const override { return true; }

  void Compute(OpKernelContext& ctx) override {
    auto ds = ctx.input_ref<IdxDataset>(0);
    TFD_OP_REQUIRES_OK(ctx, ds.status());
    TFD_OP_REQUIRES_OK(ctx, (*ds)->BindReader(ctx.step().session));
    (*ds)->Reset();
  }
};

}  // namespace

Status RegisterIdxOps(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(r.Add<IdxDatasetOp>(
      OpDefBuilder("IdxDataset")
          .Output("handle: Ref(string)")
          .Attr("images_path: string")
          .Attr("labels_path: string")
          .Attr("shuffle: bool = true")
          .Attr("seed: int = 0")
          .Attr("seed2: int = 0")
          .Attr("epochs: int = -1")
          .Attr("shard: string = \"auto\"")
          .Attr("num_shards: int = 0")
          .Attr("container: string = \"\"")
          .Attr("shared_name: string = \"\"")
          .SetIsStateful()
          .Doc("An MNIST-format dataset (uint8 IDX images [n, rows, cols] and labels [n], raw, "
               "not gzipped) read once per task from inside its --data-dir, with a cursor kept "
               "by the task under container/shared_name (the node name when empty): it is in "
               "the task's checkpoints, and a session reads on where the last one left it. "
               "One master session at a time moves it (IdxNextBatch, IdxDatasetReset): another "
               "session that tries while the first holds partitions on the task gets "
               "FAILED_PRECONDITION naming both (a second trainer on one task would silently "
               "take half the batches); a different shared_name gives a cursor of its own. "
               "Each epoch "
               "visits the examples in a permutation fixed by (seed, seed2, epoch) (seed 0 "
               "included; seed2 as TF1's op-level seed, 0 when unused), "
               "or in file order without shuffle; epochs = -1 repeats forever. With shard = "
               "\"auto\" and num_shards = N > 0, task K of its job reads places K, K+N, ... of "
               "each epoch's permutation, so workers sharing a seed read disjoint shards without "
               "the graph naming the task; num_shards = 0 or shard = \"none\" reads everything. "
               "Shape: a reference, no value shape."),
      IdxDatasetShape));
  TFD_RETURN_IF_ERROR(r.Add<IdxNextBatchOp>(
      OpDefBuilder("IdxNextBatch")
          .Input("handle: Ref(string)")
          .Output("images: float32")
          .Output("labels: Tlabels")
          .Attr("batch_size: int >= 1")
          .Attr("one_hot: bool = false")
          .Attr("num_classes: int = 10")
          .Attr("drop_remainder: bool = false")
          .Attr("prefetch: bool = true")
          .Attr("Tlabels: {int32, float32} = int32")
          .SetIsStateful()
          .Doc("The dataset's next batch_size examples, continuing across epochs: images "
               "flattened and scaled to [0, 1], labels as int32 class indices, or as float32 "
               "one-hot rows when one_hot (then Tlabels must be float32). The last batch of the "
               "last epoch may be short (dropped when drop_remainder); after it, OUT_OF_RANGE. "
               "With prefetch, on a task that may use more than one CPU, the next batch is "
               "drawn and made on the dataset's own thread "
               "while the step computes; it counts as unread (for the dataset's position, "
               "epoch and checkpoints) until a run takes it, and batches come in the same order "
               "as without. "
               "Shape: images [b, rows*cols], labels [b] or [b, num_classes], where b is "
               "batch_size with drop_remainder and unknown otherwise."),
      IdxNextBatchShape));
  TFD_RETURN_IF_ERROR(r.Add<IdxDatasetEpochOp>(
      OpDefBuilder("IdxDatasetEpoch")
          .Input("handle: Ref(string)")
          .Output("epoch: int64")
          .SetIsStateful()
          .Doc("The dataset's current epoch, counted from 0: how many epochs its cursor has "
               "completed (equal to epochs once exhausted). Shape: []."),
      shape_fns::Scalar));
  TFD_RETURN_IF_ERROR(r.Add<IdxDatasetResetOp>(
      OpDefBuilder("IdxDatasetReset")
          .Input("handle: Ref(string)")
          .SetIsStateful()
          .Doc("Moves the dataset's cursor back to the start of epoch 0, as if new: what a "
               "training run does first on a task whose dataset an earlier run read (the "
               "cursor belongs to the task, and to one session at a time: see IdxDataset). "
               "Shape: no outputs."),
      shape_fns::NoOutputs));
  TFD_RETURN_IF_ERROR(r.Add<IdxDatasetProgressOp>(
      OpDefBuilder("IdxDatasetProgress")
          .Input("handle: Ref(string)")
          .Output("epoch: float64")
          .SetIsStateful()
          .Doc("How far the dataset's cursor is, in epochs of its shard: completed epochs "
               "plus the fraction of the current one (2.25 is a quarter into the third). "
               "A trainer's progress display fetches it. Shape: []."),
      shape_fns::Scalar));
  return OkStatus();
}

}  // namespace tfd::kernels::data
