"""TensorFlow 1.x's hand-named functions (tf.matmul, tf.reduce_sum, tf.nn.relu,
tf.zeros, ...) and the Python operators of tensors, written over the
generated op functions (op_gen.py) so that each builds the node its op
defines and nothing else.
"""
import builtins

import numpy as np

from . import dtypes, framework
from .random_seed import _op_seeds
from .op_gen import raw_ops as _raw

_c = framework.convert_to_tensor


def _t(x):
    return framework._as_graph_element(x) if framework.Tensor is type(x) or hasattr(
        x, "_as_tensor") else _c(x)


def _pair(x, y):
    """x and y as tensors of one dtype: a Python value takes the tensor's."""
    if framework.Tensor is type(x) or hasattr(x, "_as_tensor"):
        x = framework._as_graph_element(x)
        return x, _c(y, dtype=x.dtype) if not _is_tensor(y) else framework._as_graph_element(y)
    if _is_tensor(y):
        y = framework._as_graph_element(y)
        return _c(x, dtype=y.dtype), y
    return _c(x), _c(y)


def _is_tensor(x):
    return isinstance(x, framework.Tensor) or hasattr(x, "_as_tensor")


def _binary(op):
    def fn(x, y, name=None):
        a, b = _pair(x, y)
        return op(a, b, name=name)
    return fn


add = _binary(_raw.add)
subtract = _binary(_raw.sub)
multiply = _binary(_raw.mul)
floordiv = _binary(_raw.floor_div)
floordiv.__doc__ = "TF1's tf.floordiv and //: x / y rounded toward -inf (FloorDiv)."
floormod = _binary(_raw.floor_mod)
floormod.__doc__ = "TF1's tf.floormod, tf.mod and %: the remainder with y's sign (FloorMod)."
mod = floormod
truncatemod = _binary(_raw.mod)
truncatemod.__doc__ = "TF1's tf.truncatemod: the remainder with x's sign, C's % and fmod (Mod)."

# TF1's _TRUEDIV_TABLE: the float type each dtype divides in (None: as it is).
_TRUEDIV = {"uint8": dtypes.float32, "int32": dtypes.float64, "int64": dtypes.float64,
            "float32": None, "float64": None}


def truediv(x, y, name=None):
    """TF1's tf.truediv and x / y (Python 3's division): uint8 is cast to
    float32, int32 and int64 to float64, then divided; floats divide as they
    are (IEEE: x / 0 is +-inf, 0 / 0 NaN). Other dtypes raise TypeError."""
    a, b = _pair(x, y)
    if a.dtype != b.dtype:
        raise TypeError("truediv: x is %s but y is %s" % (a.dtype.name, b.dtype.name))
    if a.dtype.name not in _TRUEDIV:
        raise TypeError("truediv: invalid dtype %s" % a.dtype.name)
    to = _TRUEDIV[a.dtype.name]
    if to is not None:
        a, b = cast(a, to), cast(b, to)
    return _raw.div(a, b, name=name)


def divide(x, y, name=None):
    """TF1's tf.divide: x / y, that is truediv (integers divide as floats)."""
    return truediv(x, y, name=name)


def div(x, y, name=None):
    """TF1's tf.div, Python 2's division: floats divide (Div), integers
    floor-divide (FloorDiv; uint8, never negative, by Div): div(-7, 2) is -4.
    An integer divisor of 0 fails the step with InvalidArgumentError."""
    a, b = _pair(x, y)
    if a.dtype.is_integer and a.dtype != dtypes.uint8:
        return _raw.floor_div(a, b, name=name)
    return _raw.div(a, b, name=name)


def truncatediv(x, y, name=None):
    """TF1's tf.truncatediv: integer division rounded toward zero (Div), so
    truncatediv(-7, 2) is -3. Integers only, as TF1's kernel: TypeError for
    floats."""
    a, b = _pair(x, y)
    if not a.dtype.is_integer:
        raise TypeError("truncatediv takes integers, not %s (as TF1's)" % a.dtype.name)
    return _raw.div(a, b, name=name)
pow = _binary(_raw.pow)  # noqa: A001 (TF's name)
maximum = _binary(_raw.maximum)
minimum = _binary(_raw.minimum)
squared_difference = _binary(_raw.squared_difference)
equal = _binary(_raw.equal)
not_equal = _binary(_raw.not_equal)
less = _binary(_raw.less)
less_equal = _binary(_raw.less_equal)
greater = _binary(_raw.greater)
greater_equal = _binary(_raw.greater_equal)
logical_and = _binary(_raw.logical_and)
logical_or = _binary(_raw.logical_or)


def negative(x, name=None):
    return _raw.neg(_t(x), name=name)


def matmul(a, b, transpose_a=False, transpose_b=False, name=None):
    a, b = _pair(a, b)
    if a.shape.ndims is not None and a.shape.ndims > 2:
        return _raw.batch_mat_mul_v2(a, b, adj_x=transpose_a, adj_y=transpose_b, name=name)
    return _raw.mat_mul(a, b, transpose_a=transpose_a, transpose_b=transpose_b, name=name)


