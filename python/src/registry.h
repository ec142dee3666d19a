// The op registry of a Python process: filled from kernels::RegisterAll the
// first time it is asked for, read-only afterwards, and kept until the
// process ends, after every graph and session that refers to it. One
// registry per process is what a task's main() builds too; here the
// "main()" is the interpreter importing the module.
//
//   GraphBuilder g(ProcessRegistry());
//
// Thread-safety: the first call fills it (a function-local static, so
// concurrent first calls wait); afterwards any thread may read it.
#pragma once

#include "common/op_registry.h"

namespace tfd::python {

const OpRegistry& ProcessRegistry();

}  // namespace tfd::python
