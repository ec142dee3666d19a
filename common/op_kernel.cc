#include "common/op_kernel.h"

namespace tfd {

StatusOr<std::filesystem::path> KernelEnv::ResolveIoPath(const std::string& path) const {
  namespace fs = std::filesystem;
  if (io_dirs.empty()) {
    return errors::InvalidArgument("path '", path,
                                   "' refused: this task allows file access in no directory");
  }
  if (path.empty()) return errors::InvalidArgument("empty file path");
  fs::path p(path);
  if (p.is_relative()) p = io_dirs.front() / p;
  std::error_code ec;
  // weakly_canonical resolves symlinks of the existing prefix and removes
  // "..", so a link or a ".." cannot lead outside the allowed directory.
  fs::path resolved = fs::weakly_canonical(p, ec);
  if (ec) return errors::InvalidArgument("path '", path, "': ", ec.message());
  for (const fs::path& dir : io_dirs) {
    fs::path root = fs::weakly_canonical(dir, ec);
    if (ec) continue;
    auto [root_end, _] = std::mismatch(root.begin(), root.end(), resolved.begin(), resolved.end());
    if (root_end == root.end()) return resolved;
  }
  return errors::InvalidArgument("path '", path, "' is outside the allowed directories (",
                                 io_dirs.front().string(), io_dirs.size() > 1 ? ", ..." : "",
                                 ")");
}

OpKernelConstruction::OpKernelConstruction(const NodeInfo& node, const OpDef& def,
                                           const AttrMap& attrs, std::vector<DType> input_types,
                                           std::vector<DType> output_types, const KernelEnv& env)
    : node_(node),
      def_(def),
      attrs_(attrs),
      input_types_(std::move(input_types)),
      output_types_(std::move(output_types)),
      env_(env) {}

void AsyncOpKernel::Compute(OpKernelContext& ctx) {
  ctx.SetStatus(errors::Internal("async kernel '", name(), "' called synchronously"));
}

OpKernelContext::OpKernelContext(const OpKernel& kernel, const KernelEnv& env,
                                 const StepContext& step, std::vector<Value> inputs,
                                 std::vector<DType> output_types)
    : kernel_(kernel),
      env_(env),
      step_(step),
      inputs_(std::move(inputs)),
      output_types_(std::move(output_types)),
      outputs_(output_types_.size()) {}

StatusOr<Tensor> AllocateKernelOutput(const SizeLimits& limits,
                                      const std::shared_ptr<MemoryBudget>& budget,
                                      DeviceMemory* memory, DType dtype, const TensorShape& shape,
                                      std::string_view node, int output, Fill fill) {
  // The executor puts "node 'x' (Op): " in front of a kernel's error. Built
  // only for an error: on every successful call the strings cost as much as
  // a small kernel's arithmetic (bench/NOTES.md, "The fixed cost of a kernel
  // call").
  auto where = [&] {
    return "output " + std::to_string(output) + " of '" + std::string(node) + "': " +
           std::string(DTypeName(dtype)) + shape.ToString();
  };
  // Shapes made with the unchecked constructors may count more elements
  // than any buffer holds (saturated at INT64_MAX when the product overflows).
  if (shape.num_elements() > kMaxTensorElements) {
    return errors::InvalidArgument(where(), " has more than ", kMaxTensorElements, " elements");
  }
  const uint64_t bytes = TensorBytes(dtype, shape.num_elements());
  if (bytes > limits.max_tensor_bytes) {
    return errors::ResourceExhausted(where(), " takes ", FormatBytes(bytes), ", more than the ",
                                     FormatBytes(limits.max_tensor_bytes),
                                     " allowed for one tensor (--max-tensor-bytes)");
  }
  auto t = Tensor::AllocateOn(memory, dtype, shape, budget, fill);
  if (!t.ok()) return t.status().WithContext(where());
  return t;
}

StatusOr<Tensor> OpKernelContext::Allocate(DType dtype, const TensorShape& shape, int output,
                                           Fill fill) {
  const NodeInfo& n = node();
  DeviceMemory* memory = output < 64 && (n.host_outputs >> output & 1) ? nullptr : n.memory;
  return AllocateKernelOutput(env_.limits, env_.memory, memory, dtype, shape, n.name, output,
                              fill);
}

Status OpKernelContext::allocate_output(int i, const TensorShape& shape, Tensor** out) {
  TFD_ASSIGN_OR_RETURN(outputs_[i].tensor, Allocate(output_types_[i], shape, i, Fill::kZeros));
  *out = &outputs_[i].tensor;
  return OkStatus();
}

Status OpKernelContext::allocate_output_for_overwrite(int i, const TensorShape& shape,
                                                     Tensor** out) {
  TFD_ASSIGN_OR_RETURN(outputs_[i].tensor, Allocate(output_types_[i], shape, i, Fill::kNone));
  *out = &outputs_[i].tensor;
  return OkStatus();
}

void OpKernelContext::set_output(int i, Tensor t) { outputs_[i].tensor = std::move(t); }

void OpKernelContext::set_output_ref(int i, std::shared_ptr<ResourceBase> r) {
  outputs_[i].ref = std::move(r);
}

}  // namespace tfd
