// Ops that build a tensor from a few scalars: Fill, ZerosLike, OnesLike, OneHot.
#include <algorithm>

#include "common/op_kernel.h"
#include "kernels/array/array_ops_internal.h"
#include "kernels/array/array_util.h"

namespace tfd::kernels::array {
namespace {

Status RequireScalar(const Tensor& t, const char* what) {
  if (t.rank() != 0) return errors::InvalidArgument(what, " must be a scalar, got ", t.Describe());
  return OkStatus();
}

class FillOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext& ctx) override {
    const Tensor& dims_t = ctx.input(0);
    const Tensor& value = ctx.input(1);
    TFD_OP_REQUIRES(ctx, dims_t.rank() == 1,
                    errors::InvalidArgument("dims must be a vector, got ", dims_t.Describe()));
    TFD_OP_REQUIRES_OK(ctx, RequireScalar(value, "value"));
    auto dims = IntsFromTensor(dims_t, "dims");
    TFD_OP_REQUIRES_OK(ctx, dims.status());
    auto shape = TensorShape::Make(std::move(*dims));
    TFD_OP_REQUIRES_OK(ctx, shape.status());
    Tensor* out = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, *shape, &out));
    TFD_SWITCH_ALL(value.dtype(), T, {
      std::fill_n(out->data<T>(), out->num_elements(), value.scalar<T>());
    }, ctx.SetStatus(errors::InvalidArgument("Fill cannot fill ", value.Describe())));
  }
};

Status FillShape(InferenceContext& c) {
  TFD_RETURN_IF_ERROR(c.WithRank(0, 1));
  TFD_RETURN_IF_ERROR(c.WithRank(1, 0));
  if (auto dims = c.InputAsInts(0)) {
    for (size_t i = 0; i < dims->size(); ++i) {
      if ((*dims)[i] < 0) {
        return errors::InvalidArgument("dims[", i, "] must be non-negative, got ", (*dims)[i]);
      }
    }
  }
  c.set_output(0, ShapeFromShapeInput(c, 0));
  return OkStatus();
}

// allocate_output already zero-fills (strings: empty), which is the answer.
class ZerosLikeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext& ctx) override {
    Tensor* out = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, ctx.input(0).shape(), &out));
  }
};

class OnesLikeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext& ctx) override {
    Tensor* out = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, ctx.input(0).shape(), &out));
    TFD_SWITCH_POD(out->dtype(), T, {
      std::fill_n(out->data<T>(), out->num_elements(), T(1));
    }, ctx.SetStatus(errors::InvalidArgument("OnesLike does not take ", out->Describe())));
  }
};

// OneHot's axis may be -1 (last) or any position in [0, rank of indices].
StatusOr<int> OneHotAxis(int64_t axis, int indices_rank) {
  if (axis < -1 || axis > indices_rank) {
    return errors::InvalidArgument("axis ", axis, " is out of range for indices of rank ",
                                   indices_rank, ": expected -1 or a value in [0, ",
                                   indices_rank, "]");
  }
  return axis == -1 ? indices_rank : static_cast<int>(axis);
}

std::vector<int64_t> IndicesAsInt64(const Tensor& t) {
  std::vector<int64_t> out(t.num_elements());
  TFD_SWITCH_NUMERIC(t.dtype(), I, {
    std::copy_n(t.data<I>(), out.size(), out.begin());
  }, {});
  return out;
}

class OneHotOp : public OpKernel {
 public:
  explicit OneHotOp(OpKernelConstruction& c) : OpKernel(c) {
    c.SetStatus(c.GetAttr("axis", &axis_));
    if (c.status().ok() && axis_ < -1) {
      c.SetStatus(errors::InvalidArgument("axis must be -1 or non-negative, got ", axis_));
    }
  }

