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

#include "common/attr_value.h"
#include "common/graph_def.h"
#include "common/op_def.h"
#include "common/shape_inference.h"

namespace tfd {

class OpKernel;
class OpKernelConstruction;
class Scope;
struct GradInputs;
struct Output;

inline constexpr const char* kDeviceCpu = "CPU";
inline constexpr const char* kDeviceGpu = "GPU";

using KernelFactory =
    std::function<StatusOr<std::unique_ptr<OpKernel>>(OpKernelConstruction&)>;

// Builds the gradient of one op with the graph-builder API
// (common/scope.h, common/gradients.h): given the forward node and the
// gradients reaching its outputs, sets (*dx)[i] to the gradient for input i,
// or leaves it invalid where there is none (an integer input, an axis).
using GradFn = std::function<Status(Scope& scope, const GradInputs& in, std::vector<Output>* dx)>;

// The arguments a device's kernel keeps in host memory although it runs on
// the device (bit i: argument i): shapes, axes and hyper-parameters a GPU
// kernel reads on the host before it launches. The runtime copies the
// others to and from the device (daemon/runtime/device_copies.h).
struct HostMemory {
  uint64_t inputs = 0;
  uint64_t outputs = 0;
  bool input(int i) const { return i < 64 && (inputs >> i & 1); }
  bool output(int i) const { return i < 64 && (outputs >> i & 1); }
};

// The element types a device's kernel takes, by the type attr that says
// (`attr` empty: every type the op allows). Placement reads it: a node
// whose type the kernel lacks does not go to that device.
struct KernelTypes {
  std::string attr;
  std::vector<DType> types;
};

struct OpRegistration {
  OpDef def;
  ShapeFn shape_fn;
  std::map<std::string, KernelFactory> kernels;  // device type -> factory
  std::map<std::string, HostMemory> host_memory; // device type -> its host arguments
  std::map<std::string, KernelTypes> kernel_types;  // device type -> what it takes
  GradFn grad_fn;                                // empty: the op has no gradient

  // Whether a node of this op with these (completed) attrs has a kernel on
  // `device_type`; when not, `why` says so ("op Div has no GPU kernel for int32").
  bool HasKernelFor(const std::string& device_type, const AttrMap& attrs, std::string* why) const;
};

class OpRegistry {
 public:
  // Registers an op; INTERNAL if the spec is malformed or the name is taken.
  Status Register(const OpDefBuilder& def, ShapeFn shape_fn);
  // Adds the kernel for `device_type` to an op already registered.
  Status RegisterKernel(const std::string& op, const std::string& device_type,
                        KernelFactory factory, HostMemory host_memory = {},
                        KernelTypes types = {});
  // Sets the gradient function of an op already registered; INTERNAL if the
  // op is unknown or already has one.
  Status RegisterGradient(const std::string& op, GradFn fn);

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

// StripDefaultAttrs (op_def.h) on every node of `graph` whose op `registry`
// knows; nodes of unknown ops are left as they are.
void StripDefaultAttrs(const OpRegistry& registry, GraphDef& graph);

}  // namespace tfd
