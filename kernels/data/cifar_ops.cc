// The CIFAR input pipeline ops: CifarDataset (creates or finds the dataset
// resource, reading its binary files once per task) and CifarNextBatch (the
// next batch as NHWC images). The dataset is an IdxDataset holding CIFAR
// records, so IdxDatasetEpoch, IdxDatasetProgress and IdxDatasetReset read
// and move its cursor too.
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/op_kernel.h"
#include "kernels/data/cifar_file.h"
#include "kernels/data/data_ops_internal.h"
#include "kernels/data/dataset_op_util.h"
#include "kernels/data/idx_batch_op.h"
#include "kernels/data/idx_dataset.h"
#include "kernels/data/idx_dataset_op.h"

namespace tfd::kernels::data {
namespace {

Status CheckCifarFiles(const std::vector<std::string>& paths, int64_t label_bytes) {
  if (paths.empty()) return errors::InvalidArgument("paths must name at least one CIFAR file");
  for (const std::string& p : paths) {
    if (p.empty()) return errors::InvalidArgument("paths must not hold an empty path");
  }
  if (label_bytes != 1 && label_bytes != 2) {
    return errors::InvalidArgument("label_bytes must be 1 (CIFAR-10) or 2 (CIFAR-100), not ",
                                   label_bytes);
  }
  return OkStatus();
}

Status ReadCifarFiles(OpKernelConstruction& c, IdxDatasetSpec& spec) {
  TFD_RETURN_IF_ERROR(c.GetAttr("paths", &spec.cifar_paths));
  TFD_RETURN_IF_ERROR(c.GetAttr("label_bytes", &spec.label_bytes));
  return CheckCifarFiles(spec.cifar_paths, spec.label_bytes);
}

class CifarDatasetOp : public IdxDatasetKernel {
 public:
  explicit CifarDatasetOp(OpKernelConstruction& c) : IdxDatasetKernel(c, ReadCifarFiles) {}
};

Status CifarDatasetShape(InferenceContext& c) {
  TFD_ASSIGN_OR_RETURN(auto paths, c.GetAttr<std::vector<std::string>>("paths"));
  TFD_ASSIGN_OR_RETURN(auto label_bytes, c.GetAttr<int64_t>("label_bytes"));
  TFD_ASSIGN_OR_RETURN(auto epochs, c.GetAttr<int64_t>("epochs"));
  TFD_ASSIGN_OR_RETURN(auto shard, c.GetAttr<std::string>("shard"));
  TFD_ASSIGN_OR_RETURN(auto num_shards, c.GetAttr<int64_t>("num_shards"));
  TFD_RETURN_IF_ERROR(CheckCifarFiles(paths, label_bytes));
  TFD_RETURN_IF_ERROR(CheckDatasetShardAttrs(epochs, shard, num_shards));
  return shape_fns::Unknown(c);
}

// Scales one image's bytes into `dst`: to [0, 1], or, standardized, to zero
// mean and unit variance (TF's per_image_standardization: the deviation is
// kept above 1/sqrt(n), so a flat image does not divide by zero).
void ScaleImage(const uint8_t* src, int64_t n, bool standardize, float* dst) {
  for (int64_t j = 0; j < n; ++j) dst[j] = static_cast<float>(src[j]) / 255.0f;
  if (!standardize) return;
  double sum = 0, sum_sq = 0;
  for (int64_t j = 0; j < n; ++j) {
    sum += dst[j];
    sum_sq += static_cast<double>(dst[j]) * dst[j];
  }
  const double mean = sum / static_cast<double>(n);
  const double variance = std::max(0.0, sum_sq / static_cast<double>(n) - mean * mean);
  const double scale =
      1.0 / std::max(std::sqrt(variance), 1.0 / std::sqrt(static_cast<double>(n)));
  for (int64_t j = 0; j < n; ++j) dst[j] = static_cast<float>((dst[j] - mean) * scale);
}

// The batch's images as float32 [n, 32, 32, 3] and its labels as int32 [n],
// allocated as `node`'s outputs would be; INVALID_ARGUMENT for a dataset of
// other images (an IDX one).
StatusOr<BatchTensors> MakeCifarTensors(const IdxDataset::Batch& batch, bool standardize,
                                        const SizeLimits& limits,
                                        const std::shared_ptr<MemoryBudget>& budget,
                                        const std::string& node) {
  const IdxDataset::Examples& ex = *batch.examples;
  if (ex.images.rows != kCifarSide || ex.images.cols != kCifarSide ||
      ex.channels != kCifarChannels) {
    return errors::InvalidArgument(node, ": CifarNextBatch reads 32x32x3 images, but its dataset "
                                   "holds ", ex.images.rows, "x", ex.images.cols, "x",
                                   ex.channels, " ones; give it a CifarDataset's handle");
  }
  const auto n = static_cast<int64_t>(batch.indices.size());
  const int64_t row = kCifarImageBytes;
  BatchTensors out;
  TFD_ASSIGN_OR_RETURN(TensorShape images_shape,
                       TensorShape::Make({n, kCifarSide, kCifarSide, kCifarChannels}));
  TFD_ASSIGN_OR_RETURN(out.images, AllocateKernelOutput(limits, budget, nullptr, DType::kFloat32,
                                                        images_shape, node, 0, Fill::kNone));
  TFD_ASSIGN_OR_RETURN(TensorShape labels_shape, TensorShape::Make({n}));
  TFD_ASSIGN_OR_RETURN(out.labels, AllocateKernelOutput(limits, budget, nullptr, DType::kInt32,
                                                        labels_shape, node, 1, Fill::kNone));
  float* images = out.images.data<float>();
  int32_t* labels = out.labels.data<int32_t>();
  for (int64_t k = 0; k < n; ++k) {
    const auto i = static_cast<size_t>(batch.indices[static_cast<size_t>(k)]);
    ScaleImage(ex.images.pixels.data() + i * static_cast<size_t>(row), row, standardize,
               images + k * row);
    labels[k] = ex.labels.labels[i];
  }
  return out;
}

class CifarNextBatchOp : public IdxBatchOpBase {
 public:
  explicit CifarNextBatchOp(OpKernelConstruction& c) : IdxBatchOpBase(c) {
    c.SetStatus(c.GetAttr("standardize", &standardize_));
  }

