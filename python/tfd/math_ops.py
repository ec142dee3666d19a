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


def div_no_nan(x, y, name=None):
    """TF1's tf.div_no_nan: x / y, and 0 wherever y is 0, whatever x is
    (inf or NaN too). Floats only. The division sees 1 where y is 0, so
    neither the value nor the gradient that Select passes back holds a
    0 / 0 (the registry has no DivNoNan)."""
    a, b = _pair(x, y)
    if not a.dtype.is_floating or a.dtype != b.dtype:
        raise TypeError("div_no_nan takes two tensors of one float dtype, got %s and %s"
                        % (a.dtype.name, b.dtype.name))
    is_zero = equal(b, 0)
    quotient = _raw.div(a, _raw.select(is_zero, ones_like(b), b))
    # y broadcast to the quotient's shape, which Select needs of its condition.
    zero_there = equal(add(b, zeros_like(quotient)), 0)
    return _raw.select(zero_there, zeros_like(quotient), quotient, name=name)


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


def reduce_logsumexp(input_tensor, axis=None, keepdims=False, name=None,
                     reduction_indices=None, keep_dims=None):
    """TF1's tf.reduce_logsumexp: log(sum(exp(x))) over axis, computed as TF1
    does, with the (finite) maximum taken out first: no overflow; all -inf
    gives -inf, a +inf gives inf, a NaN NaN. Its gradient is softmax's."""
    x = _t(input_tensor)
    axis = reduction_indices if axis is None else axis
    keep = bool(keep_dims if keep_dims is not None else keepdims)
    top = reduce_max(x, axis, keepdims=True)
    top = stop_gradient(where(_raw.is_finite(top), top, zeros_like(top)))
    out = _raw.log(reduce_sum(_raw.exp(x - top), axis, keepdims=keep))
    return add(out, top if keep else reshape(top, _raw.shape(out)), name=name)


def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    """TF1's tf.clip_by_value: maximum(minimum(t, max), min), element-wise;
    NaN stays NaN (as numpy.clip). The gradient passes where t is inside."""
    t = _t(t)
    return maximum(minimum(t, clip_value_max), clip_value_min, name=name)


def cumsum(x, axis=0, exclusive=False, reverse=False, name=None):
    """TF1's tf.cumsum: running sums along axis (0 by default, as TF1)."""
    return _raw.cumsum(_t(x), _c(axis, dtype=dtypes.int32), exclusive=exclusive,
                       reverse=reverse, name=name)


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


def split(value, num_or_size_splits, axis=0, num=None, name="split"):
    """TF1's tf.split: an int n cuts value into n equal pieces along axis
    (Split); a list of sizes, one of which may be -1 (the rest), into pieces
    of those sizes (from Slice ops: the registry has no SplitV). Sizes as a
    tensor are not supported (TypeError); num is checked against the list."""
    value = _t(value)
    if _is_tensor(num_or_size_splits):
        raise TypeError("split: sizes as a tensor are not supported; give a list of ints")
    if np.ndim(num_or_size_splits) == 0:
        return _raw.split(_c(axis, dtype=dtypes.int32), value,
                          num_split=int(num_or_size_splits), name=name)
    sizes = [int(s) for s in num_or_size_splits]
    rank = value.shape.ndims
    if rank is None:
        raise ValueError("split by sizes needs the rank of %s" % value.name)
    if num is not None and num != len(sizes):
        raise ValueError("split: num=%d but %d sizes" % (num, len(sizes)))
    if sizes.count(-1) > 1 or any(s < -1 for s in sizes):
        raise ValueError("split: sizes %r may hold one -1 and no other negative" % (sizes,))
    a = axis % rank
    dim, known = value.shape[a], sum(s for s in sizes if s != -1)
    if dim is not None and (known != dim if -1 not in sizes else known > dim):
        raise ValueError("split: sizes %r do not fit dimension %d of size %d" % (sizes, a, dim))
    if -1 in sizes:
        sizes[sizes.index(-1)] = dim - known if dim is not None else _raw.shape(value)[a] - known
    pieces, begin = [], 0
    with framework.name_scope(name):
        for s in sizes:
            starts, extents = [0] * rank, [-1] * rank
            starts[a], extents[a] = begin, s
            pieces.append(_raw.slice(value, _int_vector(starts), _int_vector(extents)))
            begin = begin + s
    return pieces


def _int_vector(items):
    """An int32 vector of Python ints and int32 scalars."""
    if all(isinstance(i, int) for i in items):
        return _c(items, dtype=dtypes.int32)
    return stack([_c(i, dtype=dtypes.int32) for i in items])


