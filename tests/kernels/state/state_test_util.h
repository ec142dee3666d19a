// Shared by the state family's tests: a registry and one task environment
// (one ResourceMgr) that successive RunOpValues calls share, as the kernels
// of one task would.
#pragma once

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "kernels/register_all.h"
#include "kernels/state/variable.h"
#include "tests/util/kernel_runner.h"

namespace tfd::testing {

class StateTestEnv {
 public:
  StateTestEnv() {
    REQUIRE(kernels::RegisterAll(registry_).ok());
    env_.resources = &resources_;
  }

  StatusOr<std::vector<Value>> Run(const std::string& op, AttrMap attrs,
                                   std::vector<Value> inputs) {
    RunOpOptions options;
    options.env = &env_;
    return RunOpValues(registry_, op, std::move(attrs), std::move(inputs), options);
  }

  // A VariableV2 named `name` (shared_name), as the kernel returns it.
  std::shared_ptr<kernels::Variable> NewVariable(const std::string& name, DType dtype,
                                                 PartialShape shape) {
    auto out = Run("VariableV2", {{"shape", shape}, {"dtype", dtype}, {"shared_name", name}}, {});
    REQUIRE(out.ok());
    REQUIRE(out->size() == 1);
    auto var = std::dynamic_pointer_cast<kernels::Variable>((*out)[0].ref);
    REQUIRE(var != nullptr);
    return var;
  }

  // Assign(var, value) through the kernel.
  void Assign(const std::shared_ptr<kernels::Variable>& var, const Tensor& value) {
    auto out = Run("Assign", {{"T", value.dtype()}}, {Ref(var), Val(value)});
    INFO(out.status().ToString());
    REQUIRE(out.ok());
  }

  static Value Ref(std::shared_ptr<ResourceBase> r) { return Value{Tensor(), std::move(r)}; }
  static Value Val(Tensor t) { return Value{std::move(t), nullptr}; }

  const OpRegistry& registry() const { return registry_; }
  ResourceMgr& resources() { return resources_; }
  KernelEnv& env() { return env_; }

 private:
  OpRegistry registry_;
  ResourceMgr resources_;
  KernelEnv env_;
};

inline bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

}  // namespace tfd::testing
