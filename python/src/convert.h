// numpy at the boundary: arrays to Tensors and back, Python values to attrs.
//
// A numeric array crosses without a copy where its layout allows (C order,
// aligned, a dtype tfd has): the Tensor's buffer borrows the array's memory
// and keeps the array alive. A fetched Tensor becomes a numpy array viewing
// its buffer, kept alive by a capsule; the array is writable only when no
// other tensor (a variable, a cached value) shares the buffer, so writing
// to a fetched array never changes state the runtime holds. Strings are
// copied both ways (numpy's fixed-width bytes and Python objects have no
// std::string layout).
//
//   Tensor t = ValueOrThrow(TensorFromArray(array, /*alias=*/true));
//   py::object back = TensorToNumpy(std::move(t));
//
// Thread-safety: call with the GIL held. A Tensor that borrows an array may
// be released on any thread: it takes the GIL to drop its reference.
#pragma once


#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "common/attr_value.h"
#include "common/op_def.h"
#include "common/tensor.h"

namespace tfd::python {

// The tfd dtype of a numpy dtype: float32, float64, int32, int64, uint8,
// bool, and bytes / str / object as string. INVALID_ARGUMENT naming it else.
StatusOr<DType> DTypeOfNumpy(const pybind11::dtype& dtype);
// The numpy dtype of a tfd dtype (object for string).
pybind11::dtype NumpyDTypeOf(DType dtype);

// `array` as a Tensor. With `alias`, a numeric array in C order shares its
// memory with the tensor; otherwise (or when the layout does not allow it)
// the elements are copied.
StatusOr<Tensor> TensorFromArray(const pybind11::array& array, bool alias);
// A host copy is made first for a tensor in device memory. The array keeps
// `tensor` (and so its buffer) until it goes, on whichever thread drops it.
StatusOr<pybind11::object> TensorToNumpy(Tensor tensor);

// `value` as the attr `def` declares ("int", "list(shape)", "tensor", ...).
// Types are given by name ("float32"), shapes as sequences of ints with
// None or -1 for an unknown dimension (None for an unknown rank), tensors
// as numpy arrays. INVALID_ARGUMENT naming the attr for a value of another
// kind.
StatusOr<AttrValue> AttrFromPython(const AttrDef& def, pybind11::handle value);
// The reverse, for reading attrs back (Operation.get_attr).
pybind11::object AttrToPython(const AttrValue& value);

// A PartialShape as a Python value: None for an unknown rank, else a list
// with None for unknown dimensions.
pybind11::object ShapeToPython(const PartialShape& shape);
StatusOr<PartialShape> ShapeFromPython(pybind11::handle value);

}  // namespace tfd::python
