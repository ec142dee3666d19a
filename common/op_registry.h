// OpRegistry: every op the runtime knows — its definition, shape function
// and kernels per device type.
//
// The registry is an ordinary object built by main() (or a test) and passed
// down; kernels::RegisterAll(registry) fills it from one explicit list, so
// no op silently goes missing from a static library.
//
//   OpRegistry reg;
//   kernels::RegisterAll(reg);
//   const OpRegistration* r = reg.Find("MatMul");
//
// Thread-safety: fill it on one thread before use; afterwards it is read-only
// and may be shared by any number of threads.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/op_def.h"
#include "common/shape_inference.h"

namespace tfd {

class OpKernel;
class OpKernelConstruction;

inline constexpr const char* kDeviceCpu = "CPU";
inline constexpr const char* kDeviceGpu = "GPU";

using KernelFactory =
    std::function<StatusOr<std::unique_ptr<OpKernel>>(OpKernelConstruction&)>;

struct OpRegistration {
  OpDef def;
  ShapeFn shape_fn;
  std::map<std::string, KernelFactory> kernels;  // device type -> factory
};

class OpRegistry {
 public:
  // Registers an op; INTERNAL if the spec is malformed or the name is taken.
  Status Register(const OpDefBuilder& def, ShapeFn shape_fn);
  // Adds the kernel for `device_type` to an op already registered.
  Status RegisterKernel(const std::string& op, const std::string& device_type,
                        KernelFactory factory);

  // Convenience: Register + RegisterKernel<K> on CPU, where K is constructible
  // from OpKernelConstruction& (errors reported through it).
  template <typename K>
  Status Add(const OpDefBuilder& def, ShapeFn shape_fn);

  const OpRegistration* Find(const std::string& op) const;
  // NOT_FOUND naming the op (and a close name, if there is one).
  StatusOr<const OpRegistration*> Lookup(const std::string& op) const;
  std::vector<std::string> OpNames() const;  // sorted

 private:
  std::map<std::string, OpRegistration> ops_;
};

}  // namespace tfd
