#include "python/src/registry.h"

#include <memory>

#include "kernels/register_all.h"
#include "python/src/errors.h"

namespace tfd::python {

const OpRegistry& ProcessRegistry() {
  static const OpRegistry* registry = [] {
    auto r = std::make_unique<OpRegistry>();
    ThrowIfError(kernels::RegisterAll(*r));
    return r.release();  // kept for the process: see registry.h
  }();
  return *registry;
}

}  // namespace tfd::python
