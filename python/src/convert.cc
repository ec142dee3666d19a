#include "python/src/convert.h"

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <pybind11/stl.h>

#include "common/buffer.h"

namespace tfd::python {

namespace py = pybind11;

namespace {

// Keeps a Python object alive for a Buffer that borrows its memory. The
// buffer may go on a kernel thread, which takes the GIL to let go.
class HeldObject {
 public:
  explicit HeldObject(py::object obj) : obj_(std::move(obj)) {}
  ~HeldObject() {
    if (!Py_IsInitialized()) {
      obj_.release();  // the interpreter is gone: nothing to give back
      return;
    }
    py::gil_scoped_acquire gil;
    obj_ = py::object();
  }
  HeldObject(const HeldObject&) = delete;
  HeldObject& operator=(const HeldObject&) = delete;

 private:
  py::object obj_;
};

std::string Repr(py::handle value) { return py::repr(value).cast<std::string>(); }

StatusOr<Tensor> StringTensor(const py::array& array, const TensorShape& shape) {
  TFD_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(DType::kString, shape));
  py::list items = array.attr("ravel")().attr("tolist")();
  std::string* out = t.data<std::string>();
  for (size_t i = 0; i < items.size(); ++i) {
    py::handle item = items[i];
    if (py::isinstance<py::bytes>(item)) {
      out[i] = item.cast<std::string>();
    } else if (py::isinstance<py::str>(item)) {
      out[i] = item.cast<std::string>();  // UTF-8
    } else {
      return errors::InvalidArgument("a string tensor's element ", i, " is ", Repr(item),
                                     ", not bytes or str");
    }
  }
  return t;
}

bool IsNativeOrder(const py::dtype& dtype) {
  const char order = dtype.attr("byteorder").cast<std::string>()[0];
  return order != '>' || dtype.itemsize() == 1;
}

}  // namespace

StatusOr<DType> DTypeOfNumpy(const py::dtype& dtype) {
  const char kind = dtype.kind();
  const auto size = dtype.itemsize();
  if (kind == 'S' || kind == 'U' || kind == 'O') return DType::kString;
  if (IsNativeOrder(dtype)) {
    if (kind == 'f' && size == 4) return DType::kFloat32;
    if (kind == 'f' && size == 8) return DType::kFloat64;
    if (kind == 'i' && size == 4) return DType::kInt32;
    if (kind == 'i' && size == 8) return DType::kInt64;
    if (kind == 'u' && size == 1) return DType::kUInt8;
    if (kind == 'b' && size == 1) return DType::kBool;
  }
  return errors::InvalidArgument("numpy dtype ", Repr(dtype),
                                 " has no tfd dtype (float32, float64, int32, int64, uint8, "
                                 "bool, string; in this machine's byte order)");
}

py::dtype NumpyDTypeOf(DType dtype) {
  if (dtype == DType::kString) return py::dtype("O");
  return py::dtype(std::string(DTypeName(dtype)));
}

StatusOr<Tensor> TensorFromArray(const py::array& array, bool alias) {
  TFD_ASSIGN_OR_RETURN(DType dtype, DTypeOfNumpy(array.dtype()));
  std::vector<int64_t> dims(array.shape(), array.shape() + array.ndim());
  TFD_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::Make(dims));
  if (dtype == DType::kString) return StringTensor(array, shape);
  const bool c_order = (array.flags() & py::array::c_style) != 0;
  const bool aligned = reinterpret_cast<uintptr_t>(array.data()) % array.itemsize() == 0;
  if (alias && c_order && aligned && array.nbytes() > 0) {
    auto owner = std::make_shared<HeldObject>(py::reinterpret_borrow<py::object>(array));
    auto buffer = Buffer::Wrap(const_cast<void*>(array.data()), array.nbytes(), std::move(owner));
    return Tensor::FromBuffer(dtype, shape, std::move(buffer));
  }
  TFD_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(dtype, shape, nullptr, Fill::kNone));
  if (t.total_bytes() > 0) {
    py::array contiguous = py::array::ensure(array, py::array::c_style);
    std::memcpy(t.raw_data(), contiguous.data(), t.total_bytes());
  }
  return t;
}

namespace {

py::object StringArray(const Tensor& tensor, const std::vector<py::ssize_t>& shape) {
  py::module_ np = py::module_::import("numpy");
  py::array out = np.attr("empty")(shape, py::arg("dtype") = py::dtype("O"));
  py::array flat = out.attr("reshape")(-1);
  const std::string* s = tensor.data<std::string>();
  for (int64_t i = 0; i < tensor.num_elements(); ++i) {
    flat[py::int_(i)] = py::bytes(s[i]);
  }
  return py::object(out);
}

}  // namespace

StatusOr<py::object> TensorToNumpy(Tensor tensor) {
  // What the array's capsule owns: the tensor whose buffer it views.
  auto held = std::make_unique<Tensor>(std::move(tensor));
  Tensor& t = *held;
  if (t.on_device()) {
    TFD_ASSIGN_OR_RETURN(t, t.ToHost());
  }
  const std::vector<py::ssize_t> shape(t.shape().dims().begin(), t.shape().dims().end());
  if (t.dtype() == DType::kString) return StringArray(t, shape);
  const py::dtype dtype = NumpyDTypeOf(t.dtype());
  if (t.num_elements() == 0 || t.buffer() == nullptr) {
    return py::object(py::module_::import("numpy").attr("zeros")(shape,
                                                                  py::arg("dtype") = dtype));
  }
  // Writable only when the array is the buffer's one holder (see convert.h).
  const bool writable = t.buffer_unshared();
  void* data = t.raw_data();
  py::capsule base(held.get(), [](void* p) { delete static_cast<Tensor*>(p); });
  held.release();  // the capsule owns it now
  py::array out(dtype, shape, data, base);
  if (!writable) out.attr("flags").attr("writeable") = false;
  return py::object(out);
}

py::object ShapeToPython(const PartialShape& shape) {
  if (!shape.rank_known()) return py::none();
  py::list dims;
  for (int64_t d : shape.dims()) {
    if (d < 0) {
      dims.append(py::none());
    } else {
      dims.append(d);
    }
  }
  return dims;
}

StatusOr<PartialShape> ShapeFromPython(py::handle value) {
  if (value.is_none()) return PartialShape::Unknown();
  if (!py::isinstance<py::sequence>(value) || py::isinstance<py::str>(value)) {
    return errors::InvalidArgument("a shape is None or a sequence of ints, not ", Repr(value));
  }
  std::vector<int64_t> dims;
  for (py::handle d : value) {
    if (d.is_none()) {
      dims.push_back(-1);
    } else if (PyIndex_Check(d.ptr())) {
      const int64_t v = py::reinterpret_steal<py::int_>(PyNumber_Index(d.ptr())).cast<int64_t>();
      if (v < -1) return errors::InvalidArgument("a shape's dimension is ", v, " in ", Repr(value));
      dims.push_back(v);
    } else {
      return errors::InvalidArgument("a shape's dimension is ", Repr(d), ", not an int or None");
    }
  }
  return PartialShape(std::move(dims));
}

}  // namespace tfd::python
