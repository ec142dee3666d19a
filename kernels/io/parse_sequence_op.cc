// The feature lists of TF1's parse_single_sequence_example: one serialized
// tf.train.SequenceExample's FeatureLists (example_proto.h) into a
// [steps] + shape tensor per FixedLenSequenceFeature and a sparse one
// (indices (step, position), values, shape [steps, longest]) per
// VarLenFeature. Its context, a Features as an Example's, goes through
// ParseExample. Every bad list is INVALID_ARGUMENT naming the example (its
// debug name, when given), the feature list and the step.
#include <algorithm>

#include "common/op_kernel.h"
#include "common/shape_inference.h"
#include "kernels/io/example_proto.h"
#include "kernels/io/feature_specs.h"
#include "kernels/io/io_ops_internal.h"

namespace tfd::kernels::io {
namespace {

using FeatureLists = std::map<std::string, std::vector<ExampleFeature>>;

class ParseFeatureListsOp : public OpKernel {
 public:
  explicit ParseFeatureListsOp(OpKernelConstruction& c)
      : OpKernel(c), specs_(FeatureSpecs::Read(c, /*sequences=*/false)) {}

  void Compute(OpKernelContext& ctx) override {
    const Tensor& serialized = ctx.input(0);
    TFD_OP_REQUIRES(
        ctx, serialized.rank() == 0,
        errors::InvalidArgument("serialized must be a scalar, got ", serialized.Describe()));
    const Tensor& debug_name = ctx.input(1);
    Parsed p{.name = "sequence example"};
    if (debug_name.num_elements() == 1 && !debug_name.data<std::string>()[0].empty()) {
      p.name += " '" + debug_name.data<std::string>()[0] + "'";
    }
    auto lists = ParseFeatureListsProto(serialized.scalar<std::string>());
    TFD_OP_REQUIRES_OK(ctx, lists.status().WithContext(p.name));
    p.lists = std::move(lists).value();
    const Tensor& may_miss = ctx.input(2 + specs_.num_sparse + specs_.num_dense);
    p.may_miss.assign(may_miss.data<std::string>(),
                      may_miss.data<std::string>() + may_miss.num_elements());
    for (int i = 0; i < specs_.num_sparse; ++i) TFD_OP_REQUIRES_OK(ctx, Sparse(ctx, p, i));
    for (int i = 0; i < specs_.num_dense; ++i) TFD_OP_REQUIRES_OK(ctx, Dense(ctx, p, i));
  }

 private:
  // One example's lists, and what its errors call it.
  struct Parsed {
    std::string name;
    FeatureLists lists;
    std::vector<std::string> may_miss;  // dense keys whose lists may be missing

    // The list of `key`, or none when it is missing.
    const std::vector<ExampleFeature>& List(const std::string& key) const {
      static const std::vector<ExampleFeature> kNone;
      const auto it = lists.find(key);
      return it == lists.end() ? kNone : it->second;
    }
  };

  // The list's features, checked to be of `type` (an empty Feature is
  // none of its values).
  static Status CheckKinds(const Parsed& p, const std::vector<ExampleFeature>& list,
                           const std::string& key, DType type) {
    for (size_t t = 0; t < list.size(); ++t) {
      const ExampleFeature::Kind kind = list[t].kind;
      if (kind != ExampleFeature::Kind::kNone && kind != FeatureKindOf(type)) {
        return errors::InvalidArgument(p.name, ": feature list '", key, "' step ", t, " is not a ",
                                       DTypeName(type), " list");
      }
    }
    return OkStatus();
  }

  Status Sparse(OpKernelContext& ctx, const Parsed& p, int i) const {
    TFD_ASSIGN_OR_RETURN(const std::string key, FeatureKey(ctx, 2 + i, "feature list"));
    const std::vector<ExampleFeature>& list = p.List(key);
    TFD_RETURN_IF_ERROR(CheckKinds(p, list, key, specs_.sparse_types[i]));
    std::vector<const ExampleFeature*> steps;
    for (const ExampleFeature& f : list) steps.push_back(&f);
    return SetSparseOutputs(ctx, specs_.num_sparse, i, steps);
  }

  Status Dense(OpKernelContext& ctx, const Parsed& p, int i) const {
    TFD_ASSIGN_OR_RETURN(const std::string key,
                         FeatureKey(ctx, 2 + specs_.num_sparse + i, "feature list"));
    const TensorShape step = *specs_.dense_shapes[i].AsTensorShape();
    if (p.lists.count(key) == 0 &&
        std::find(p.may_miss.begin(), p.may_miss.end(), key) == p.may_miss.end()) {
      return errors::InvalidArgument(p.name, ": feature list '", key,
                                     "' is required but missing (allow_missing=True lets it "
                                     "be empty)");
    }
    const std::vector<ExampleFeature>& list = p.List(key);
    TFD_RETURN_IF_ERROR(CheckKinds(p, list, key, specs_.dense_types[i]));
    const int64_t n = step.num_elements();
    for (size_t t = 0; t < list.size(); ++t) {
      if (ValueCount(list[t]) != n) {
        return errors::InvalidArgument(p.name, ": feature list '", key, "' step ", t, " has ",
                                       ValueCount(list[t]), " values, its shape ", step.ToString(),
                                       " holds ", n);
      }
    }
    TensorShape shape = step;
    shape.InsertDim(0, static_cast<int64_t>(list.size()));
    Tensor* out;
    TFD_RETURN_IF_ERROR(ctx.allocate_output(3 * specs_.num_sparse + i, shape, &out));
    for (size_t t = 0; t < list.size(); ++t) CopyFeatureValues(list[t], out, t * n);
    return OkStatus();
  }

  const FeatureSpecs specs_;
};

Status FeatureListsShape(InferenceContext& c) { return SetParsedShapes(c, -1); }

}  // namespace

Status RegisterParseFeatureListsOp(OpRegistry& r) {
  return r.Add<ParseFeatureListsOp>(
      OpDefBuilder("ParseFeatureLists")
          .Input("serialized: string")
          .Input("debug_name: string")
          .Input("sparse_keys: Nsparse * string")
          .Input("dense_keys: Ndense * string")
          .Input("dense_missing_assumed_empty: string")
          .Output("sparse_indices: Nsparse * int64")
          .Output("sparse_values: sparse_types")
          .Output("sparse_shapes: Nsparse * int64")
          .Output("dense_values: Tdense")
          .Attr("Nsparse: int >= 0")
          .Attr("Ndense: int >= 0")
          .Attr("sparse_types: list(type) >= 0")
          .Attr("Tdense: list(type) >= 0")
          .Attr("dense_shapes: list(shape) >= 0")
          .Doc("The feature lists of one serialized tf.train.SequenceExample (TF1's "
               "parse_single_sequence_example; its context goes through ParseExample): per "
               "sparse key the indices [n, 2] (step, position), values [n] and shape [steps, "
               "longest]; per dense key a [steps] + dense_shape tensor, each step exactly "
               "dense_shape's values. A dense list that is missing is INVALID_ARGUMENT unless "
               "dense_missing_assumed_empty names it (then no steps); debug_name, when not "
               "empty, names the example in errors. Shape: as said."),
      FeatureListsShape);
}

}  // namespace tfd::kernels::io
