// DynamicPartition and DynamicStitch (and ParallelDynamicStitch): how
// TensorFlow's embedding_lookup spreads a batch of ids over the shards of a
// partitioned table ("mod": id % shards, "div": contiguous ranges) and puts
// the rows the shards return back in the batch's order. Their gradients are
// each other, as in TF's data_flow_grad.py.
#include <string>
#include <vector>

#include "common/op_kernel.h"
#include "kernels/array/array_ops_internal.h"
#include "kernels/array/array_util.h"
#include "kernels/math/grad_util.h"

namespace tfd::kernels::array {
namespace {

// Whether `prefix` is a prefix of `shape`.
bool IsPrefix(const TensorShape& prefix, const TensorShape& shape) {
  if (prefix.rank() > shape.rank()) return false;
  for (int d = 0; d < prefix.rank(); ++d) {
    if (prefix.dim(d) != shape.dim(d)) return false;
  }
  return true;
}

class DynamicPartitionOp : public OpKernel {
 public:
  explicit DynamicPartitionOp(OpKernelConstruction& c) : OpKernel(c) {
    c.SetStatus(c.GetAttr("num_partitions", &num_partitions_));
  }

  void Compute(OpKernelContext& ctx) override {
    const Tensor& data = ctx.input(0);
    const Tensor& partitions = ctx.input(1);
    TFD_OP_REQUIRES(ctx, IsPrefix(partitions.shape(), data.shape()),
                    errors::InvalidArgument("partitions ", partitions.Describe(),
                                            " must be a prefix of data's shape, got data ",
                                            data.Describe()));
    const int64_t n = partitions.num_elements();
    const int32_t* p = partitions.data<int32_t>();
    std::vector<int64_t> counts(num_partitions_, 0);
    for (int64_t i = 0; i < n; ++i) {
      TFD_OP_REQUIRES(ctx, p[i] >= 0 && p[i] < num_partitions_,
                      errors::InvalidArgument("partitions[", i, "] = ", p[i], " is not in [0, ",
                                              num_partitions_, ") (num_partitions)"));
      ++counts[p[i]];
    }
    const int64_t inner = DimProduct(data.shape().dims(), partitions.rank(), data.rank());
    std::vector<Tensor*> outs(num_partitions_);
    for (int64_t k = 0; k < num_partitions_; ++k) {
      std::vector<int64_t> dims{counts[k]};
      dims.insert(dims.end(), data.shape().dims().begin() + partitions.rank(),
                  data.shape().dims().end());
      TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output_for_overwrite(static_cast<int>(k),
                                                                TensorShape(std::move(dims)),
                                                                &outs[k]));
    }
    std::vector<int64_t> next(num_partitions_, 0);  // rows written per output
    for (int64_t i = 0; i < n; ++i) {
      CopyElements(data, i * inner, *outs[p[i]], next[p[i]]++ * inner, inner);
    }
  }

 private:
  int64_t num_partitions_ = 1;
};

Status DynamicPartitionShape(InferenceContext& c) {
  const PartialShape& data = c.input(0);
  const PartialShape& partitions = c.input(1);
  PartialShape out = PartialShape::Unknown();
  if (data.rank_known() && partitions.rank_known()) {
    if (partitions.rank() > data.rank()) {
      return errors::InvalidArgument("partitions (input 1) of shape ", partitions.ToString(),
                                     " must be a prefix of data's shape ", data.ToString());
    }
    std::vector<int64_t> dims{-1};
    dims.insert(dims.end(), data.dims().begin() + partitions.rank(), data.dims().end());
    out = PartialShape(std::move(dims));
  }
  for (int k = 0; k < c.num_outputs(); ++k) c.set_output(k, out);
  return OkStatus();
}

// DynamicStitch: merged[indices[m][i...], ...] = data[m][i..., ...], later
// m (and, within one m, later i) winning where an index repeats; rows no
// index names are zero.
class DynamicStitchOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext& ctx) override {
    const int n = ctx.num_inputs() / 2;
    const Tensor& data0 = ctx.input(n);
    const Tensor& indices0 = ctx.input(0);
    TFD_OP_REQUIRES(ctx, IsPrefix(indices0.shape(), data0.shape()),
                    errors::InvalidArgument("data[0] ", data0.Describe(),
                                            " must start with the shape of indices[0] ",
                                            indices0.Describe()));
    const std::vector<int64_t> row(data0.shape().dims().begin() + indices0.rank(),
                                   data0.shape().dims().end());
    const int64_t inner = DimProduct(row, 0, static_cast<int>(row.size()));
    int64_t rows = 0;
    for (int m = 0; m < n; ++m) {
      const Tensor& idx = ctx.input(m);
      const Tensor& data = ctx.input(n + m);
      std::vector<int64_t> want = idx.shape().dims();
      want.insert(want.end(), row.begin(), row.end());
      TFD_OP_REQUIRES(ctx, data.shape().dims() == want,
                      errors::InvalidArgument("data[", m, "] is ", data.Describe(),
                                              " but indices[", m, "] ", idx.Describe(),
                                              " and data[0] need ", TensorShape(want).ToString()));
      for (int64_t i = 0; i < idx.num_elements(); ++i) {
        const int32_t v = idx.data<int32_t>()[i];
        TFD_OP_REQUIRES(ctx, v >= 0,
                        errors::InvalidArgument("indices[", m, "][", i, "] = ", v,
                                                " is negative"));
        rows = std::max<int64_t>(rows, int64_t{v} + 1);
      }
    }
    std::vector<int64_t> dims{rows};
    dims.insert(dims.end(), row.begin(), row.end());
    Tensor* out = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, TensorShape(std::move(dims)), &out));
    for (int m = 0; m < n; ++m) {
      const Tensor& idx = ctx.input(m);
      for (int64_t i = 0; i < idx.num_elements(); ++i) {
        CopyElements(ctx.input(n + m), i * inner, *out, idx.data<int32_t>()[i] * inner, inner);
      }
    }
  }
};

