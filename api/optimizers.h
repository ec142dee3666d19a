// Optimizers, as tf.train's: Minimize(loss) adds the gradients of loss for
// every trainable variable, one apply op per variable (ApplyGradientDescent,
// ApplyMomentum, ApplyAdam, ApplyAdagrad, ApplyRMSProp, ApplyFtrl(V2),
// colocated with the variable and its slots), and then — after all the
// updates — adds 1 to global_step. The returned Operation is the train op to
// run each step.
//
// A variable read only through gathers of its rows (an embedding table) gets
// a sparse gradient (common/gradients.h's IndexedSlices) and a sparse update
// that touches those rows only, as TF's _apply_sparse: GradientDescent
// ScatterSubs lr * rows; the others first sum the rows of duplicate indices
// (TF's _deduplicate_indexed_slices) and then run SparseApplyMomentum,
// SparseApplyAdagrad, SparseApplyRMSProp, SparseApplyFtrl(V2), or for Adam
// SparseApplyLazyAdam (moments move only on the rows touched, as TF
// contrib's LazyAdamOptimizer).
//
//   Variable step = GlobalStep(root);
//   GradientDescent sgd(0.5);           // or a scalar tensor: a decayed rate (LearningRate)
//   Operation train = sgd.Minimize(root.WithOpName("train"), loss, step);
//   Operation init = GlobalVariablesInitializer(root);   // after Minimize: slots too
//
// Slot variables (Momentum's accumulator, Adam's m and v) are named
// "<variable>/<Optimizer>", "<variable>/<Optimizer>_1", live beside their
// variable and are initialized to zeros by GlobalVariablesInitializer, which
// must therefore be built after Minimize. Errors (no variable receives a
// gradient, a variable of another dtype) go to the scope, as for every op.
//
// Thread-safety: as Scope. An optimizer object holds only its
// hyperparameters, so one may serve several graphs.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "api/variables.h"
#include "common/gradients.h"

namespace tfd::train {

using ops::Variable;

struct GradAndVar {
  Output grad;  // invalid: the loss does not depend on the variable, or it is sparse
  Variable var;
  IndexedSlices sparse = {};  // valid: the gradient is these rows (grad is then invalid)

  bool has_gradient() const { return grad.valid() || sparse.valid(); }
};

// A learning rate: a number, or a scalar tensor worked out each step (a
// decayed rate: tf.train.exponential_decay's, a placeholder fed), as TF1's
// optimizers take either. Each update reads it as its variable's dtype.
class LearningRate {
 public:
  LearningRate(double value) : value_(value) {}                // NOLINT: implicit, as TF's
  LearningRate(Output tensor) : tensor_(std::move(tensor)) {}  // NOLINT: implicit, as TF's

  // The rate as a scalar of var's dtype in `scope`: the number as a
  // constant, the tensor as it is or cast. A tensor that is not a scalar of
  // a floating dtype is INVALID_ARGUMENT on the scope.
  Output For(const Scope& scope, const Variable& var) const;

 private:
  double value_ = 0;
  Output tensor_;
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;

  // d(loss)/d(var) for each of var_list (default: every trainable variable);
  // sparse for a variable read only through gathers.
  StatusOr<std::vector<GradAndVar>> ComputeGradients(const Scope& scope, const Output& loss,
                                                     std::vector<Variable> var_list = {}) const;
  // The update ops for the pairs with a gradient, then global_step += 1
  // (when global_step is valid). Named scope.op_name() or the optimizer's name.
  Operation ApplyGradients(const Scope& scope, const std::vector<GradAndVar>& grads_and_vars,
                           const Variable& global_step = {}) const;
  // ComputeGradients then ApplyGradients.
  Operation Minimize(const Scope& scope, const Output& loss, const Variable& global_step = {},
                     std::vector<Variable> var_list = {}) const;

  virtual std::string name() const = 0;

 protected:
  // What one variable's update works on: the variable, its num_slots()
  // slot variables, and the NonSlotVariables all updates share.
  struct Target {
    const Variable& var;
    const std::vector<Variable>& slots;
    const std::vector<Variable>& shared;
  };
  // An update as its kernel's call: the dense op, the sparse op (which takes
  // the rows' values and indices where the dense one takes the gradient; an
  // optimizer without one overrides ApplySparse), the inputs before and
  // after the gradient, and the attrs. Every optimizer says its own; made
  // once per variable, in a scope colocated with it.
  struct UpdateCall {
    std::string dense_op;
    std::string sparse_op;
    std::vector<Output> before_grad;
    std::vector<Output> after_grad = {};
    AttrMap attrs = {};
  };
  virtual UpdateCall Update(const Scope& scope, const Target& target) const = 0;
  // The update of one variable: Update()'s dense op on `grad`.
  Operation ApplyDense(const Scope& scope, const Output& grad, const Target& target) const;
  // The update of the rows a sparse gradient names (indices may repeat).
  // Default: Update()'s sparse op on the deduplicated rows.
  virtual Operation ApplySparse(const Scope& scope, const IndexedSlices& grad,
                                const Target& target) const;
  // How many slot variables each variable needs, and slot k's initial value.
  virtual int num_slots() const { return 0; }
  virtual ops::Initializer SlotInitializer(int k) const { return ops::Initializer::Zeros(); }
  // Variables the optimizer keeps once per ApplyGradients (Adam's beta
  // powers), created in `scope`, which is colocated with `first`, the first
  // variable updated (whose dtype they take).
  virtual std::vector<Variable> NonSlotVariables(const Scope& scope, const Variable& first) const {
    return {};
  }
  // Ops that must run after every update (`updates`) and before global_step
  // moves. Default: the updates themselves.
  virtual std::vector<Operation> Finish(const Scope& scope, const std::vector<Operation>& updates,
                                        const std::vector<Variable>& shared) const {
    return updates;
  }

