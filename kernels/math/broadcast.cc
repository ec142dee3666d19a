// Building a BroadcastPlan: the output shape, the collapsed strided form and
// the gradient reduction axes, all from one pass over the padded dimensions.
#include "kernels/math/broadcast.h"

#include <algorithm>

namespace tfd::kernels {

StatusOr<BroadcastPlan> BroadcastPlan::Make(const TensorShape& x, const TensorShape& y) {
  const int rank = std::max(x.rank(), y.rank());
  // Shapes padded on the left with 1s to the common rank, as numpy does.
  std::vector<int64_t> xd(rank, 1), yd(rank, 1), od(rank);
  std::copy(x.dims().begin(), x.dims().end(), xd.begin() + (rank - x.rank()));
  std::copy(y.dims().begin(), y.dims().end(), yd.begin() + (rank - y.rank()));

  BroadcastPlan plan;
  const bool identical = x.dims() == y.dims();
  for (int i = 0; i < rank; ++i) {
    if (xd[i] == yd[i]) {
      od[i] = xd[i];
      // TensorFlow reports axes of size 1 in both inputs as reducible for
      // both, except when the shapes are identical; gradient code relies on
      // that exact list, so it is reproduced rather than tidied.
      if (xd[i] == 1 && !identical) {
        plan.x_reduce_axes_.push_back(i);
        plan.y_reduce_axes_.push_back(i);
      }
    } else if (xd[i] == 1) {
      od[i] = yd[i];
      plan.x_reduce_axes_.push_back(i);
    } else if (yd[i] == 1) {
      od[i] = xd[i];
      plan.y_reduce_axes_.push_back(i);
    } else {
      return errors::InvalidArgument("Incompatible shapes for broadcasting: ", x.ToString(),
                                     " vs. ", y.ToString(), " (dimension ", i - rank, " is ",
                                     xd[i], " vs. ", yd[i], ")");
    }
  }
  // Each input is valid, but the broadcast of two can still exceed the limit.
  TFD_ASSIGN_OR_RETURN(plan.output_shape_, TensorShape::Make(od));

  if (identical) {
    plan.kind_ = Kind::kSameShape;
  } else if (x.num_elements() == 1) {
    plan.kind_ = Kind::kScalarX;
  } else if (y.num_elements() == 1) {
    plan.kind_ = Kind::kScalarY;
  } else {
    plan.kind_ = Kind::kGeneral;
  }

  // Collapse: drop output dims of size 1 (nothing to walk), then merge runs of
  // neighbours that repeat the same input(s). Strides follow from the merged
  // dims, innermost first.
  std::vector<bool> x_rep, y_rep;
  for (int i = 0; i < rank; ++i) {
    if (od[i] == 1) continue;
    const bool xr = xd[i] == 1, yr = yd[i] == 1;
    if (!plan.dims_.empty() && x_rep.back() == xr && y_rep.back() == yr) {
      plan.dims_.back() *= od[i];
      continue;
    }
    plan.dims_.push_back(od[i]);
    x_rep.push_back(xr);
    y_rep.push_back(yr);
  }
  const size_t n = plan.dims_.size();
  plan.x_strides_.assign(n, 0);
  plan.y_strides_.assign(n, 0);
  int64_t x_step = 1, y_step = 1;
  for (size_t k = n; k-- > 0;) {
    if (!x_rep[k]) {
      plan.x_strides_[k] = x_step;
      x_step *= plan.dims_[k];
    }
    if (!y_rep[k]) {
      plan.y_strides_[k] = y_step;
      y_step *= plan.dims_[k];
    }
  }
  return plan;
}

}  // namespace tfd::kernels