 private:
  PreparedBatch::Make Maker(IdxDataset::Batch batch, const KernelEnv& env) const override {
    return [batch = std::move(batch), standardize = standardize_, limits = env.limits,
            budget = env.memory, node = name()] {
      return MakeCifarTensors(batch, standardize, limits, budget, node);
    };
  }

  bool standardize_ = false;
};

Status CifarNextBatchShape(InferenceContext& c) {
  TFD_ASSIGN_OR_RETURN(auto batch_size, c.GetAttr<int64_t>("batch_size"));
  TFD_ASSIGN_OR_RETURN(auto drop_remainder, c.GetAttr<bool>("drop_remainder"));
  const int64_t rows = drop_remainder ? batch_size : -1;
  c.set_output(0, PartialShape({rows, kCifarSide, kCifarSide, kCifarChannels}));
  c.set_output(1, PartialShape({rows}));
  return OkStatus();
}

}  // namespace

Status RegisterCifarOps(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(r.Add<CifarDatasetOp>(
      OpDefBuilder("CifarDataset")
          .Output("handle: Ref(string)")
          .Attr("paths: list(string)")
          .Attr("label_bytes: int = 1")
          .Attr("shuffle: bool = true")
          .Attr("seed: int = 0")
          .Attr("seed2: int = 0")
          .Attr("epochs: int = -1")
          .Attr("shard: string = \"auto\"")
          .Attr("num_shards: int = 0")
          .Attr("container: string = \"\"")
          .Attr("shared_name: string = \"\"")
          .SetIsStateful()
          .Doc("CIFAR binary files (data_batch_1.bin ... test_batch.bin), read once per task "
               "from inside its --data-dir, in the order given, as one dataset: each record is "
               "label_bytes label bytes (1: CIFAR-10, labels 0..9; 2: CIFAR-100, a coarse "
               "label 0..19 then the fine label 0..99, which is the one used) and a 32x32 "
               "image as red, green and blue planes. A file whose size is not a whole number "
               "of records is INVALID_ARGUMENT naming it and the offset of the short record; "
               "a label out of range names its record. Shuffling, epochs, sharding "
               "(shard/num_shards), the cursor kept by the task under "
               "container/shared_name and checkpointed, and one reading session at a time "
               "are IdxDataset's; IdxDatasetEpoch, IdxDatasetProgress and IdxDatasetReset "
               "take its handle. Shape: a reference, no value shape."),
      CifarDatasetShape));
  TFD_RETURN_IF_ERROR(r.Add<CifarNextBatchOp>(
      OpDefBuilder("CifarNextBatch")
          .Input("handle: Ref(string)")
          .Output("images: float32")
          .Output("labels: int32")
          .Attr("batch_size: int >= 1")
          .Attr("standardize: bool = false")
          .Attr("drop_remainder: bool = false")
          .Attr("prefetch: bool = true")
          .SetIsStateful()
          .Doc("The dataset's next batch_size examples, continuing across epochs: images in "
               "NHWC order scaled to [0, 1] or, with standardize, each image moved to mean 0 "
               "and divided by max(its standard deviation, 1/sqrt(3072)) (TF's "
               "per_image_standardization); labels as int32 class indices. The last batch of "
               "the last epoch may be short (dropped when drop_remainder); after it, "
               "OUT_OF_RANGE. Prefetch is IdxNextBatch's. Shape: images [b, 32, 32, 3], labels "
               "[b], where b is batch_size with drop_remainder and unknown otherwise."),
      CifarNextBatchShape));
  return OkStatus();
}

}  // namespace tfd::kernels::data