Status DynamicStitchShape(InferenceContext& c) {
  const int n = c.num_inputs() / 2;
  const PartialShape& idx = c.input(0);
  const PartialShape& data = c.input(n);
  if (!idx.rank_known() || !data.rank_known()) {
    c.set_output(0, PartialShape::Unknown());
    return OkStatus();
  }
  if (idx.rank() > data.rank()) {
    return errors::InvalidArgument("data[0] of shape ", data.ToString(),
                                   " must start with the shape of indices[0], ", idx.ToString());
  }
  std::vector<int64_t> dims{-1};
  dims.insert(dims.end(), data.dims().begin() + idx.rank(), data.dims().end());
  c.set_output(0, PartialShape(std::move(dims)));
  return OkStatus();
}

using grad::IntScalar;
using grad::IntVector;
using grad::Op;

// TF's _DynamicPartitionGrads: partition the positions 0..n-1 of data's rows
// as data was partitioned, and stitch the outputs' gradients back to them.
Status DynamicPartitionGrad(Scope& s, const GradInputs& in, std::vector<Output>* dx) {
  const Output &data = in.inputs[0], &partitions = in.inputs[1];
  Output positions;
  if (auto known = partitions.shape.AsTensorShape()) {
    std::vector<int32_t> iota(known->num_elements());
    for (size_t i = 0; i < iota.size(); ++i) iota[i] = static_cast<int32_t>(i);
    positions = grad::Const(s, Tensor::FromVector<int32_t>(iota, *known));
  } else {
    // TODO(cleanup): needs the Range op when partitions' shape is only known
    // at run time.
    const Output size = Op(s, "Size", {partitions});
    positions = grad::Reshape(s, Op(s, "Range", {IntScalar(s, 0), size, IntScalar(s, 1)}),
                              grad::ShapeOf(s, partitions));
  }
  const int64_t num = static_cast<int64_t>(in.outputs.size());
  const Operation parts =
      s.AddOperation("DynamicPartition", {positions, partitions}, {{"num_partitions", num}});
  std::vector<Output> stitch_in;
  for (int64_t k = 0; k < num; ++k) stitch_in.push_back(parts.output(static_cast<int>(k)));
  for (int64_t k = 0; k < num; ++k) {
    const Output& dy = in.dy[k];
    stitch_in.push_back(dy.valid() ? dy : grad::ZerosLike(s, in.outputs[k]));
  }
  // N is given: it cannot be inferred from the two lists that share it.
  const Output stitched = Op(s, "DynamicStitch", stitch_in, {{"N", num}});
  (*dx)[0] = grad::ReshapeLike(s, stitched, data);
  return OkStatus();
}

// TF's _DynamicStitchGrads: each data input gets the rows of the gradient
// its indices name (where an index repeats, every copy gets it, as in TF).
Status DynamicStitchGrad(Scope& s, const GradInputs& in, std::vector<Output>* dx) {
  const size_t n = in.inputs.size() / 2;
  for (size_t m = 0; m < n; ++m) (*dx)[n + m] = Op(s, "Gather", {in.dy[0], in.inputs[m]});
  return OkStatus();
}

OpDefBuilder StitchDef(const char* name, const char* doc) {
  return OpDefBuilder(name)
      .Input("indices: N * int32")
      .Input("data: N * T")
      .Output("merged: T")
      .Attr("N: int >= 1")
      .Attr("T: type")
      .Doc(doc);
}

}  // namespace

Status RegisterPartitionOps(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(r.Add<DynamicPartitionOp>(
      OpDefBuilder("DynamicPartition")
          .Input("data: T")
          .Input("partitions: int32")
          .Output("outputs: num_partitions * T")
          .Attr("num_partitions: int >= 1")
          .Attr("T: type")
          .Doc("Splits data into num_partitions tensors: outputs[k] holds, in order, the "
               "slices data[i...] whose partitions[i...] is k; every partition must be in [0, "
               "num_partitions). Shape: each output [?] + data's shape after partitions' "
               "(which must be a prefix of it)."),
      DynamicPartitionShape));
  const char* stitch =
      "merged[indices[m][i...], ...] = data[m][i..., ...]: the inverse of DynamicPartition. "
      "Where an index repeats, the later input (and the later position in it) wins; rows no "
      "index names are zero; indices must be >= 0. Shape: [max index + 1] + data[m]'s shape "
      "after indices[m]'s (the same for every m).";
  TFD_RETURN_IF_ERROR(r.Add<DynamicStitchOp>(StitchDef("DynamicStitch", stitch),
                                             DynamicStitchShape));
  TFD_RETURN_IF_ERROR(r.Add<DynamicStitchOp>(
      StitchDef("ParallelDynamicStitch",
                "DynamicStitch for indices that do not repeat (what TF's embedding_lookup "
                "emits); here it runs DynamicStitch's kernel, so a repeated index takes the "
                "later value. Shape: as DynamicStitch."),
      DynamicStitchShape));
  TFD_RETURN_IF_ERROR(grad::Register(r, "DynamicPartition", DynamicPartitionGrad));
  TFD_RETURN_IF_ERROR(grad::Register(r, "DynamicStitch", DynamicStitchGrad));
  return grad::Register(r, "ParallelDynamicStitch", DynamicStitchGrad);
}

}  // namespace tfd::kernels::array
