// The Criteo input pipeline ops: CriteoDataset (creates or finds the
// streamed dataset resource), CriteoNextBatch (labels, integer features and
// hashed category rows), CriteoDatasetEpoch and CriteoDatasetReset.
#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/allowed_cpus.h"
#include "common/op_kernel.h"
#include "kernels/data/criteo_dataset.h"
#include "kernels/data/data_ops_internal.h"
#include "kernels/data/dataset_op_util.h"
#include "kernels/data/input_position.h"

namespace tfd::kernels::data {
namespace {

Status CheckCriteoFiles(const std::vector<std::string>& paths, int64_t num_buckets) {
  if (paths.empty()) return errors::InvalidArgument("paths must name at least one file");
  for (const std::string& p : paths) {
    if (p.empty()) return errors::InvalidArgument("paths must not hold an empty path");
  }
  if (num_buckets < 1 || num_buckets > (int64_t{1} << 32)) {
    return errors::InvalidArgument("num_buckets must be in [1, 2^32], not ", num_buckets);
  }
  return OkStatus();
}

// The attrs a shape function can check without knowing the task.
Status CheckCriteoAttrs(const std::vector<std::string>& paths, int64_t num_buckets,
                        int64_t epochs, const std::string& shard, int64_t num_shards) {
  TFD_RETURN_IF_ERROR(CheckCriteoFiles(paths, num_buckets));
  return CheckDatasetShardAttrs(epochs, shard, num_shards);
}

class CriteoDatasetOp : public OpKernel {
 public:
  explicit CriteoDatasetOp(OpKernelConstruction& c) : OpKernel(c) {
    c.SetStatus(c.GetAttr("paths", &spec_.paths));
    c.SetStatus(c.GetAttr("num_buckets", &spec_.num_buckets));
    c.SetStatus(c.GetAttr("epochs", &spec_.epochs));
    if (!c.status().ok()) return;
    c.SetStatus(CheckCriteoFiles(spec_.paths, spec_.num_buckets));
    if (!c.status().ok()) return;
    ReadDatasetPlacement(c, spec_.epochs, &where_);
    spec_.shard_index = where_.shard_index;
    spec_.num_shards = where_.num_shards;
  }

  void Compute(OpKernelContext& ctx) override {
    const std::string& name = where_.shared_name.empty() ? ctx.node().name : where_.shared_name;
    auto ds = FindOrCreateDataset<CriteoDataset>(ctx.resources(), where_.container, name, spec_);
    TFD_OP_REQUIRES_OK(ctx, ds.status());
    TFD_OP_REQUIRES_OK(ctx, (*ds)->CheckSameSpec(spec_));
    TFD_OP_REQUIRES_OK(ctx, (*ds)->Open(ctx.env()));
    ctx.set_output_ref(0, *ds);
  }

 private:
  CriteoDatasetSpec spec_;
  DatasetPlacement where_;
};

Status CriteoDatasetShape(InferenceContext& c) {
  TFD_ASSIGN_OR_RETURN(auto paths, c.GetAttr<std::vector<std::string>>("paths"));
  TFD_ASSIGN_OR_RETURN(auto buckets, c.GetAttr<int64_t>("num_buckets"));
  TFD_ASSIGN_OR_RETURN(auto epochs, c.GetAttr<int64_t>("epochs"));
  TFD_ASSIGN_OR_RETURN(auto shard, c.GetAttr<std::string>("shard"));
  TFD_ASSIGN_OR_RETURN(auto num_shards, c.GetAttr<int64_t>("num_shards"));
  TFD_RETURN_IF_ERROR(CheckCriteoAttrs(paths, buckets, epochs, shard, num_shards));
  return shape_fns::Unknown(c);
}

class CriteoNextBatchOp : public OpKernel {
 public:
  explicit CriteoNextBatchOp(OpKernelConstruction& c) : OpKernel(c) {
    c.SetStatus(c.GetAttr("batch_size", &batch_size_));
    c.SetStatus(c.GetAttr("drop_remainder", &drop_remainder_));
    c.SetStatus(c.GetAttr("prefetch", &prefetch_));
    // As IdxNextBatch: a task allowed one CPU has none to read ahead on.
    prefetch_ = prefetch_ && NumAllowedCpus() > 1;
    if (c.status().ok() && batch_size_ > kMaxTensorElements / kCriteoCategorical) {
      c.SetStatus(errors::InvalidArgument("batch_size ", batch_size_, " makes ids larger than "
                                          "the largest tensor (", kMaxTensorElements,
                                          " elements)"));
    }
  }

  void Compute(OpKernelContext& ctx) override {
    auto ds = ctx.input_ref<CriteoDataset>(0);
    TFD_OP_REQUIRES_OK(ctx, ds.status());
    CriteoDataset& dataset = **ds;
    TFD_OP_REQUIRES_OK(ctx, dataset.BindReader(ctx.step().session));
    auto batch = dataset.Next(batch_size_, drop_remainder_, ctx.deadline());
    TFD_OP_REQUIRES_OK(ctx, batch.status());
    const int64_t n = batch->size();
    TFD_OP_REQUIRES_OK(ctx, Emit(ctx, 0, {n}, batch->labels));
    TFD_OP_REQUIRES_OK(ctx, Emit(ctx, 1, {n, kCriteoDense}, batch->dense));
    TFD_OP_REQUIRES_OK(ctx, Emit(ctx, 2, {n, kCriteoCategorical}, batch->ids));
    if (prefetch_) dataset.ReadAhead(batch_size_, drop_remainder_);
  }

