#include "api/all_reduce_training.h"

#include <string>
#include <utility>

#include "api/ops.h"
#include "common/gradients.h"

namespace tfd::train {

std::vector<GradAndVar> AllReduceGradients(const Scope& scope,
                                           const std::vector<GradAndVar>& grads_and_vars,
                                           const AllReduceOptions& options) {
  if (options.group_size < 1) {
    scope.UpdateStatus(errors::InvalidArgument("AllReduceGradients: group_size must be >= 1, got ",
                                               options.group_size));
    return {};
  }
  const Scope top = scope.WithName("all_reduce");
  std::vector<GradAndVar> out;
  int64_t instance = options.first_instance_key;
  for (const GradAndVar& gv : grads_and_vars) {
    if (!gv.has_gradient()) {
      out.push_back(gv);
      continue;
    }
    const Scope beside = top.WithName(gv.var.name()).ColocatedWith(gv.var.ref());
    const Output dense = gv.sparse.valid() ? Densify(beside, gv.sparse) : gv.grad;
    const Output mean = ops::CollectiveReduce(beside.WithOpName("mean"), dense,
                                              {.group_size = options.group_size,
                                               .group_key = options.group_key,
                                               .instance_key = instance++,
                                               .merge_op = "Add",
                                               .final_op = "Div"});
    out.push_back({.grad = mean, .var = gv.var});
  }
  return out;
}

Operation AllReduceMinimize(const Scope& scope, const Optimizer& optimizer, const Output& loss,
                            const AllReduceOptions& options, const Variable& global_step,
                            std::vector<Variable> var_list) {
  StatusOr<std::vector<GradAndVar>> grads =
      optimizer.ComputeGradients(scope, loss, std::move(var_list));
  if (!grads.ok()) {
    scope.UpdateStatus(grads.status());
    return Operation();
  }
  const std::vector<GradAndVar> reduced = AllReduceGradients(scope, *grads, options);
  if (!scope.status().ok()) return Operation();
  return optimizer.ApplyGradients(scope, reduced, global_step);
}

}  // namespace tfd::train
