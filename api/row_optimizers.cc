// The optimizers whose updates are row rules (kernels/state/row_rules.h):
// Adagrad, RMSProp and FTRL-Proximal, each dense (Apply*) or sparse
// (SparseApply* on deduplicated rows), with TF's slot initial values.
#include "api/optimizers.h"

namespace tfd::train {

ops::Initializer Adagrad::SlotInitializer(int) const {
  return ops::Initializer::Constant(initial_accum_);
}

Optimizer::UpdateCall Adagrad::Update(const Scope& s, const Target& t) const {
  return {"ApplyAdagrad", "SparseApplyAdagrad",
          {t.var.ref(), t.slots[0].ref(), lr_.For(s, t.var)}};
}

ops::Initializer RMSProp::SlotInitializer(int k) const {
  return k == 0 ? ops::Initializer::Ones() : ops::Initializer::Zeros();
}

Optimizer::UpdateCall RMSProp::Update(const Scope& s, const Target& t) const {
  return {"ApplyRMSProp", "SparseApplyRMSProp",
          {t.var.ref(), t.slots[0].ref(), t.slots[1].ref(), lr_.For(s, t.var),
           ScalarFor(s, decay_, t.var), ScalarFor(s, momentum_, t.var),
           ScalarFor(s, epsilon_, t.var)}};
}

ops::Initializer Ftrl::SlotInitializer(int k) const {
  return k == 0 ? ops::Initializer::Constant(o_.initial_accumulator_value)
                : ops::Initializer::Zeros();
}

std::vector<Output> Ftrl::Scalars(const Scope& s, const Variable& var) const {
  std::vector<Output> out{lr_.For(s, var), ScalarFor(s, o_.l1, var),
                          ScalarFor(s, o_.l2, var)};
  if (o_.l2_shrinkage != 0) out.push_back(ScalarFor(s, o_.l2_shrinkage, var));
  out.push_back(ScalarFor(s, o_.learning_rate_power, var));
  return out;
}

Optimizer::UpdateCall Ftrl::Update(const Scope& s, const Target& t) const {
  const bool v2 = o_.l2_shrinkage != 0;
  return {v2 ? "ApplyFtrlV2" : "ApplyFtrl", v2 ? "SparseApplyFtrlV2" : "SparseApplyFtrl",
          {t.var.ref(), t.slots[0].ref(), t.slots[1].ref()},
          Scalars(s, t.var)};
}

}  // namespace tfd::train
