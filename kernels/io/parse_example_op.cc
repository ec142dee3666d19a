// TF1's ParseExample: a batch of serialized tf.train.Examples
// (example_proto.h) into a dense tensor per FixedLenFeature (and per
// FixedLenSequenceFeature: a dense shape whose first dimension is -1, the
// examples' blocks padded to the longest) and a sparse one (indices,
// values, shape) per VarLenFeature. Every bad example is INVALID_ARGUMENT
// naming it (its name, when `names` gives one) and the feature.
#include "common/op_kernel.h"
#include "common/shape_inference.h"
#include "kernels/array/array_util.h"
#include "kernels/io/example_proto.h"
#include "kernels/io/feature_specs.h"
#include "kernels/io/io_ops_internal.h"

namespace tfd::kernels::io {
namespace {

class ParseExampleOp : public OpKernel {
 public:
  explicit ParseExampleOp(OpKernelConstruction& c)
      : OpKernel(c), specs_(FeatureSpecs::Read(c, /*sequences=*/true)) {}

  void Compute(OpKernelContext& ctx) override {
    const Tensor& serialized = ctx.input(0);
    TFD_OP_REQUIRES(
        ctx, serialized.rank() == 1,
        errors::InvalidArgument("serialized must be a vector, got ", serialized.Describe()));
    const int64_t batch = serialized.dim(0);
    std::vector<std::map<std::string, ExampleFeature>> examples(batch);
    for (int64_t b = 0; b < batch; ++b) {
      auto parsed = ParseExampleProto(serialized.data<std::string>()[b]);
      TFD_OP_REQUIRES_OK(ctx, parsed.status().WithContext(Name(ctx, b)));
      examples[b] = std::move(parsed).value();
    }
    for (int i = 0; i < specs_.num_sparse; ++i) TFD_OP_REQUIRES_OK(ctx, Sparse(ctx, examples, i));
    for (int i = 0; i < specs_.num_dense; ++i) TFD_OP_REQUIRES_OK(ctx, Dense(ctx, examples, i));
  }

 private:
  // "example 3" or "example 3 ('name')".
  static std::string Name(const OpKernelContext& ctx, int64_t b) {
    const Tensor& names = ctx.input(1);
    std::string out = "example " + std::to_string(b);
    if (names.num_elements() > b) out += " ('" + names.data<std::string>()[b] + "')";
    return out;
  }
  // Feature `key` of example b, or null when absent; INVALID_ARGUMENT when
  // it holds another type.
  static StatusOr<const ExampleFeature*> Find(const OpKernelContext& ctx,
                                              const std::map<std::string, ExampleFeature>& ex,
                                              const std::string& key, DType type, int64_t b) {
    auto it = ex.find(key);
    if (it == ex.end() || it->second.kind == ExampleFeature::Kind::kNone) return nullptr;
    if (it->second.kind != FeatureKindOf(type)) {
      return errors::InvalidArgument(Name(ctx, b), ": feature '", key, "' is not a ",
                                     DTypeName(type), " list");
    }
    return &it->second;
  }

  Status Sparse(OpKernelContext& ctx,
                const std::vector<std::map<std::string, ExampleFeature>>& examples, int i) const {
    TFD_ASSIGN_OR_RETURN(const std::string key, FeatureKey(ctx, 2 + i, "feature"));
    std::vector<const ExampleFeature*> found(examples.size());
    for (size_t b = 0; b < examples.size(); ++b) {
      TFD_ASSIGN_OR_RETURN(
          found[b], Find(ctx, examples[b], key, specs_.sparse_types[i], static_cast<int64_t>(b)));
    }
    return SetSparseOutputs(ctx, specs_.num_sparse, i, found);
  }

  Status Dense(OpKernelContext& ctx,
               const std::vector<std::map<std::string, ExampleFeature>>& examples, int i) const {
    TFD_ASSIGN_OR_RETURN(const std::string key,
                         FeatureKey(ctx, 2 + specs_.num_sparse + i, "feature"));
    if (IsSequenceShape(specs_.dense_shapes[i])) return Sequence(ctx, examples, i, key);
    const Tensor& fallback = ctx.input(2 + specs_.num_sparse + specs_.num_dense + i);
    const TensorShape row = *specs_.dense_shapes[i].AsTensorShape();
    const auto batch = static_cast<int64_t>(examples.size());
    const int64_t n = row.num_elements();
    if (fallback.num_elements() != 0 && fallback.num_elements() != n) {
      return errors::InvalidArgument("the default of feature '", key, "' has ",
                                     fallback.num_elements(), " values for shape ", row.ToString());
    }
    TensorShape shape = row;
    shape.InsertDim(0, batch);
    Tensor* out;
    TFD_RETURN_IF_ERROR(ctx.allocate_output(3 * specs_.num_sparse + i, shape, &out));
    for (int64_t b = 0; b < batch; ++b) {
      TFD_ASSIGN_OR_RETURN(const ExampleFeature* f,
                           Find(ctx, examples[b], key, specs_.dense_types[i], b));
      if (f == nullptr) {
        if (fallback.num_elements() == 0) {
          return errors::InvalidArgument(Name(ctx, b), ": feature '", key,
                                         "' is required but missing");
        }
        array::CopyElements(fallback, 0, *out, b * n, n);
        continue;
      }
      if (ValueCount(*f) != n) {
        return errors::InvalidArgument(Name(ctx, b), ": feature '", key, "' has ", ValueCount(*f),
                                       " values, its shape ", row.ToString(), " holds ", n);
      }
      CopyFeatureValues(*f, out, b * n);
    }
    return OkStatus();
  }

