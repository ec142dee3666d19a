// Python values to and from attrs (declared in convert.h).
#include <string>
#include <variant>
#include <vector>

#include "python/src/convert.h"

namespace tfd::python {

namespace py = pybind11;

namespace {

StatusOr<AttrValue> ScalarAttr(const std::string& type, py::handle v) {
  if (type == "string" && (py::isinstance<py::bytes>(v) || py::isinstance<py::str>(v))) {
    return AttrValue(v.cast<std::string>());
  }
  if (type == "int" && PyIndex_Check(v.ptr()) && !py::isinstance<py::bool_>(v)) {
    return AttrValue(py::reinterpret_steal<py::int_>(PyNumber_Index(v.ptr())).cast<int64_t>());
  }
  if (type == "float" && PyNumber_Check(v.ptr()) && !py::isinstance<py::bool_>(v)) {
    return AttrValue(py::float_(py::reinterpret_borrow<py::object>(v)).cast<double>());
  }
  if (type == "bool" && (py::isinstance<py::bool_>(v) || py::hasattr(v, "dtype"))) {
    return AttrValue(v.cast<bool>());
  }
  if (type == "type" && py::isinstance<py::str>(v)) {
    const std::string name = v.cast<std::string>();
    if (auto d = DTypeFromName(name)) return AttrValue(*d);
    return errors::InvalidArgument("'", name, "' is not a dtype");
  }
  if (type == "shape") {
    TFD_ASSIGN_OR_RETURN(PartialShape s, ShapeFromPython(v));
    return AttrValue(std::move(s));
  }
  if (type == "tensor") {
    TFD_ASSIGN_OR_RETURN(Tensor t, TensorFromArray(py::array::ensure(v), /*alias=*/false));
    return AttrValue(std::move(t));
  }
  return errors::InvalidArgument("expected a value of type ", type, ", got ",
                                 py::repr(v).cast<std::string>());
}

template <typename T>
StatusOr<AttrValue> ListAttr(const std::string& elem_type, py::handle seq) {
  std::vector<T> out;
  for (py::handle item : seq) {
    TFD_ASSIGN_OR_RETURN(AttrValue v, ScalarAttr(elem_type, item));
    out.push_back(std::get<T>(std::move(v)));
  }
  return AttrValue(std::move(out));
}

StatusOr<AttrValue> AnyAttr(const std::string& type, py::handle v) {
  if (type.rfind("list(", 0) != 0) return ScalarAttr(type, v);
  if (!py::isinstance<py::sequence>(v) || py::isinstance<py::str>(v)) {
    return errors::InvalidArgument("expected a list for type ", type, ", got ",
                                   py::repr(v).cast<std::string>());
  }
  const std::string elem = type.substr(5, type.size() - 6);
  if (elem == "string") return ListAttr<std::string>(elem, v);
  if (elem == "int") return ListAttr<int64_t>(elem, v);
  if (elem == "float") return ListAttr<double>(elem, v);
  if (elem == "bool") return ListAttr<bool>(elem, v);
  if (elem == "type") return ListAttr<DType>(elem, v);
  if (elem == "shape") return ListAttr<PartialShape>(elem, v);
  if (elem == "tensor") return ListAttr<Tensor>(elem, v);
  return errors::InvalidArgument("attr type ", type, " has no Python form");
}

struct ToPython {
  py::object operator()(const std::string& v) const { return py::bytes(v); }
  py::object operator()(int64_t v) const { return py::int_(v); }
  py::object operator()(double v) const { return py::float_(v); }
  py::object operator()(bool v) const { return py::bool_(v); }
  py::object operator()(DType v) const { return py::str(std::string(DTypeName(v))); }
  py::object operator()(const PartialShape& v) const { return ShapeToPython(v); }
  py::object operator()(const Tensor& v) const { return ValueOr(TensorToNumpy(v)); }
  py::object operator()(const EmptyList&) const { return py::list(); }
  template <typename T>
  py::object operator()(const std::vector<T>& v) const {
    py::list out;
    for (const T& item : v) out.append((*this)(item));
    return out;
  }
  static py::object ValueOr(StatusOr<py::object> v) {
    return v.ok() ? std::move(v).value() : py::none();
  }
};

}  // namespace

StatusOr<AttrValue> AttrFromPython(const AttrDef& def, py::handle value) {
  auto v = AnyAttr(def.type, value);
  if (!v.ok()) return v.status().WithContext("attr '" + def.name + "'");
  return v;
}

py::object AttrToPython(const AttrValue& value) { return std::visit(ToPython(), value); }

}  // namespace tfd::python
