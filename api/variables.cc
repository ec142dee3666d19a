#include "api/variables.h"

#include "common/save_slice_info.h"

namespace tfd::ops {
namespace {

// A scalar of `dtype` holding v.
Tensor ScalarOf(DType dtype, double v) {
  switch (dtype) {
    case DType::kFloat64: return Tensor::Scalar<double>(v);
    case DType::kInt32: return Tensor::Scalar<int32_t>(static_cast<int32_t>(v));
    case DType::kInt64: return Tensor::Scalar<int64_t>(static_cast<int64_t>(v));
    case DType::kUInt8: return Tensor::Scalar<uint8_t>(static_cast<uint8_t>(v));
    case DType::kBool: return Tensor::Scalar<bool>(v != 0);
    default: return Tensor::Scalar<float>(static_cast<float>(v));
  }
}

// The part of `name` after the scope's prefix ("layer1/w_1" -> "w_1").
std::string LeafName(const Scope& scope, const std::string& name) {
  const std::string& prefix = scope.name_prefix();
  if (prefix.empty() || name.size() <= prefix.size()) return name;
  return name.substr(prefix.size() + 1);
}

}  // namespace

Initializer Initializer::Zeros() { return Constant(0); }
Initializer Initializer::Ones() { return Constant(1); }

Initializer Initializer::Constant(double value) {
  Initializer i;
  i.kind_ = Kind::kFill;
  i.a_ = value;
  return i;
}

Initializer Initializer::RandomNormal(double stddev, std::optional<int64_t> seed, double mean) {
  Initializer i;
  i.kind_ = Kind::kNormal;
  i.a_ = stddev;
  i.b_ = mean;
  i.seed_ = seed;
  return i;
}

Initializer Initializer::TruncatedNormal(double stddev, std::optional<int64_t> seed,
                                         double mean) {
  Initializer i = RandomNormal(stddev, seed, mean);
  i.kind_ = Kind::kTruncatedNormal;
  return i;
}

Initializer Initializer::RandomUniform(double minval, double maxval,
                                       std::optional<int64_t> seed) {
  Initializer i;
  i.kind_ = Kind::kUniform;
  i.a_ = minval;
  i.b_ = maxval;
  i.seed_ = seed;
  return i;
}

Initializer Initializer::Value(Tensor value) {
  Initializer i;
  i.kind_ = Kind::kValue;
  i.value_ = std::move(value);
  return i;
}

namespace {

// x * scale + shift, leaving out a multiplication by 1 and an addition of 0:
// each is a temporary as large as the variable, which for a table's shard
// of a GiB is a GiB more for the ps to hold while it initializes.
Output ScaleAndShift(const Scope& scope, const Output& x, double scale, double shift) {
  const Output scaled = scale == 1 ? x : Mul(scope, x, scale);
  return shift == 0 ? scaled : Add(scope, scaled, shift);
}

}  // namespace

Status Initializer::CheckFits(const std::string& variable, const TensorShape& shape,
                              DType dtype) const {
  if (kind_ != Kind::kValue) return OkStatus();
  if (value_.dtype() != dtype) {
    return errors::InvalidArgument("the initial value of variable '", variable, "' is ",
                                   DTypeName(value_.dtype()), ", the variable ", DTypeName(dtype));
  }
  if (!(value_.shape() == shape)) {
    return errors::InvalidArgument("the initial value of variable '", variable, "' has shape ",
                                   value_.shape().ToString(), ", the variable ", shape.ToString());
  }
  return OkStatus();
}

Output Initializer::Build(const Scope& scope, const TensorShape& shape, DType dtype) const {
  std::vector<int32_t> dims(shape.dims().begin(), shape.dims().end());
  const Output dims_out = Const(scope.WithOpName("shape"), Tensor::FromVector<int32_t>(dims));
  switch (kind_) {
    case Kind::kFill:
      return Fill(scope, dims_out, Const(scope.WithOpName("value"), ScalarOf(dtype, a_)));
    case Kind::kValue:
      return Const(scope, value_);
    case Kind::kNormal:
    case Kind::kTruncatedNormal: {
      const Output z = kind_ == Kind::kNormal ? ops::RandomNormal(scope, dims_out, dtype, seed_)
                                              : ops::TruncatedNormal(scope, dims_out, dtype, seed_);
      return ScaleAndShift(scope, z, a_, b_);
    }
    case Kind::kUniform: {
      const Output u = ops::RandomUniform(scope, dims_out, dtype, seed_);
      return ScaleAndShift(scope, u, b_ - a_, a_);
    }
  }
  return Output();
}

Initializer Initializer::ForShard(const TensorShape& full, int64_t first_row, int64_t rows,
                                  int shard) const {
  Initializer i = *this;
  if (kind_ == Kind::kValue && value_.shape() == full) {
    i.value_ = value_.Slice(first_row, first_row + rows);
  }
  if (seed_ && shard != 0) {
    // splitmix64's step: nearby seeds and shards give unrelated streams.
    // Without an op seed there is nothing to derive: each shard's random op
    // gets its own seeds from the graph's (api/random_seed.h).
    uint64_t z = static_cast<uint64_t>(*seed_) + 0x9E3779B97F4A7C15ULL * static_cast<uint64_t>(shard);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    i.seed_ = static_cast<int64_t>(z ^ (z >> 31));
  }
  return i;
}

Variable::Variable(const Scope& scope, const TensorShape& shape, DType dtype,
                   const Initializer& init, VariableOptions options) {
  // Variables belong to the graph, not to whatever control context they are
  // created in.
  const Scope base = options.local ? scope.WithNoControlDependencies().WithDeviceFunction(nullptr)
                                   : scope.WithNoControlDependencies();
  const Scope named = base.WithOpName(scope.op_name().empty() ? "Variable" : scope.op_name());
  AttrMap attrs{{"shape", PartialShape(shape)}, {"dtype", dtype}};
  if (!options.save_slice_info.empty()) attrs.emplace(kSaveSliceInfoAttr, options.save_slice_info);
  const Operation var = named.AddOperation("VariableV2", {}, std::move(attrs));
  if (!var.valid()) return;
  if (Status fits = init.CheckFits(var.name, shape, dtype); !fits.ok()) {
    scope.UpdateStatus(fits);
    return;
  }
  const Output ref = var.output(0);
  // Everything else goes beside the variable, whatever the device function
  // would choose.
  const Scope inner = base.WithName(LeafName(base, var.name)).WithOpName("").ColocatedWith(ref);
  const Output initial = init.Build(inner.WithName("Initializer"), shape, dtype);
  const Output assign = Assign(inner.WithOpName("Assign"), ref, initial);
  const Output read = Identity(inner.WithOpName("read"), ref);
  if (!assign.valid() || !read.valid()) return;
  info_ = VariableInfo{ref, read, assign.node, inner.device(),
                       options.trainable && !options.local, options.local};
  scope.AddVariable(info_);
}

namespace {

std::vector<Variable> VariablesWhere(const Scope& scope, bool (*keep)(const VariableInfo&)) {
  std::vector<Variable> out;
  for (const VariableInfo& v : scope.variables()) {
    if (keep(v)) out.emplace_back(v);
  }
  return out;
}

}  // namespace

std::vector<Variable> GlobalVariables(const Scope& scope) {
  return VariablesWhere(scope, [](const VariableInfo& v) { return !v.local; });
}

std::vector<Variable> TrainableVariables(const Scope& scope) {
  return VariablesWhere(scope, [](const VariableInfo& v) { return v.trainable; });
}

std::vector<Variable> LocalVariables(const Scope& scope) {
  return VariablesWhere(scope, [](const VariableInfo& v) { return v.local; });
}

Operation GlobalVariablesInitializer(const Scope& scope) {
  std::vector<Operation> inits;
  for (const Variable& v : GlobalVariables(scope)) inits.push_back(v.initializer());
  const std::string name = scope.op_name().empty() ? "init" : scope.op_name();
  return Group(scope.WithNoControlDependencies().WithOpName(name), inits);
}

Variable GlobalStep(const Scope& scope) {
  const std::string want =
      scope.name_prefix().empty() ? "global_step" : scope.name_prefix() + "/global_step";
  for (const VariableInfo& v : scope.variables()) {
    if (v.ref.node == want) return Variable(v);
  }
  return Variable(scope.WithOpName("global_step"), TensorShape(), DType::kInt64,
                  Initializer::Zeros(), VariableOptions{.trainable = false});
}

}  // namespace tfd::ops
