// Variables: mutable tensors that live on a task (a ps task, usually) across
// steps, as tf.Variable. A Variable is four nodes: the VariableV2 itself,
// "<name>/Initializer/..." computing the initial value, "<name>/Assign"
// setting it, and "<name>/read", the snapshot model code computes with. All
// but the first are colocated with it, so the initial value is made where it
// is stored. Every variable is recorded in its root scope; a
// GlobalVariablesInitializer runs every initializer.
//
//   Scope root = Scope::NewRootScope(registry);
//   Variable w(root.WithOpName("w"), {784, 10}, DType::kFloat32,
//              Initializer::RandomNormal(0.1, 1));
//   Variable b(root.WithOpName("b"), {10}, DType::kFloat32, Initializer::Zeros());
//   Output logits = ops::Add(root, ops::MatMul(root, x, w), b);
//   Operation init = GlobalVariablesInitializer(root);   // run once: "init"
//
// Thread-safety: as Scope (one thread per graph).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "api/ops.h"

namespace tfd::ops {

// How a variable's initial value is computed (in the graph, on the
// variable's task). A random initializer is a random op (api/ops.h), seeded
// from its `seed` and the graph's seed as TensorFlow 1 seeds them
// (api/random_seed.h): with either set it draws reproducible values, the
// same in every graph built the same way; with neither, different values
// each time it runs.
class Initializer {
 public:
  static Initializer Zeros();
  static Initializer Ones();
  static Initializer Constant(double value);
  static Initializer RandomNormal(double stddev, std::optional<int64_t> seed = std::nullopt,
                                  double mean = 0);
  // Normal, redrawn beyond two standard deviations (tf.truncated_normal).
  static Initializer TruncatedNormal(double stddev, std::optional<int64_t> seed = std::nullopt,
                                     double mean = 0);
  static Initializer RandomUniform(double minval, double maxval,
                                   std::optional<int64_t> seed = std::nullopt);
  // Exactly this value (dtype and shape must match the variable's).
  static Initializer Value(Tensor value);

  // INVALID_ARGUMENT naming `variable` and both shapes (or dtypes) when a
  // Value does not fit a variable of this shape and dtype; the Variable
  // constructor puts it in its scope.
  Status CheckFits(const std::string& variable, const TensorShape& shape, DType dtype) const;

  // The initial value of a variable of this shape and dtype, built in `scope`.
  Output Build(const Scope& scope, const TensorShape& shape, DType dtype) const;

  // The initializer of shard `shard`, rows [first_row, first_row + rows), of
  // a partitioned variable (api/partitioned_variables.h). Constants and
  // Value give exactly the rows the whole variable would hold. A random one
  // with an op seed draws each shard from its own op seed, derived from the
  // seed and the shard's index (as in TensorFlow, where each shard's
  // initializer is called on the shard's shape); one without, in a graph
  // with a seed, draws each shard from the graph seed and the shard's own
  // node count. Either is reproducible for a given sharding, but not the
  // rows of the unpartitioned draw, which would need the whole table drawn
  // on every ps. One seeded neither way is as random either way. A Value
  // that is not of `full` shape is kept whole, so that the shard's Assign
  // refuses it (a shape error of the scope) rather than cut it wrongly.
  Initializer ForShard(const TensorShape& full, int64_t first_row, int64_t rows, int shard) const;

 private:
  enum class Kind { kFill, kNormal, kTruncatedNormal, kUniform, kValue };
  Kind kind_ = Kind::kFill;
  double a_ = 0, b_ = 0;  // fill value; stddev and mean; minval and maxval
  std::optional<int64_t> seed_;  // the op seed; nullopt: unset
  Tensor value_;
};

struct VariableOptions {
  // Optimizers update trainable variables only (global_step is not one).
  bool trainable = true;
  // A local variable (tf.local_variables): one per replica, on the device
  // the scope names (the device function is not consulted, so a
  // ReplicaDeviceSetter does not send it to a ps), not trainable, and not run
  // by GlobalVariablesInitializer: each replica initializes its own.
  bool local = false;
  // A shard of a partitioned variable: the SaveSliceInfo text
  // (common/save_slice_info.h) put on its VariableV2 node as the attr
  // `_save_slice_info`. Set by PartitionedVariable; "" for any other.
  std::string save_slice_info;
};

class Variable {
 public:
  Variable() = default;  // invalid
  // Adds the variable's nodes. It is named scope.op_name() or "Variable";
  // its device comes from the scope (and its device function).
  Variable(const Scope& scope, const TensorShape& shape, DType dtype, const Initializer& init,
           VariableOptions options = {});
  // A variable already recorded in a scope (Scope::variables()).
  explicit Variable(const VariableInfo& info) : info_(info) {}

  bool valid() const { return info_.ref.valid(); }
  const std::string& name() const { return info_.ref.node; }
  const std::string& device() const { return info_.device; }
  DType dtype() const { return info_.ref.dtype; }
  // The reference output: what Assign, optimizers and gradients take.
  const Output& ref() const { return info_.ref; }
  // The value read each step ("<name>/read"); what expressions use.
  const Output& value() const { return info_.value; }
  operator Output() const { return info_.value; }  // NOLINT: use in expressions
  // The Assign of the initial value (run it, or GlobalVariablesInitializer).
  Operation initializer() const { return Operation{info_.initializer, {}}; }
  bool trainable() const { return info_.trainable; }
  const VariableInfo& info() const { return info_; }

 private:
  VariableInfo info_;
};

// The scope's graph's variables, in creation order: the global (shared)
// ones, the trainable ones among them, and the local ones.
std::vector<Variable> GlobalVariables(const Scope& scope);
std::vector<Variable> TrainableVariables(const Scope& scope);
std::vector<Variable> LocalVariables(const Scope& scope);

// A NoOp (named scope.op_name() or "init") that runs every global
// variable's initializer created so far: tf.global_variables_initializer().
Operation GlobalVariablesInitializer(const Scope& scope);

// A scalar int64 variable named "global_step", initialized to 0 and not
// trainable; optimizers add 1 to it per step (tf.train.get_or_create_global_step).
Variable GlobalStep(const Scope& scope);

}  // namespace tfd::ops
