// InferenceContext: what an op's shape function sees and sets.
//
// Shape functions run at graph-validation time on partial shapes. When an
// input comes straight from a Const node its value is available too, so ops
// such as Reshape or Fill can compute exact output shapes.
//
//   Status MatMulShape(InferenceContext& c) {
//     TFD_ASSIGN_OR_RETURN(bool ta, c.GetAttr<bool>("transpose_a"));
//     const PartialShape& a = c.input(0);
//     ...
//     c.set_output(0, PartialShape({m, n}));
//     return OkStatus();
//   }
//
// Errors from a shape function are INVALID_ARGUMENT; the caller prefixes the
// node name and op, so messages need say only what is wrong with which input.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "common/attr_value.h"
#include "common/status.h"

namespace tfd {

class InferenceContext {
 public:
  InferenceContext(const AttrMap& attrs, std::vector<PartialShape> input_shapes,
                   std::vector<DType> input_types, std::vector<const Tensor*> input_values,
                   int num_outputs);

  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  const PartialShape& input(int i) const { return inputs_[i]; }
  DType input_type(int i) const { return input_types_[i]; }
  // The input's value when known at graph time (a Const), else nullptr.
  const Tensor* input_value(int i) const { return input_values_[i]; }

  void set_output(int i, PartialShape s) { outputs_[i] = std::move(s); }
  // Publishes output i's value when it is known at graph time (a Const's
  // value, the Shape of a fully known input), so consumers such as Reshape
  // see it through input_value().
  void set_output_value(int i, Tensor t) { output_values_[i] = std::move(t); }
  const std::vector<Tensor>& output_values() const { return output_values_; }
  const PartialShape& output(int i) const { return outputs_[i]; }
  const std::vector<PartialShape>& outputs() const { return outputs_; }

  // The attr `name` as T; INVALID_ARGUMENT when missing or of another type.
  template <typename T>
  StatusOr<T> GetAttr(const std::string& name) const {
    auto it = attrs_.find(name);
    if (it == attrs_.end()) return errors::InvalidArgument("missing attr '", name, "'");
    if (const T* v = std::get_if<T>(&it->second)) return *v;
    if constexpr (requires { typename T::value_type; } && !std::is_same_v<T, std::string>) {
      if (std::holds_alternative<EmptyList>(it->second)) return T{};
    }
    return errors::InvalidArgument("attr '", name, "' has type ", AttrTypeName(it->second));
  }
  const AttrMap& attrs() const { return attrs_; }

  // Helpers for common rules.
  // Input i must have the given rank (when its rank is known).
  Status WithRank(int i, int rank) const;
  // The numpy broadcast of two shapes, or INVALID_ARGUMENT.
  static StatusOr<PartialShape> Broadcast(const PartialShape& a, const PartialShape& b);
  // The values of a known int32/int64 vector or scalar input, else nullopt.
  std::optional<std::vector<int64_t>> InputAsInts(int i) const;

 private:
  const AttrMap& attrs_;
  std::vector<PartialShape> inputs_;
  std::vector<DType> input_types_;
  std::vector<const Tensor*> input_values_;
  std::vector<PartialShape> outputs_;
  std::vector<Tensor> output_values_;  // uninitialized where unknown
};

using ShapeFn = std::function<Status(InferenceContext&)>;

// Ready-made shape functions.
namespace shape_fns {
Status Unknown(InferenceContext& c);            // every output: unknown shape
Status UnchangedShape(InferenceContext& c);     // output 0 = input 0
Status Scalar(InferenceContext& c);             // every output: []
Status BroadcastBinary(InferenceContext& c);    // output 0 = broadcast(input 0, input 1)
Status NoOutputs(InferenceContext& c);
}  // namespace shape_fns

}  // namespace tfd