def pad(tensor, paddings, mode="CONSTANT", name=None, constant_values=0):  # noqa: A002
    """TF1's tf.pad: paddings[d] = [before, after] per dimension d. CONSTANT
    pads with constant_values: 0 (empty strings) by Pad; another value by Pad
    and Select of it outside the input, as PadV2 would (the registry has
    none). REFLECT and SYMMETRIC mirror the input (MirrorPad): REFLECT
    without the edge element, at most dim - 1 a side, SYMMETRIC with it, at
    most dim."""
    mode = mode.upper()
    if mode not in ("CONSTANT", "REFLECT", "SYMMETRIC"):
        raise ValueError("pad: unknown padding mode %s" % mode)
    x = _t(tensor)
    p = paddings if _is_tensor(paddings) else _c(paddings, dtype=dtypes.int32)
    if mode != "CONSTANT":
        return _raw.mirror_pad(x, p, mode=mode, name=name)
    if not _is_tensor(constant_values) and np.ndim(constant_values) == 0 and constant_values == 0:
        return _raw.pad(x, p, name=name)
    inside = _raw.pad(_raw.fill(_raw.shape(x), _c(True)), p)
    padded = _raw.pad(x, p)
    outside = _raw.fill(_raw.shape(padded), _c(constant_values, dtype=x.dtype))
    return _raw.select(inside, padded, outside, name=name)


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
    """TF1's tf.fill: dims an int32 or int64 vector (a list becomes int32)."""
    is_tensor = isinstance(dims, framework.Tensor) or hasattr(dims, "_as_tensor")
    return _raw.fill(_t(dims) if is_tensor else _c(dims, dtype=dtypes.int32), _t(value),
                     name=name)


def zeros_like(tensor, dtype=None, name=None):
    t = _raw.zeros_like(_t(tensor), name=name)
    return t if dtype is None else cast(t, dtype)


def ones_like(tensor, dtype=None, name=None):
    t = _raw.ones_like(_t(tensor), name=name)
    return t if dtype is None else cast(t, dtype)


_RANGE_TYPES = ("int32", "int64", "float32", "float64")  # TF1's order, narrowest first


def range(start=None, limit=None, delta=1, dtype=None, name="range"):  # noqa: A001
    """TF1's tf.range: range(limit), range(start, limit, delta) and
    range(limit=n), as numpy.arange. Without dtype the widest of the
    arguments' (int32 < int64 < float32 < float64), as TF1 infers it."""
    if limit is None:
        start, limit = 0, start
    if start is None:
        start = 0
    if limit is None:
        raise TypeError("range needs a limit")
    args = (start, limit, delta)
    if dtype is None:
        found = [_t(a).dtype.name if _is_tensor(a) else framework._numpy_value(a, None).dtype.name
                 for a in args]
        dtype = max(found, key=lambda n: _RANGE_TYPES.index(n) if n in _RANGE_TYPES else -1)
    d = dtypes.as_dtype(dtype)
    start, limit, delta = (cast(a, d) if _is_tensor(a) else _c(a, dtype=d) for a in args)
    return _raw.range(start, limit, delta, name=name)


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
    """TF1's tf.random_uniform: floats in [minval, maxval) (maxval 1 by
    default); int32 and int64 in [minval, maxval) by RandomUniformInt, where
    maxval is required, as in TF1. Seeded as random_normal."""
    dtype = dtypes.as_dtype(dtype)
    if dtype.is_integer:
        if maxval is None:
            raise ValueError("random_uniform: maxval is required for %s" % dtype.name)
        shape = _shape_tensor(shape)
        seed1, seed2 = _op_seeds(seed)
        return _raw.random_uniform_int(shape, _c(minval, dtype=dtype), _c(maxval, dtype=dtype),
                                       seed=seed1, seed2=seed2, name=name)
    maxval = 1 if maxval is None else maxval
    x = _random(_raw.random_uniform, shape, dtype, seed)
    if _is_tensor(minval) or _is_tensor(maxval):
        span = subtract(_c(maxval, dtype=dtype), _c(minval, dtype=dtype))
    else:
        span = _c(maxval - minval, dtype=dtype)
    return add(multiply(x, span), _c(minval, dtype=dtype), name=name)


def random_shuffle(value, seed=None, name=None):
    """`value` with its first dimension in a random order, seeded as random_normal."""
    value = _t(value)
    seed1, seed2 = _op_seeds(seed)
    return _raw.random_shuffle(value, seed=seed1, seed2=seed2, name=name)


def placeholder_with_default(input, shape, name=None):  # noqa: A002
    """TF1's tf.placeholder_with_default: input's value unless fed; shape
    (None for an unknown dimension) is what a feed may have."""
    return _raw.placeholder_with_default(_t(input), shape=shape, name=name)


def report_uninitialized_variables(var_list=None, name="report_uninitialized_variables"):
    """TF1's: the names (bytes) of the variables of var_list, else of every
    global and local variable, that are not initialized yet."""
    from . import variables  # it imports this module
    if var_list is None:
        var_list = variables.global_variables() + variables.local_variables()
    return _raw.report_uninitialized_variables(list(var_list), name=name)


def identity(input, name=None):  # noqa: A002
    return _raw.identity(_t(input), name=name)


def where(condition, x=None, y=None, name=None):
    """TF1's tf.where. With x and y: x's elements where condition is true and
    y's elsewhere (Select: condition is a scalar, has x's shape, or is a
    vector choosing rows). With condition alone: the int64 coordinates of
    its true elements, [count, rank], in row-major order (Where)."""
    if x is None and y is None:
        return _raw.where(_t(condition), name=name)
    if x is None or y is None:
        raise ValueError("where: x and y must both be given or both be None")
    a, b = _pair(x, y)
    return _raw.select(_t(condition), a, b, name=name)