 private:
  template <typename T>
  static Status Emit(OpKernelContext& ctx, int output, std::vector<int64_t> dims,
                     const std::vector<T>& values) {
    TFD_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::Make(std::move(dims)));
    Tensor* out = nullptr;
    TFD_RETURN_IF_ERROR(ctx.allocate_output_for_overwrite(output, shape, &out));
    std::copy(values.begin(), values.end(), out->data<T>());
    return OkStatus();
  }

  int64_t batch_size_ = 1;
  bool drop_remainder_ = false;
  bool prefetch_ = true;
};

Status CriteoNextBatchShape(InferenceContext& c) {
  TFD_ASSIGN_OR_RETURN(auto batch_size, c.GetAttr<int64_t>("batch_size"));
  TFD_ASSIGN_OR_RETURN(auto drop_remainder, c.GetAttr<bool>("drop_remainder"));
  const int64_t rows = drop_remainder ? batch_size : -1;
  c.set_output(0, PartialShape({rows}));
  c.set_output(1, PartialShape({rows, kCriteoDense}));
  c.set_output(2, PartialShape({rows, kCriteoCategorical}));
  return OkStatus();
}

class CriteoDatasetEpochOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  bool is_cheap() const override { return true; }

  void Compute(OpKernelContext& ctx) override {
    auto ds = ctx.input_ref<CriteoDataset>(0);
    TFD_OP_REQUIRES_OK(ctx, ds.status());
    ctx.set_output(0, Tensor::Scalar<int64_t>((*ds)->epoch()));
  }
};

class CriteoDatasetResetOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  bool is_cheap() const override { return true; }

  void Compute(OpKernelContext& ctx) override {
    auto ds = ctx.input_ref<CriteoDataset>(0);
    TFD_OP_REQUIRES_OK(ctx, ds.status());
    TFD_OP_REQUIRES_OK(ctx, (*ds)->BindReader(ctx.step().session));
    (*ds)->Reset();
  }
};

}  // namespace

Status RegisterCriteoOps(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(r.Add<CriteoDatasetOp>(
      OpDefBuilder("CriteoDataset")
          .Output("handle: Ref(string)")
          .Attr("paths: list(string)")
          .Attr("num_buckets: int = 1048576")
          .Attr("epochs: int = 1")
          .Attr("shard: string = \"auto\"")
          .Attr("num_shards: int = 0")
          .Attr("container: string = \"\"")
          .Attr("shared_name: string = \"\"")
          .SetIsStateful()
          .Doc("Criteo display-advertising TSV files (label, I1..I13, C1..C26; tab-separated; "
               "any feature may be empty; CRLF line ends accepted), read from inside the "
               "task's --data-dir as one stream, in file order, without loading them whole. "
               "With shard = \"auto\" and num_shards = N > 0, task K of its job reads lines "
               "K, K+N, ... (counted over all files), so one graph serves every worker. The "
               "cursor is kept by the task under container/shared_name (the node name when "
               "empty), saved in its checkpoints, and moved by one master session at a time, "
               "as IdxDataset's. epochs = -1 repeats forever. Shape: a reference."),
      CriteoDatasetShape));
  TFD_RETURN_IF_ERROR(r.Add<CriteoNextBatchOp>(
      OpDefBuilder("CriteoNextBatch")
          .Input("handle: Ref(string)")
          .Output("labels: float32")
          .Output("dense: float32")
          .Output("ids: int64")
          .Attr("batch_size: int >= 1")
          .Attr("drop_remainder: bool = false")
          .Attr("prefetch: bool = true")
          .SetIsStateful()
          .Doc("The dataset's next batch_size examples, continuing across epochs: labels (0 "
               "or 1), the 13 integer features as float32 (0 where empty; no transform), and "
               "the 26 categories as rows of a table of num_buckets rows: value x of field f "
               "(0-based) gives fmix32(x ^ (0x85EBCA77 * (f + 1) mod 2^32)) mod num_buckets, "
               "an empty field -1. A malformed line is INVALID_ARGUMENT naming its file and "
               "line number. The last batch may be short (dropped when drop_remainder); after "
               "it, OUT_OF_RANGE. With prefetch, on a task that may use more than one CPU, the "
               "next batch is read on the dataset's thread while the step computes; it counts "
               "as unread until a run takes it. Shape: labels [b], dense [b, 13], ids [b, 26], "
               "b being batch_size with drop_remainder and unknown otherwise."),
      CriteoNextBatchShape));
  TFD_RETURN_IF_ERROR(r.Add<CriteoDatasetEpochOp>(
      OpDefBuilder("CriteoDatasetEpoch")
          .Input("handle: Ref(string)")
          .Output("epoch: int64")
          .SetIsStateful()
          .Doc("The epoch of the dataset's next example, counted from 0. Shape: []."),
      shape_fns::Scalar));
  TFD_RETURN_IF_ERROR(r.Add<CriteoDatasetResetOp>(
      OpDefBuilder("CriteoDatasetReset")
          .Input("handle: Ref(string)")
          .SetIsStateful()
          .Doc("Moves the dataset's cursor back to the start of epoch 0, dropping a batch read "
               "ahead. Shape: no outputs."),
      shape_fns::NoOutputs));
  return OkStatus();
}

}  // namespace tfd::kernels::data
