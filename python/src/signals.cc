#include "python/src/signals.h"

namespace tfd::python {

std::optional<pybind11::error_already_set> RaisedBySignalHandlers() {
  pybind11::gil_scoped_acquire gil;
  if (PyErr_CheckSignals() == 0) return std::nullopt;
  return pybind11::error_already_set();  // fetched (and cleared) with the GIL held
}

}  // namespace tfd::python
