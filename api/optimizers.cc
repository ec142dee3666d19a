#include "api/optimizers.h"

#include "common/gradients.h"
#include "common/save_slice_info.h"

namespace tfd::train {

using ops::AsOperation;

namespace {

// A slot of a shard of a partitioned variable is a shard too, of the
// logical slot "<full name>/<slot>" with the same rows, so that a
// checkpoint restores an optimizer's state into another sharding as it
// does the variable (TF's slot_creator copies _save_slice_info the same
// way). "" for a slot of an unpartitioned variable.
std::string SlotSliceInfo(const Scope& scope, const Variable& var, const std::string& slot) {
  const int id = scope.FindNode(var.name());
  if (id < 0) return "";
  const AttrMap& attrs = scope.node(id).attrs;
  const auto it = attrs.find(kSaveSliceInfoAttr);
  if (it == attrs.end()) return "";
  const auto* text = std::get_if<std::string>(&it->second);
  if (text == nullptr || text->empty()) return "";
  StatusOr<SaveSliceInfo> info = SaveSliceInfo::Parse(*text);
  if (!info.ok()) return "";  // the variable's own kernel refuses it
  info->full_name += "/" + slot;
  return info->ToString();
}

}  // namespace

Output LearningRate::For(const Scope& scope, const Variable& var) const {
  if (!tensor_.valid()) return ops::AsOutput(scope, value_, var.dtype());
  if (!IsFloating(tensor_.dtype) || tensor_.shape.rank() > 0) {
    scope.UpdateStatus(errors::InvalidArgument("the learning rate '", tensor_.name(),
                                               "' must be a floating-point scalar, got ",
                                               DTypeName(tensor_.dtype), tensor_.shape.ToString()));
    return Output();
  }
  return tensor_.dtype == var.dtype() ? tensor_ : ops::Cast(scope, tensor_, var.dtype());
}

Output Optimizer::ScalarFor(const Scope& scope, double value, const Variable& var) {
  return ops::AsOutput(scope, value, var.dtype());
}

Operation Optimizer::ApplyDense(const Scope& scope, const Output& grad,
                                const Target& target) const {
  UpdateCall call = Update(scope, target);
  std::vector<Output> inputs = std::move(call.before_grad);
  inputs.push_back(grad);
  inputs.insert(inputs.end(), call.after_grad.begin(), call.after_grad.end());
  return scope.AddOperation(call.dense_op, inputs, std::move(call.attrs));
}

Operation Optimizer::ApplySparse(const Scope& scope, const IndexedSlices& grad,
                                 const Target& target) const {
  // Deduplicated before the call's constants are made, as the graphs of
  // earlier releases had their nodes (and so their generated names).
  const IndexedSlices g = Deduplicate(scope, grad);
  UpdateCall call = Update(scope, target);
  std::vector<Output> inputs = std::move(call.before_grad);
  inputs.push_back(g.values);
  inputs.push_back(g.indices);
  inputs.insert(inputs.end(), call.after_grad.begin(), call.after_grad.end());
  return scope.AddOperation(call.sparse_op, inputs, std::move(call.attrs));
}

IndexedSlices Optimizer::Deduplicate(const Scope& scope, const IndexedSlices& grad) {
  const Scope s = scope.WithName("deduplicate");
  const std::vector<Output> unique = s.AddOp("Unique", {grad.indices});
  if (unique.size() != 2) return IndexedSlices{};  // the error is in the scope
  const Output count = s.AddOperation("Size", {unique[0]}).output(0);
  const Output summed =
      s.AddOperation("UnsortedSegmentSum", {grad.values, unique[1], count}).output(0);
  return {summed, unique[0], grad.dense_shape};
}

StatusOr<std::vector<GradAndVar>> Optimizer::ComputeGradients(
    const Scope& scope, const Output& loss, std::vector<Variable> var_list) const {
  TFD_RETURN_IF_ERROR(scope.status());
  if (var_list.empty()) var_list = ops::TrainableVariables(scope);
  if (var_list.empty()) return errors::InvalidArgument(name(), ": no trainable variables");
  std::vector<Output> xs;
  for (const Variable& v : var_list) {
    if (!v.valid()) return errors::InvalidArgument(name(), ": var_list holds an invalid variable");
    xs.push_back(v.ref());
  }
  TFD_ASSIGN_OR_RETURN(std::vector<Gradient> grads, AddGradientsKeepSparse(scope, {loss}, xs));
  std::vector<GradAndVar> out;
  for (size_t i = 0; i < var_list.size(); ++i) {
    out.push_back({grads[i].dense, var_list[i], grads[i].sparse});
  }
  return out;
}

Operation Optimizer::ApplyGradients(const Scope& scope,
                                    const std::vector<GradAndVar>& grads_and_vars,
                                    const Variable& global_step) const {
  if (!scope.ok()) return Operation();
  const std::string op_name = scope.op_name().empty() ? name() : scope.op_name();
  const Scope plain = scope.WithOpName("");
  const Scope base = plain.WithName(op_name);
  std::vector<GradAndVar> todo;
  std::string names;
  for (const GradAndVar& gv : grads_and_vars) {
    names += (names.empty() ? "" : ", ") + gv.var.name();
    if (gv.has_gradient()) todo.push_back(gv);
  }
  if (todo.empty()) {
    scope.UpdateStatus(errors::InvalidArgument(
        op_name, ": the loss has no gradient for any of the variables [", names,
        "]; does it depend on them?"));
    return Operation();
  }
  const std::vector<Variable> shared =
      NonSlotVariables(plain.ColocatedWith(todo[0].var.ref()), todo[0].var);

  std::vector<Operation> updates;
  for (const GradAndVar& gv : todo) {
    const Variable& var = gv.var;
    std::vector<Variable> slots;
    const auto shape = var.ref().shape.AsTensorShape();
    if (num_slots() > 0 && !shape) {
      scope.UpdateStatus(errors::InvalidArgument(op_name, ": variable '", var.name(),
                                                 "' needs slots but its shape ",
                                                 var.ref().shape.ToString(), " is not known"));
      return Operation();
    }
    for (int k = 0; k < num_slots(); ++k) {
      const std::string slot = k == 0 ? name() : name() + "_" + std::to_string(k);
      const Scope slot_scope =
          plain.WithPrefix(var.name()).WithOpName(slot).ColocatedWith(var.ref());
      slots.emplace_back(slot_scope, *shape, var.dtype(), SlotInitializer(k),
                         ops::VariableOptions{.trainable = false,
                                              .save_slice_info = SlotSliceInfo(scope, var, slot)});
    }
    const Scope update = base.WithName("update_" + var.name()).ColocatedWith(var.ref());
    const Target target{var, slots, shared};
    updates.push_back(gv.sparse.valid() ? ApplySparse(update, gv.sparse, target)
                                        : ApplyDense(update, gv.grad, target));
  }
  const Scope finish_scope =
      shared.empty() ? base : base.ColocatedWith(shared.front().ref());
  const std::vector<Operation> finish = Finish(finish_scope, updates, shared);

  const Scope last = plain.WithOpName(op_name).WithControlDependencies(finish);
  if (!global_step.valid()) return ops::Group(last, {});
  return AsOperation(
      ops::AssignAdd(last.ColocatedWith(global_step.ref()), global_step.ref(), 1));
}

Operation Optimizer::Minimize(const Scope& scope, const Output& loss, const Variable& global_step,
                              std::vector<Variable> var_list) const {
  auto grads = ComputeGradients(scope.WithOpName(""), loss, std::move(var_list));
  if (!grads.ok()) {
    scope.UpdateStatus(grads.status());
    return Operation();
  }
  return ApplyGradients(scope, *grads, global_step);
}

Optimizer::UpdateCall GradientDescent::Update(const Scope& s, const Target& t) const {
  return {"ApplyGradientDescent", "", {t.var.ref(), lr_.For(s, t.var)}};
}

Operation GradientDescent::ApplySparse(const Scope& s, const IndexedSlices& grad,
                                       const Target& t) const {
  const Output delta = ops::Mul(s, grad.values, lr_.For(s, t.var));
  return s.AddOperation("ScatterSub", {t.var.ref(), grad.indices, delta});
}

Optimizer::UpdateCall Momentum::Update(const Scope& s, const Target& t) const {
  return {"ApplyMomentum", "SparseApplyMomentum",
          {t.var.ref(), t.slots[0].ref(), lr_.For(s, t.var)},
          {ScalarFor(s, momentum_, t.var)},
          {{"use_nesterov", nesterov_}}};
}

std::vector<Variable> Adam::NonSlotVariables(const Scope& s, const Variable& first) const {
  const ops::VariableOptions opts{.trainable = false};
  return {Variable(s.WithOpName("beta1_power"), TensorShape(), first.dtype(),
                   ops::Initializer::Constant(beta1_), opts),
          Variable(s.WithOpName("beta2_power"), TensorShape(), first.dtype(),
                   ops::Initializer::Constant(beta2_), opts)};
}

// The sparse step moves the moments of the rows touched only (TF contrib's
// LazyAdamOptimizer). The beta powers have the first variable's dtype: a
// variable of another reads them cast, as TF's Adam does.
Optimizer::UpdateCall Adam::Update(const Scope& s, const Target& t) const {
  auto as_var = [&](const Output& x) {
    return x.dtype == t.var.dtype() ? x : ops::Cast(s, x, t.var.dtype());
  };
  return {"ApplyAdam", "SparseApplyLazyAdam",
          {t.var.ref(), t.slots[0].ref(), t.slots[1].ref(), as_var(t.shared[0].value()),
           as_var(t.shared[1].value()), lr_.For(s, t.var), ScalarFor(s, beta1_, t.var),
           ScalarFor(s, beta2_, t.var), ScalarFor(s, epsilon_, t.var)}};
}

std::vector<Operation> Adam::Finish(const Scope& s, const std::vector<Operation>& updates,
                                    const std::vector<Variable>& shared) const {
  // beta^t -> beta^(t+1), once every variable has used beta^t.
  const Scope after = s.WithControlDependencies(updates);
  const double betas[2] = {beta1_, beta2_};
  std::vector<Operation> out;
  for (int i = 0; i < 2; ++i) {
    const Variable& power = shared[i];
    out.push_back(AsOperation(ops::Assign(
        after, power.ref(), ops::Mul(after, power.value(), ScalarFor(after, betas[i], power)))));
  }
  return out;
}

}  // namespace tfd::train
