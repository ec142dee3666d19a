#include "common/op_registry.h"

#include <algorithm>

namespace tfd {
namespace {

// Levenshtein distance, for "did you mean" hints on unknown op names.
size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const bool same = std::tolower(a[i - 1]) == std::tolower(b[j - 1]);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (same ? 0 : 1)});
    }
    prev.swap(cur);
  }
  return prev[b.size()];
}

}  // namespace

Status OpRegistry::Register(const OpDefBuilder& builder, ShapeFn shape_fn) {
  TFD_ASSIGN_OR_RETURN(OpDef def, builder.Finalize());
  if (ops_.count(def.name)) return errors::Internal("op '", def.name, "' registered twice");
  const std::string name = def.name;
  ops_.emplace(name, OpRegistration{std::move(def), std::move(shape_fn), {}});
  return OkStatus();
}

Status OpRegistry::RegisterKernel(const std::string& op, const std::string& device_type,
                                  KernelFactory factory, HostMemory host_memory,
                                  KernelTypes types) {
  auto it = ops_.find(op);
  if (it == ops_.end()) return errors::Internal("kernel for unregistered op '", op, "'");
  if (!it->second.kernels.emplace(device_type, std::move(factory)).second) {
    return errors::Internal("two ", device_type, " kernels for op '", op, "'");
  }
  if (host_memory.inputs != 0 || host_memory.outputs != 0) {
    it->second.host_memory[device_type] = host_memory;
  }
  if (!types.attr.empty()) it->second.kernel_types[device_type] = std::move(types);
  return OkStatus();
}

Status OpRegistry::RegisterGradient(const std::string& op, GradFn fn) {
  auto it = ops_.find(op);
  if (it == ops_.end()) return errors::Internal("gradient for unregistered op '", op, "'");
  if (it->second.grad_fn) return errors::Internal("two gradients for op '", op, "'");
  it->second.grad_fn = std::move(fn);
  return OkStatus();
}

const OpRegistration* OpRegistry::Find(const std::string& op) const {
  auto it = ops_.find(op);
  return it == ops_.end() ? nullptr : &it->second;
}

StatusOr<const OpRegistration*> OpRegistry::Lookup(const std::string& op) const {
  if (const OpRegistration* r = Find(op)) return r;
  std::string best;
  size_t best_d = 3;  // suggest only close names
  for (const auto& [name, reg] : ops_) {
    const size_t d = EditDistance(op, name);
    if (d < best_d) {
      best_d = d;
      best = name;
    }
  }
  return errors::NotFound("unknown op '", op, "'",
                          best.empty() ? "" : " (did you mean '" + best + "'?)");
}

std::vector<std::string> OpRegistry::OpNames() const {
  std::vector<std::string> names;
  for (const auto& [name, reg] : ops_) names.push_back(name);
  return names;
}

bool OpRegistration::HasKernelFor(const std::string& device_type, const AttrMap& attrs,
                                  std::string* why) const {
  if (kernels.count(device_type) == 0) {
    *why = "op " + def.name + " has no " + device_type + " kernel";
    return false;
  }
  auto t = kernel_types.find(device_type);
  if (t == kernel_types.end()) return true;
  auto a = attrs.find(t->second.attr);
  const DType* dtype = a == attrs.end() ? nullptr : std::get_if<DType>(&a->second);
  if (dtype == nullptr) return true;  // the kernel's own checks will say
  for (DType allowed : t->second.types) {
    if (allowed == *dtype) return true;
  }
  *why = "op " + def.name + " has no " + device_type + " kernel for " + std::string(DTypeName(*dtype));
  return false;
}

void StripDefaultAttrs(const OpRegistry& registry, GraphDef& graph) {
  for (NodeDef& n : graph.nodes) {
    if (const OpRegistration* reg = registry.Find(n.op)) StripDefaultAttrs(reg->def, n.attrs);
  }
}

}  // namespace tfd
