// How a tfd Status reaches Python: as an instance of the tfd.errors class
// registered for its code (tfd/errors.py registers them at import), carrying
// the code's name, the message and the typed details (node, op, task,
// reason), so Python code decides on the class or the code, never on text.
//
//   ThrowIfError(scope.TakeStatus());   // raises tfd.errors.InvalidArgumentError
//   Tensor t = ValueOrThrow(TensorFromArray(array, false));
//
// Thread-safety: call with the GIL held.
#pragma once

#include <pybind11/pybind11.h>

#include "common/status.h"

namespace tfd::python {

// Records the Python classes to raise, by code name ("INVALID_ARGUMENT"); a
// code without one raises `fallback`.
void SetErrorClasses(pybind11::dict classes, pybind11::object fallback);

// Raises `s` as a Python exception (via pybind11::error_already_set) unless OK.
void ThrowIfError(const Status& s);

template <typename T>
T ValueOrThrow(StatusOr<T> v) {
  ThrowIfError(v.status());
  return std::move(v).value();
}

}  // namespace tfd::python
