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

Status OpKernelContext::allocate_output(int i, const TensorShape& shape, Tensor** out) {
  auto t = Tensor::Allocate(output_types_[i], shape);
  if (!t.ok()) return t.status().WithContext("output " + std::to_string(i) + " of '" + node().name + "'");
  outputs_[i].tensor = std::move(t).value();
  *out = &outputs_[i].tensor;
  return OkStatus();
}

void OpKernelContext::set_output(int i, Tensor t) { outputs_[i].tensor = std::move(t); }

void OpKernelContext::set_output_ref(int i, std::shared_ptr<ResourceBase> r) {
  outputs_[i].ref = std::move(r);
}

}  // namespace tfd
