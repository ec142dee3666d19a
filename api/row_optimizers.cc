// The optimizers whose updates are row rules (kernels/state/row_rules.h):
// Adagrad, RMSProp and FTRL-Proximal, each dense (Apply*) or sparse
// (SparseApply* on deduplicated rows), with TF's slot initial values.
#include "api/optimizers.h"

namespace tfd::train {

ops::Initializer Adagrad::SlotInitializer(int) const {
  return ops::Initializer::Constant(initial_accum_);
}

Operation Adagrad::ApplyDense(const Scope& s, const Output& grad, const Variable& var,
                              const std::vector<Variable>& slots,
                              const std::vector<Variable>&) const {
  return s.AddOperation("ApplyAdagrad", {var.ref(), slots[0].ref(), ScalarFor(s, lr_, var), grad});
}

Operation Adagrad::ApplySparse(const Scope& s, const IndexedSlices& grad, const Variable& var,
                               const std::vector<Variable>& slots,
                               const std::vector<Variable>&) const {
  const IndexedSlices g = Deduplicate(s, grad);
  return s.AddOperation("SparseApplyAdagrad", {var.ref(), slots[0].ref(), ScalarFor(s, lr_, var),
                                               g.values, g.indices});
}

ops::Initializer RMSProp::SlotInitializer(int k) const {
  return k == 0 ? ops::Initializer::Ones() : ops::Initializer::Zeros();
}

Operation RMSProp::ApplyDense(const Scope& s, const Output& grad, const Variable& var,
                              const std::vector<Variable>& slots,
                              const std::vector<Variable>&) const {
  return s.AddOperation("ApplyRMSProp",
                        {var.ref(), slots[0].ref(), slots[1].ref(), ScalarFor(s, lr_, var),
                         ScalarFor(s, decay_, var), ScalarFor(s, momentum_, var),
                         ScalarFor(s, epsilon_, var), grad});
}

Operation RMSProp::ApplySparse(const Scope& s, const IndexedSlices& grad, const Variable& var,
                               const std::vector<Variable>& slots,
                               const std::vector<Variable>&) const {
  const IndexedSlices g = Deduplicate(s, grad);
  return s.AddOperation("SparseApplyRMSProp",
                        {var.ref(), slots[0].ref(), slots[1].ref(), ScalarFor(s, lr_, var),
                         ScalarFor(s, decay_, var), ScalarFor(s, momentum_, var),
                         ScalarFor(s, epsilon_, var), g.values, g.indices});
}

ops::Initializer Ftrl::SlotInitializer(int k) const {
  return k == 0 ? ops::Initializer::Constant(o_.initial_accumulator_value)
                : ops::Initializer::Zeros();
}

std::vector<Output> Ftrl::Scalars(const Scope& s, const Variable& var) const {
  std::vector<Output> out{ScalarFor(s, lr_, var), ScalarFor(s, o_.l1, var),
                          ScalarFor(s, o_.l2, var)};
  if (o_.l2_shrinkage != 0) out.push_back(ScalarFor(s, o_.l2_shrinkage, var));
  out.push_back(ScalarFor(s, o_.learning_rate_power, var));
  return out;
}

Operation Ftrl::ApplyDense(const Scope& s, const Output& grad, const Variable& var,
                           const std::vector<Variable>& slots,
                           const std::vector<Variable>&) const {
  std::vector<Output> in{var.ref(), slots[0].ref(), slots[1].ref(), grad};
  for (const Output& x : Scalars(s, var)) in.push_back(x);
  return s.AddOperation(o_.l2_shrinkage != 0 ? "ApplyFtrlV2" : "ApplyFtrl", in);
}

Operation Ftrl::ApplySparse(const Scope& s, const IndexedSlices& grad, const Variable& var,
                            const std::vector<Variable>& slots,
                            const std::vector<Variable>&) const {
  const IndexedSlices g = Deduplicate(s, grad);
  std::vector<Output> in{var.ref(), slots[0].ref(), slots[1].ref(), g.values, g.indices};
  for (const Output& x : Scalars(s, var)) in.push_back(x);
  return s.AddOperation(o_.l2_shrinkage != 0 ? "SparseApplyFtrlV2" : "SparseApplyFtrl", in);
}

}  // namespace tfd::train
