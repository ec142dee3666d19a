#include "common/shape_inference.h"

namespace tfd {

InferenceContext::InferenceContext(const AttrMap& attrs, std::vector<PartialShape> input_shapes,
                                   std::vector<DType> input_types,
                                   std::vector<const Tensor*> input_values, int num_outputs)
    : attrs_(attrs),
      inputs_(std::move(input_shapes)),
      input_types_(std::move(input_types)),
      input_values_(std::move(input_values)),
      outputs_(num_outputs),
      output_values_(num_outputs) {}

Status InferenceContext::WithRank(int i, int rank) const {
  if (inputs_[i].rank_known() && inputs_[i].rank() != rank) {
    return errors::InvalidArgument("input ", i, " must have rank ", rank, " but has shape ",
                                   inputs_[i].ToString());
  }
  return OkStatus();
}

StatusOr<PartialShape> InferenceContext::Broadcast(const PartialShape& a, const PartialShape& b) {
  if (!a.rank_known() || !b.rank_known()) return PartialShape::Unknown();
  const int rank = std::max(a.rank(), b.rank());
  std::vector<int64_t> out(rank);
  for (int i = 0; i < rank; ++i) {
    const int ia = a.rank() - rank + i, ib = b.rank() - rank + i;
    const int64_t da = ia >= 0 ? a.dim(ia) : 1;
    const int64_t db = ib >= 0 ? b.dim(ib) : 1;
    if (da == 1) {
      out[i] = db;
    } else if (db == 1) {
      out[i] = da;
    } else if (da < 0 || db < 0) {
      out[i] = da < 0 ? db : da;  // unknown vs n: n if it broadcasts at all
    } else if (da == db) {
      out[i] = da;
    } else {
      return errors::InvalidArgument("shapes ", a.ToString(), " and ", b.ToString(),
                                     " cannot be broadcast together");
    }
  }
  return PartialShape(std::move(out));
}

std::optional<std::vector<int64_t>> InferenceContext::InputAsInts(int i) const {
  const Tensor* t = input_values_[i];
  if (t == nullptr || t->rank() > 1) return std::nullopt;
  std::vector<int64_t> out;
  if (t->dtype() == DType::kInt32) {
    for (int64_t k = 0; k < t->num_elements(); ++k) out.push_back(t->data<int32_t>()[k]);
  } else if (t->dtype() == DType::kInt64) {
    for (int64_t k = 0; k < t->num_elements(); ++k) out.push_back(t->data<int64_t>()[k]);
  } else {
    return std::nullopt;
  }
  return out;
}

namespace shape_fns {

Status Unknown(InferenceContext& c) {
  for (int i = 0; i < c.num_outputs(); ++i) c.set_output(i, PartialShape::Unknown());
  return OkStatus();
}

Status UnchangedShape(InferenceContext& c) {
  c.set_output(0, c.input(0));
  return OkStatus();
}

Status Scalar(InferenceContext& c) {
  for (int i = 0; i < c.num_outputs(); ++i) c.set_output(i, PartialShape(std::vector<int64_t>{}));
  return OkStatus();
}

Status BroadcastBinary(InferenceContext& c) {
  TFD_ASSIGN_OR_RETURN(PartialShape s, InferenceContext::Broadcast(c.input(0), c.input(1)));
  c.set_output(0, std::move(s));
  return OkStatus();
}

Status NoOutputs(InferenceContext&) { return OkStatus(); }

}  // namespace shape_fns
}  // namespace tfd