  void Compute(OpKernelContext& ctx) override {
    const Tensor& indices = ctx.input(0);
    const Tensor& depth_t = ctx.input(1);
    const Tensor& on = ctx.input(2);
    const Tensor& off = ctx.input(3);
    TFD_OP_REQUIRES_OK(ctx, RequireScalar(depth_t, "depth"));
    TFD_OP_REQUIRES_OK(ctx, RequireScalar(on, "on_value"));
    TFD_OP_REQUIRES_OK(ctx, RequireScalar(off, "off_value"));
    const int64_t depth = depth_t.scalar<int32_t>();
    TFD_OP_REQUIRES(ctx, depth >= 0,
                    errors::InvalidArgument("depth must be non-negative, got ", depth));
    auto axis = OneHotAxis(axis_, indices.rank());
    TFD_OP_REQUIRES_OK(ctx, axis.status());
    std::vector<int64_t> dims = indices.shape().dims();
    dims.insert(dims.begin() + *axis, depth);
    auto shape = TensorShape::Make(std::move(dims));
    TFD_OP_REQUIRES_OK(ctx, shape.status());
    Tensor* out = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, *shape, &out));

    // out[p, d, s] = on if indices[p, s] == d else off. An index outside
    // [0, depth) selects no position, so its row is all off_value, as in
    // TensorFlow (a common way to encode "no class").
    const int64_t prefix = DimProduct(indices.shape().dims(), 0, *axis);
    const int64_t suffix = DimProduct(indices.shape().dims(), *axis, indices.rank());
    const std::vector<int64_t> index = IndicesAsInt64(indices);
    TFD_SWITCH_ALL(out->dtype(), T, {
      T* o = out->data<T>();
      std::fill_n(o, out->num_elements(), off.scalar<T>());
      for (int64_t p = 0; p < prefix; ++p) {
        for (int64_t s = 0; s < suffix; ++s) {
          const int64_t d = index[p * suffix + s];
          if (d >= 0 && d < depth) o[(p * depth + d) * suffix + s] = on.scalar<T>();
        }
      }
    }, ctx.SetStatus(errors::InvalidArgument("OneHot cannot produce ", out->Describe())));
  }

 private:
  int64_t axis_ = -1;
};

Status OneHotShape(InferenceContext& c) {
  TFD_ASSIGN_OR_RETURN(int64_t axis, c.GetAttr<int64_t>("axis"));
  TFD_RETURN_IF_ERROR(c.WithRank(1, 0));
  TFD_RETURN_IF_ERROR(c.WithRank(2, 0));
  TFD_RETURN_IF_ERROR(c.WithRank(3, 0));
  int64_t depth = -1;
  if (auto d = c.InputAsInts(1); d && d->size() == 1) {
    depth = (*d)[0];
    if (depth < 0) return errors::InvalidArgument("depth must be non-negative, got ", depth);
  }
  const PartialShape& indices = c.input(0);
  if (!indices.rank_known()) {
    if (axis < -1) return errors::InvalidArgument("axis must be -1 or non-negative, got ", axis);
    c.set_output(0, PartialShape::Unknown());
    return OkStatus();
  }
  TFD_ASSIGN_OR_RETURN(int pos, OneHotAxis(axis, indices.rank()));
  std::vector<int64_t> dims = indices.dims();
  dims.insert(dims.begin() + pos, depth);
  c.set_output(0, PartialShape(std::move(dims)));
  return OkStatus();
}

}  // namespace

Status RegisterFillOps(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(r.Add<FillOp>(
      OpDefBuilder("Fill")
          .Input("dims: index_type")
          .Input("value: T")
          .Output("output: T")
          .Attr("T: type")
          .Attr("index_type: {int32, int64} = int32")
          .Doc("A tensor of shape dims with every element equal to the scalar value. "
               "Shape: the value of dims."),
      FillShape));
  TFD_RETURN_IF_ERROR(r.Add<ZerosLikeOp>(
      OpDefBuilder("ZerosLike")
          .Input("x: T")
          .Output("y: T")
          .Attr("T: type")
          .Doc("Zeros (false, empty strings) shaped like x. Shape: x's shape."),
      shape_fns::UnchangedShape));
  TFD_RETURN_IF_ERROR(r.Add<OnesLikeOp>(
      OpDefBuilder("OnesLike")
          .Input("x: T")
          .Output("y: T")
          .Attr("T: {float32, float64, int32, int64, uint8, bool}")
          .Doc("Ones (true for bool) shaped like x. Shape: x's shape."),
      shape_fns::UnchangedShape));
  TFD_RETURN_IF_ERROR(r.Add<OneHotOp>(
      OpDefBuilder("OneHot")
          .Input("indices: TI")
          .Input("depth: int32")
          .Input("on_value: T")
          .Input("off_value: T")
          .Output("output: T")
          .Attr("axis: int = -1")
          .Attr("T: type")
          .Attr("TI: {uint8, int32, int64} = int64")
          .Doc("One-hot encoding: a new axis of size depth at position axis (-1: last) holds "
               "on_value where it equals the index and off_value elsewhere; an index outside "
               "[0, depth) gives a row of off_value. Shape: indices' shape with depth at axis."),
      OneHotShape));
  return OkStatus();
}

}  // namespace tfd::kernels::array
