// Optimizers, as tf.train's: Minimize(loss) adds the gradients of loss for
// every trainable variable, one apply op per variable (ApplyGradientDescent,
// ApplyMomentum, ApplyAdam, colocated with the variable and its slots), and
// then — after all the updates — adds 1 to global_step. The returned
// Operation is the train op to run each step.
//
//   Variable step = GlobalStep(root);
//   GradientDescent sgd(0.5);
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

namespace tfd::train {

using ops::Variable;

struct GradAndVar {
  Output grad;  // invalid: the loss does not depend on the variable
  Variable var;
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;

  // d(loss)/d(var) for each of var_list (default: every trainable variable).
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
  // The update of one variable, in a scope colocated with it. `slots` are
  // its num_slots() slot variables; `shared` the NonSlotVariables.
  virtual Operation ApplyDense(const Scope& scope, const Output& grad, const Variable& var,
                               const std::vector<Variable>& slots,
                               const std::vector<Variable>& shared) const = 0;
  // How many zero-initialized slot variables each variable needs.
  virtual int num_slots() const { return 0; }
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
};

class GradientDescent : public Optimizer {
 public:
  explicit GradientDescent(double learning_rate) : lr_(learning_rate) {}
  std::string name() const override { return "GradientDescent"; }

 protected:
  Operation ApplyDense(const Scope& scope, const Output& grad, const Variable& var,
                       const std::vector<Variable>& slots,
                       const std::vector<Variable>& shared) const override;

 private:
  double lr_;
};

class Momentum : public Optimizer {
 public:
  Momentum(double learning_rate, double momentum, bool use_nesterov = false)
      : lr_(learning_rate), momentum_(momentum), nesterov_(use_nesterov) {}
  std::string name() const override { return "Momentum"; }

 protected:
  int num_slots() const override { return 1; }
  Operation ApplyDense(const Scope& scope, const Output& grad, const Variable& var,
                       const std::vector<Variable>& slots,
                       const std::vector<Variable>& shared) const override;

 private:
  double lr_, momentum_;
  bool nesterov_;
};

class Adam : public Optimizer {
 public:
  explicit Adam(double learning_rate = 0.001, double beta1 = 0.9, double beta2 = 0.999,
                double epsilon = 1e-8)
      : lr_(learning_rate), beta1_(beta1), beta2_(beta2), epsilon_(epsilon) {}
  std::string name() const override { return "Adam"; }

 protected:
  int num_slots() const override { return 2; }
  std::vector<Variable> NonSlotVariables(const Scope& scope, const Variable& first) const override;
  Operation ApplyDense(const Scope& scope, const Output& grad, const Variable& var,
                       const std::vector<Variable>& slots,
                       const std::vector<Variable>& shared) const override;
  std::vector<Operation> Finish(const Scope& scope, const std::vector<Operation>& updates,
                                const std::vector<Variable>& shared) const override;

 private:
  double lr_, beta1_, beta2_, epsilon_;
};

}  // namespace tfd::train