def cast(x, dtype, name=None):
    x = _t(x)
    dtype = dtypes.as_dtype(dtype)
    if x.dtype == dtype:
        return x
    return _raw.cast(x, DstT=dtype, name=name)


def _axes(x, axis):
    if axis is None:
        if x.shape.ndims is not None:
            return _c(list(builtins.range(x.shape.ndims)), dtype=dtypes.int32)
        return _raw.range(_c(0), _raw.rank(x), _c(1))
    return _c(axis, dtype=dtypes.int32)


def _reduction(op):
    def fn(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
           keep_dims=None):
        x = _t(input_tensor)
        axis = reduction_indices if axis is None else axis
        keep = bool(keepdims if keepdims is not None else keep_dims)
        return op(x, _axes(x, axis), keep_dims=keep, name=name)
    return fn


reduce_sum = _reduction(_raw.sum)
reduce_mean = _reduction(_raw.mean)
reduce_max = _reduction(_raw.max)
reduce_min = _reduction(_raw.min)
reduce_prod = _reduction(_raw.prod)


def argmax(input, axis=None, name=None, output_type=dtypes.int64):  # noqa: A002
    return _raw.arg_max(_t(input), _c(0 if axis is None else axis, dtype=dtypes.int32),
                        output_type=output_type, name=name)


def argmin(input, axis=None, name=None, output_type=dtypes.int64):  # noqa: A002
    return _raw.arg_min(_t(input), _c(0 if axis is None else axis, dtype=dtypes.int32),
                        output_type=output_type, name=name)


def reshape(tensor, shape, name=None):
    return _raw.reshape(_t(tensor), _c(shape, dtype=dtypes.int32), name=name)


def transpose(a, perm=None, name=None):
    a = _t(a)
    if perm is None:
        if a.shape.ndims is None:
            raise ValueError("transpose without perm needs the rank of %s" % a.name)
        perm = list(reversed(builtins.range(a.shape.ndims)))
    return _raw.transpose(a, _c(perm, dtype=dtypes.int32), name=name)


def concat(values, axis, name="concat"):
    return _raw.concat_v2([_t(v) for v in values], _c(axis, dtype=dtypes.int32), name=name)


def stack(values, axis=0, name="stack"):
    return _raw.pack([_t(v) for v in values], axis=axis, name=name)


def unstack(value, num=None, axis=0, name="unstack"):
    value = _t(value)
    if num is None:
        num = value.shape.as_list()[axis]
    return _raw.unpack(value, num=num, axis=axis, name=name)


def expand_dims(input, axis, name=None):  # noqa: A002
    return _raw.expand_dims(_t(input), _c(axis, dtype=dtypes.int32), name=name)


def squeeze(input, axis=None, name=None):  # noqa: A002
    return _raw.squeeze(_t(input), squeeze_dims=list(axis or []), name=name)


def gather(params, indices, axis=0, name=None):
    return _raw.gather_v2(_t(params), _t(indices), _c(axis, dtype=dtypes.int32), name=name)


def one_hot(indices, depth, on_value=1.0, off_value=0.0, axis=-1, dtype=dtypes.float32,
            name=None):
    return _raw.one_hot(_t(indices), _c(depth, dtype=dtypes.int32), _c(on_value, dtype=dtype),
                        _c(off_value, dtype=dtype), axis=axis, name=name)


def _fill(value):
    def fn(shape, dtype=dtypes.float32, name=None):
        dtype = dtypes.as_dtype(dtype)
        if isinstance(shape, framework.Tensor):
            return _raw.fill(shape, _c(value, dtype=dtype), name=name)
        return framework.constant(np.full(framework._shape_arg(shape), value,
                                          dtype=dtype.as_numpy_dtype), name=name or "Const")
    return fn


zeros = _fill(0)
ones = _fill(1)


def fill(dims, value, name=None):
    return _raw.fill(_c(dims, dtype=dtypes.int32), _t(value), name=name)


def zeros_like(tensor, dtype=None, name=None):
    t = _raw.zeros_like(_t(tensor), name=name)
    return t if dtype is None else cast(t, dtype)


def ones_like(tensor, dtype=None, name=None):
    t = _raw.ones_like(_t(tensor), name=name)
    return t if dtype is None else cast(t, dtype)


def range(start, limit=None, delta=1, dtype=None, name="range"):  # noqa: A001
    if limit is None:
        start, limit = 0, start
    d = dtypes.as_dtype(dtype) if dtype is not None else None
    return _raw.range(_c(start, dtype=d), _c(limit, dtype=d), _c(delta, dtype=d), name=name)


def _shape_tensor(shape):
    return shape if _is_tensor(shape) else _c(framework._shape_arg(shape), dtype=dtypes.int32)


def _random(op, shape, dtype, seed):
    """A random op's draw, seeded by the graph's seed and `seed` (random_seed.py)."""
    shape = _shape_tensor(shape)
    seed1, seed2 = _op_seeds(seed)
    return op(shape, dtype=dtype, seed=seed1, seed2=seed2)