def reduce_all(input_tensor, axis=None, keepdims=False, name=None):
    """TF1's tf.reduce_all: whether every element (along axis) is true; of
    no elements, True. Counted as the false ones, which an int64 sum holds."""
    falses = _raw.cast(_raw.logical_not(_t(input_tensor)), DstT=dtypes.int64)
    return _raw.equal(reduce_sum(falses, axis, keepdims), _c(0, dtype=dtypes.int64), name=name)


def reduce_any(input_tensor, axis=None, keepdims=False, name=None):
    """TF1's tf.reduce_any: whether some element (along axis) is true; of
    no elements, False."""
    trues = _raw.cast(_t(input_tensor), DstT=dtypes.int64)
    return _raw.greater(reduce_sum(trues, axis, keepdims), _c(0, dtype=dtypes.int64), name=name)


def boolean_mask(tensor, mask, name="boolean_mask", axis=None):
    """TF1's tf.boolean_mask: the elements (or slices) of tensor where mask
    is true, mask's dimensions flattened into one. mask's rank must be
    known; its dimensions are tensor's from `axis` (0 by default)."""
    tensor, mask = _t(tensor), _t(mask)
    k = mask.shape.ndims
    if k is None or k == 0:
        raise ValueError("boolean_mask needs a mask of known rank of at least 1, got %s %s"
                         % (mask.name, mask.shape))
    axis = 0 if axis is None else int(axis)
    with framework.name_scope(name):
        shape = _raw.shape(tensor)
        flat = concat([_raw.strided_slice(shape, _c([0]), _c([axis]), _c([1])), _c([-1]),
                       _raw.strided_slice(shape, _c([axis + k]), _c([0]), _c([1]), end_mask=1)],
                      0)
        rows = _raw.reshape(tensor, flat)
        kept = squeeze(where(reshape(mask, [-1])), axis=[1])
        return gather(rows, kept, axis=axis)


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
def _index(k, what):
    """An int, or a scalar integer tensor (x[i] with i a tensor, as TF1's)."""
    if isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_)):
        return int(k)
    if _is_tensor(k):
        t = framework._as_graph_element(k)
        dims = t.shape.dims
        if t.dtype.is_integer and t.dtype.name in ("int32", "int64") and dims in (None, []):
            return t
        raise TypeError("a tensor used as %s must be an int32 or int64 scalar, got %s %s"
                        % (what, t.dtype.name, t.shape))
    raise TypeError("a tfd.Tensor is indexed by ints, scalar integer tensors, slices, ... and "
                    "None, not %r" % (k,))


def _slice_spec(key):
    """begin, end, strides and the masks of StridedSlice for a [] key of
    ints or scalar integer tensors, slices of them, Ellipsis and None
    (newaxis)."""
    if not isinstance(key, tuple):
        key = (key,)
    begin, end, strides = [], [], []
    masks = {"begin_mask": 0, "end_mask": 0, "ellipsis_mask": 0, "new_axis_mask": 0,
             "shrink_axis_mask": 0}
    for i, k in enumerate(key):
        bit = 1 << i
        if isinstance(k, slice):
            begin.append(0 if k.start is None else _index(k.start, "a slice's start"))
            end.append(0 if k.stop is None else _index(k.stop, "a slice's stop"))
            strides.append(1 if k.step is None else _index(k.step, "a slice's step"))
            masks["begin_mask"] |= bit if k.start is None else 0
            masks["end_mask"] |= bit if k.stop is None else 0
        elif k is Ellipsis:
            begin.append(0), end.append(0), strides.append(1)
            masks["ellipsis_mask"] |= bit
        elif k is None:
            begin.append(0), end.append(0), strides.append(1)
            masks["new_axis_mask"] |= bit
        else:
            k = _index(k, "an index")
            begin.append(k), strides.append(1)
            end.append(k + 1 if isinstance(k, int) else _raw.add(k, _c(1, dtype=k.dtype)))
            masks["shrink_axis_mask"] |= bit
    return begin, end, strides, masks


def _index_vector(parts, dtype):
    """A vector of ints and scalar tensors: a constant when all are ints."""
    if all(isinstance(p, int) for p in parts):
        return _c(parts, dtype=dtype)
    return _raw.pack([_c(p, dtype=dtype) if isinstance(p, int) else
                      (p if p.dtype == dtype else _raw.cast(p, DstT=dtype.name)) for p in parts])


def _getitem(tensor, key):
    begin, end, strides, masks = _slice_spec(key)
    tensors = [p for p in begin + end + strides if not isinstance(p, int)]
    dtype = dtypes.int64 if any(t.dtype == dtypes.int64 for t in tensors) else dtypes.int32
    return _raw.strided_slice(tensor, _index_vector(begin, dtype), _index_vector(end, dtype),
                              _index_vector(strides, dtype), **masks)


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