  // `value` as a scalar constant of var's dtype.
  static Output ScalarFor(const Scope& scope, double value, const Variable& var);
  // One row per distinct index, the rows of equal indices summed (TF's
  // _deduplicate_indexed_slices): what the SparseApply kernels expect, so
  // that a sparse step equals the dense one.
  static IndexedSlices Deduplicate(const Scope& scope, const IndexedSlices& grad);
};

class GradientDescent : public Optimizer {
 public:
  explicit GradientDescent(LearningRate learning_rate) : lr_(std::move(learning_rate)) {}
  std::string name() const override { return "GradientDescent"; }

 protected:
  UpdateCall Update(const Scope& scope, const Target& target) const override;
  // Duplicate indices subtract one after another: ScatterSub, no deduplication.
  Operation ApplySparse(const Scope& scope, const IndexedSlices& grad,
                        const Target& target) const override;

 private:
  LearningRate lr_;
};

class Momentum : public Optimizer {
 public:
  Momentum(LearningRate learning_rate, double momentum, bool use_nesterov = false)
      : lr_(std::move(learning_rate)), momentum_(momentum), nesterov_(use_nesterov) {}
  std::string name() const override { return "Momentum"; }

 protected:
  int num_slots() const override { return 1; }
  UpdateCall Update(const Scope& scope, const Target& target) const override;

 private:
  LearningRate lr_;
  double momentum_;
  bool nesterov_;
};

class Adam : public Optimizer {
 public:
  explicit Adam(LearningRate learning_rate = 0.001, double beta1 = 0.9, double beta2 = 0.999,
                double epsilon = 1e-8)
      : lr_(std::move(learning_rate)), beta1_(beta1), beta2_(beta2), epsilon_(epsilon) {}
  std::string name() const override { return "Adam"; }

 protected:
  int num_slots() const override { return 2; }
  std::vector<Variable> NonSlotVariables(const Scope& scope, const Variable& first) const override;
  UpdateCall Update(const Scope& scope, const Target& target) const override;
  std::vector<Operation> Finish(const Scope& scope, const std::vector<Operation>& updates,
                                const std::vector<Variable>& shared) const override;

 private:
  LearningRate lr_;
  double beta1_, beta2_, epsilon_;
};

// Adagrad (tf.train.AdagradOptimizer): accum += grad^2; var -= lr * grad /
// sqrt(accum). Slot "Adagrad" starts at initial_accumulator_value.
class Adagrad : public Optimizer {
 public:
  explicit Adagrad(LearningRate learning_rate, double initial_accumulator_value = 0.1)
      : lr_(std::move(learning_rate)), initial_accum_(initial_accumulator_value) {}
  std::string name() const override { return "Adagrad"; }

 protected:
  int num_slots() const override { return 1; }
  ops::Initializer SlotInitializer(int) const override;
  UpdateCall Update(const Scope& scope, const Target& target) const override;

 private:
  LearningRate lr_;
  double initial_accum_;
};

// RMSProp (tf.train.RMSPropOptimizer): slots "RMSProp" (the mean square,
// starting at ones as in TF) and "RMSProp_1" (the momentum, zeros).
class RMSProp : public Optimizer {
 public:
  explicit RMSProp(LearningRate learning_rate, double decay = 0.9, double momentum = 0.0,
                   double epsilon = 1e-10)
      : lr_(std::move(learning_rate)), decay_(decay), momentum_(momentum), epsilon_(epsilon) {}
  std::string name() const override { return "RMSProp"; }

 protected:
  int num_slots() const override { return 2; }
  ops::Initializer SlotInitializer(int k) const override;
  UpdateCall Update(const Scope& scope, const Target& target) const override;

 private:
  LearningRate lr_;
  double decay_, momentum_, epsilon_;
};

// FTRL-Proximal (tf.train.FtrlOptimizer), the click-through-rate classic:
// slots "Ftrl" (the accumulator, starting at initial_accumulator_value) and
// "Ftrl_1" (linear, zeros). A non-zero l2_shrinkage runs the V2 kernels.
struct FtrlOptions {
  double learning_rate_power = -0.5;
  double initial_accumulator_value = 0.1;
  double l1 = 0.0;
  double l2 = 0.0;
  double l2_shrinkage = 0.0;
};

class Ftrl : public Optimizer {
 public:
  explicit Ftrl(LearningRate learning_rate, FtrlOptions options = {})
      : lr_(std::move(learning_rate)), o_(options) {}
  std::string name() const override { return "Ftrl"; }

 protected:
  int num_slots() const override { return 2; }
  ops::Initializer SlotInitializer(int k) const override;
  UpdateCall Update(const Scope& scope, const Target& target) const override;

 private:
  // The hyper-parameters after grad (and indices), in the kernel's order.
  std::vector<Output> Scalars(const Scope& scope, const Variable& var) const;

  LearningRate lr_;
  FtrlOptions o_;
};

}  // namespace tfd::train
