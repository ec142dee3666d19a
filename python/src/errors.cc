#include "python/src/errors.h"

#include <string>

#include "common/status_details.h"

namespace tfd::python {

namespace py = pybind11;

namespace {

// The classes tfd/errors.py registered; held for the life of the module
// (never destroyed, so no Python object is released after the interpreter
// is gone).
struct ErrorClasses {
  py::dict by_code;
  py::object fallback;
};

ErrorClasses& Classes() {
  static ErrorClasses* classes = new ErrorClasses();  // NOLINT: leaked on purpose, see above
  return *classes;
}

}  // namespace

void SetErrorClasses(py::dict classes, py::object fallback) {
  Classes().by_code = std::move(classes);
  Classes().fallback = std::move(fallback);
}

void ThrowIfError(const Status& s) {
  if (s.ok()) return;
  const std::string code(CodeName(s.code()));
  py::object cls = Classes().by_code.contains(code) ? Classes().by_code[code.c_str()]
                                                     : Classes().fallback;
  if (!cls) throw std::runtime_error(code + ": " + s.message());
  const std::string reason =
      s.reason() == ErrorReason::kNone ? "" : std::string(ErrorReasonName(s.reason()));
  py::object error = cls(py::arg("message") = s.message(), py::arg("code") = code,
                         py::arg("node") = s.node(), py::arg("op") = s.op(),
                         py::arg("task") = s.task(), py::arg("reason") = reason);
  PyErr_SetObject(cls.ptr(), error.ptr());
  throw py::error_already_set();
}

}  // namespace tfd::python