  // A FixedLenSequenceFeature: each example's values are whole blocks of
  // the shape after the first dimension (none when the feature is
  // missing); the output is [batch, most blocks] + that shape, each
  // example padded with the default (a scalar; none: zeros or "").
  Status Sequence(OpKernelContext& ctx,
                  const std::vector<std::map<std::string, ExampleFeature>>& examples, int i,
                  const std::string& key) const {
    const Tensor& pad = ctx.input(2 + specs_.num_sparse + specs_.num_dense + i);
    if (pad.num_elements() > 1) {
      return errors::InvalidArgument("the padding of sequence feature '", key,
                                     "' must be one value, got ", pad.Describe());
    }
    std::vector<int64_t> dims = specs_.dense_shapes[i].dims();
    dims.erase(dims.begin());
    const int64_t block = TensorShape(dims).num_elements();
    const auto batch = static_cast<int64_t>(examples.size());
    std::vector<const ExampleFeature*> found(batch);
    int64_t most = 0;
    for (int64_t b = 0; b < batch; ++b) {
      TFD_ASSIGN_OR_RETURN(found[b], Find(ctx, examples[b], key, specs_.dense_types[i], b));
      const int64_t n = found[b] == nullptr ? 0 : ValueCount(*found[b]);
      if (n == 0) continue;
      if (block == 0 || n % block != 0) {
        return errors::InvalidArgument(Name(ctx, b), ": feature '", key, "' has ", n,
                                       " values, not whole blocks of ", block);
      }
      most = std::max(most, n / block);
    }
    dims.insert(dims.begin(), {batch, most});
    Tensor* out;
    TFD_RETURN_IF_ERROR(ctx.allocate_output(3 * specs_.num_sparse + i, TensorShape(dims), &out));
    const int64_t row = most * block;
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t n = found[b] == nullptr ? 0 : ValueCount(*found[b]);
      if (n > 0) CopyFeatureValues(*found[b], out, b * row);
      if (pad.num_elements() == 1) {  // else the zeros the output was made of
        for (int64_t k = n; k < row; ++k) array::CopyElements(pad, 0, *out, b * row + k, 1);
      }
    }
    return OkStatus();
  }

  const FeatureSpecs specs_;
};

// [batch] leads each dense output.
Status ParseExampleShape(InferenceContext& c) {
  return SetParsedShapes(c, c.input(0).rank() == 1 ? c.input(0).dim(0) : -1);
}

}  // namespace

Status RegisterParseExampleOp(OpRegistry& r) {
  return r.Add<ParseExampleOp>(
      OpDefBuilder("ParseExample")
          .Input("serialized: string")
          .Input("names: string")
          .Input("sparse_keys: Nsparse * string")
          .Input("dense_keys: Ndense * string")
          .Input("dense_defaults: Tdense")
          .Output("sparse_indices: Nsparse * int64")
          .Output("sparse_values: sparse_types")
          .Output("sparse_shapes: Nsparse * int64")
          .Output("dense_values: Tdense")
          .Attr("Nsparse: int >= 0")
          .Attr("Ndense: int >= 0")
          .Attr("sparse_types: list(type) >= 0")
          .Attr("Tdense: list(type) >= 0")
          .Attr("dense_shapes: list(shape) >= 0")
          .Doc("A batch of serialized tf.train.Examples into, per sparse key, the indices "
               "[n, 2] (example, position), values [n] and shape [batch, longest] of its "
               "values, and per dense key a [batch] + dense_shape tensor: an example without "
               "the feature takes dense_defaults' (one of no values makes it required). A "
               "dense_shape [-1] + S (FixedLenSequenceFeature) gives [batch, M] + S, each "
               "example's values whole blocks of S, padded to the most blocks M with its "
               "default (a scalar, or none for zeros); a missing one is no blocks. "
               "Features are float32, int64 or string. names, when not empty, names the "
               "examples in errors. Shape: as said."),
      ParseExampleShape);
}

}  // namespace tfd::kernels::io
