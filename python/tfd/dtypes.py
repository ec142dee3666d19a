"""Element types, with TensorFlow 1.x's names: tfd.float32, tfd.int64, ..."""
import numpy as np


class DType:
    """One of tfd's element types. Compare with ==; `as_numpy_dtype` is the
    numpy type (object for strings)."""

    def __init__(self, name, numpy_dtype):
        self.name = name
        self.as_numpy_dtype = numpy_dtype

    @property
    def is_floating(self):
        return self.name in ("float32", "float64")

    @property
    def is_integer(self):
        return self.name in ("int32", "int64", "uint8")

    def __eq__(self, other):
        try:
            return self.name == as_dtype(other).name
        except TypeError:
            return NotImplemented

    def __hash__(self):
        return hash(self.name)

    def __repr__(self):
        return "tfd." + self.name


float32 = DType("float32", np.float32)
float64 = DType("float64", np.float64)
int32 = DType("int32", np.int32)
int64 = DType("int64", np.int64)
uint8 = DType("uint8", np.uint8)
bool = DType("bool", np.bool_)  # noqa: A001 (TF's name)
string = DType("string", np.object_)
float = float32  # noqa: A001 (TF1's alias)
double = float64

ALL = (float32, float64, int32, int64, uint8, bool, string)
_BY_NAME = {d.name: d for d in ALL}
_BY_NAME.update({"float": float32, "double": float64})


def as_dtype(value):
    """A DType from a DType, its name, a numpy dtype or a Python type."""
    if isinstance(value, DType):
        return value
    if isinstance(value, str) and value in _BY_NAME:
        return _BY_NAME[value]
    try:
        np_dtype = np.dtype(value)
    except TypeError:
        raise TypeError("cannot convert %r to a tfd dtype" % (value,)) from None
    if np_dtype.kind in "SUO":
        return string
    name = np_dtype.name
    if name in _BY_NAME:
        return _BY_NAME[name]
    raise TypeError("numpy dtype %s has no tfd dtype (float32, float64, int32, int64, uint8, "
                    "bool, string)" % np_dtype)