def random_normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
    dtype = dtypes.as_dtype(dtype)
    x = _random(_raw.random_standard_normal, shape, dtype, seed)
    return add(multiply(x, _c(stddev, dtype=dtype)), _c(mean, dtype=dtype), name=name)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
    dtype = dtypes.as_dtype(dtype)
    x = _random(_raw.truncated_normal, shape, dtype, seed)
    return add(multiply(x, _c(stddev, dtype=dtype)), _c(mean, dtype=dtype), name=name)


def random_uniform(shape, minval=0, maxval=None, dtype=dtypes.float32, seed=None, name=None):
    dtype = dtypes.as_dtype(dtype)
    maxval = 1 if maxval is None else maxval
    x = _random(_raw.random_uniform, shape, dtype, seed)
    span = _c(maxval - minval, dtype=dtype)
    return add(multiply(x, span), _c(minval, dtype=dtype), name=name)


def random_shuffle(value, seed=None, name=None):
    """`value` with its first dimension in a random order, seeded as random_normal."""
    value = _t(value)
    seed1, seed2 = _op_seeds(seed)
    return _raw.random_shuffle(value, seed=seed1, seed2=seed2, name=name)


def identity(input, name=None):  # noqa: A002
    return _raw.identity(_t(input), name=name)


def where(condition, x, y, name=None):
    a, b = _pair(x, y)
    return _raw.select(_t(condition), a, b, name=name)


def group(*inputs, name=None):
    """A NoOp that runs after every one of `inputs`."""
    ops = [i if isinstance(i, framework.Operation) else framework._as_graph_element(i).op
           for i in inputs]
    with framework.control_dependencies(ops):
        return _raw.no_op(name=name or "group_deps")


def no_op(name=None):
    return _raw.no_op(name=name)


def add_n(inputs, name=None):
    return _raw.add_n([_t(i) for i in inputs], name=name)


def stop_gradient(input, name=None):  # noqa: A002
    return _raw.stop_gradient(_t(input), name=name)


# Python's operators on tensors ---------------------------------------------
def _slice_spec(key):
    """begin, end, strides and the masks of StridedSlice for a [] key of
    ints, slices, Ellipsis and None (newaxis)."""
    if not isinstance(key, tuple):
        key = (key,)
    begin, end, strides = [], [], []
    masks = {"begin_mask": 0, "end_mask": 0, "ellipsis_mask": 0, "new_axis_mask": 0,
             "shrink_axis_mask": 0}
    for i, k in enumerate(key):
        bit = 1 << i
        if isinstance(k, slice):
            begin.append(0 if k.start is None else int(k.start))
            end.append(0 if k.stop is None else int(k.stop))
            strides.append(1 if k.step is None else int(k.step))
            masks["begin_mask"] |= bit if k.start is None else 0
            masks["end_mask"] |= bit if k.stop is None else 0
        elif k is Ellipsis:
            begin.append(0), end.append(0), strides.append(1)
            masks["ellipsis_mask"] |= bit
        elif k is None:
            begin.append(0), end.append(0), strides.append(1)
            masks["new_axis_mask"] |= bit
        elif isinstance(k, (int, np.integer)):
            begin.append(int(k)), end.append(int(k) + 1), strides.append(1)
            masks["shrink_axis_mask"] |= bit
        else:
            raise TypeError("a tfd.Tensor is indexed by ints, slices, ... and None, not %r" % (k,))
    return begin, end, strides, masks


def _getitem(tensor, key):
    begin, end, strides, masks = _slice_spec(key)
    c = lambda v: _c(v, dtype=dtypes.int32)  # noqa: E731
    return _raw.strided_slice(tensor, c(begin), c(end), c(strides), **masks)


def _reflected(fn):
    return lambda self, other: fn(other, self)


_OPERATORS = {
    "__add__": add, "__radd__": _reflected(add),
    "__sub__": subtract, "__rsub__": _reflected(subtract),
    "__mul__": multiply, "__rmul__": _reflected(multiply),
    "__truediv__": truediv, "__rtruediv__": _reflected(truediv),
    "__floordiv__": floordiv, "__rfloordiv__": _reflected(floordiv),
    "__mod__": floormod, "__rmod__": _reflected(floormod),
    "__pow__": pow, "__rpow__": _reflected(pow),
    "__matmul__": matmul, "__rmatmul__": _reflected(matmul),
    "__lt__": less, "__le__": less_equal, "__gt__": greater, "__ge__": greater_equal,
    "__and__": logical_and, "__rand__": _reflected(logical_and),
    "__or__": logical_or, "__ror__": _reflected(logical_or),
    "__neg__": lambda x: negative(x),
    "__abs__": lambda x: _raw.abs(_t(x)),
    "__invert__": lambda x: _raw.logical_not(_t(x)),
    "__getitem__": lambda x, key: _getitem(_t(x), key),
}


def install_operators(cls):
    for name, fn in _OPERATORS.items():
        setattr(cls, name, fn)


install_operators(framework.Tensor)

from .nn_ops import nn  # noqa: E402 (nn_ops builds on the functions above)

__all__ = [n for n, v in list(globals().items())
           if not n.startswith("_") and callable(v) and getattr(v, "__module__", "") == __name__
           and n not in ("install_operators",)] + ["nn"]
