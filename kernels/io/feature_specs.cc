// The attrs and sparse outputs of the parsing kernels; see feature_specs.h.
#include "kernels/io/feature_specs.h"

#include <algorithm>

namespace tfd::kernels::io {

bool IsSequenceShape(const PartialShape& s) {
  if (s.rank() < 1 || s.dim(0) != -1) return false;
  for (int d = 1; d < s.rank(); ++d) {
    if (s.dim(d) < 0) return false;
  }
  return true;
}

FeatureSpecs FeatureSpecs::Read(OpKernelConstruction& c, bool sequences) {
  FeatureSpecs s;
  c.SetStatus(c.GetAttr("Nsparse", &s.num_sparse));
  c.SetStatus(c.GetAttr("Ndense", &s.num_dense));
  c.SetStatus(c.GetAttr("sparse_types", &s.sparse_types));
  c.SetStatus(c.GetAttr("Tdense", &s.dense_types));
  c.SetStatus(c.GetAttr("dense_shapes", &s.dense_shapes));
  if (!c.status().ok()) return s;
  if (static_cast<int64_t>(s.sparse_types.size()) != s.num_sparse ||
      static_cast<int64_t>(s.dense_types.size()) != s.num_dense ||
      s.dense_shapes.size() != s.dense_types.size()) {
    c.SetStatus(errors::InvalidArgument(c.def().name,
                                        " needs as many sparse_types as Nsparse and as many "
                                        "Tdense and dense_shapes as Ndense"));
  }
  for (const auto* types : {&s.sparse_types, &s.dense_types}) {
    for (DType t : *types) {
      if (t != DType::kFloat32 && t != DType::kInt64 && t != DType::kString) {
        c.SetStatus(
            errors::InvalidArgument("a feature is float32, int64 or string, not ", DTypeName(t)));
      }
    }
  }
  for (const PartialShape& shape : s.dense_shapes) {
    if (shape.IsFullyDefined() || (sequences && IsSequenceShape(shape))) continue;
    c.SetStatus(errors::InvalidArgument("dense_shapes must be fully defined",
                                        sequences ? ", or all but a first dimension of -1" : "",
                                        "; got ", shape.ToString()));
  }
  return s;
}

StatusOr<std::string> FeatureKey(const OpKernelContext& ctx, int input, const char* what) {
  const Tensor& t = ctx.input(input);
  if (t.rank() != 0) {
    return errors::InvalidArgument("a ", what, " key must be a string scalar, got ", t.Describe());
  }
  return t.scalar<std::string>();
}

Status SetSparseOutputs(OpKernelContext& ctx, int64_t num_sparse, int64_t i,
                        const std::vector<const ExampleFeature*>& rows) {
  int64_t total = 0, longest = 0;
  for (const ExampleFeature* f : rows) {
    const int64_t n = f == nullptr ? 0 : ValueCount(*f);
    total += n;
    longest = std::max(longest, n);
  }
  Tensor *indices, *values, *shape;
  TFD_RETURN_IF_ERROR(ctx.allocate_output(static_cast<int>(i), TensorShape{total, 2}, &indices));
  TFD_RETURN_IF_ERROR(
      ctx.allocate_output(static_cast<int>(num_sparse + i), TensorShape{total}, &values));
  TFD_RETURN_IF_ERROR(
      ctx.allocate_output(static_cast<int>(2 * num_sparse + i), TensorShape{2}, &shape));
  int64_t at = 0;
  for (size_t row = 0; row < rows.size(); ++row) {
    if (rows[row] == nullptr) continue;
    CopyFeatureValues(*rows[row], values, at);
    for (int64_t k = 0; k < ValueCount(*rows[row]); ++k, ++at) {
      indices->data<int64_t>()[2 * at] = static_cast<int64_t>(row);
      indices->data<int64_t>()[2 * at + 1] = k;
    }
  }
  shape->data<int64_t>()[0] = static_cast<int64_t>(rows.size());
  shape->data<int64_t>()[1] = longest;
  return OkStatus();
}

Status SetParsedShapes(InferenceContext& c, int64_t rows) {
  // Lists whose lengths disagree are the kernel's to refuse, naming them;
  // here they only leave outputs unknown.
  TFD_ASSIGN_OR_RETURN(const int64_t num_sparse, c.GetAttr<int64_t>("Nsparse"));
  TFD_ASSIGN_OR_RETURN(const auto shapes, c.GetAttr<std::vector<PartialShape>>("dense_shapes"));
  const auto set = [&c](int64_t i, PartialShape shape) {
    if (i < c.num_outputs()) c.set_output(static_cast<int>(i), std::move(shape));
  };
  for (int64_t i = 0; i < num_sparse; ++i) {
    set(i, PartialShape({-1, 2}));
    set(num_sparse + i, PartialShape({-1}));
    set(2 * num_sparse + i, PartialShape({2}));
  }
  for (size_t i = 0; i < shapes.size(); ++i) {
    if (!shapes[i].rank_known()) continue;
    std::vector<int64_t> dims{rows};
    dims.insert(dims.end(), shapes[i].dims().begin(), shapes[i].dims().end());
    set(3 * num_sparse + static_cast<int64_t>(i), PartialShape(dims));
  }
  return OkStatus();
}

}  // namespace tfd::kernels::io
