"""TF1's tf.map_fn, tf.scan, tf.foldl and tf.foldr: a function applied
along dimension 0 of tensors, in a tfd.while_loop over tfd.TensorArrays,
as TF1 builds them (its functional_ops.py), so they run in the executor
and tfd.gradients goes through them.

    squares = tfd.map_fn(lambda x: x * x, tfd.constant([1.0, 2.0, 3.0]))   # [1, 4, 9]
    sums = tfd.scan(lambda a, x: a + x, tfd.constant([1.0, 2.0, 3.0]))     # [1, 3, 6]
    total = tfd.foldl(lambda a, x: a + x, tfd.constant([1.0, 2.0, 3.0]))   # 6

`elems` may be a nested structure (lists, tuples, dicts) of tensors with
the same first dimension: fn then gets one element of each, in that
structure.
"""
from . import control_flow_ops, dtypes, framework
from .control_flow_ops import _flatten, _pack
from .op_gen import raw_ops
from .tensor_array_ops import TensorArray

__all__ = ["map_fn", "scan", "foldl", "foldr"]


def _elements(what, elems):
    """The flat tensors of `elems` and their number of rows (static when
    known, else a tensor)."""
    flat = [framework.convert_to_tensor(e) for e in _flatten(elems)]
    if not flat:
        raise ValueError("tfd.%s: elems is empty" % what)
    for e in flat:
        if e.shape.ndims == 0:
            raise ValueError("tfd.%s: elements in elems must be 1+ dimensional, %s is a scalar"
                             % (what, e.name))
    static = [e.shape.dims[0] for e in flat if e.shape.ndims]
    known = next((n for n in static if n is not None), None)
    if any(n is not None and n != known for n in static):
        raise ValueError("tfd.%s: elems differ in their first dimension: %s" % (what, static))
    rows = known if known is not None else raw_ops.shape(flat[0])[0]
    return flat, known, rows


def _arrays(flat, rows):
    """One TensorArray per tensor of `flat`, holding its rows."""
    return [TensorArray(e.dtype, size=rows,
                        element_shape=e.shape.dims[1:] if e.shape.ndims else None).unstack(e)
            for e in flat]


def map_fn(fn, elems, dtype=None, parallel_iterations=None, back_prop=True,
           swap_memory=False, infer_shape=True, name=None):
    """TF1's tf.map_fn: fn applied to each element of `elems` (unstacked
    along dimension 0), the results stacked. `dtype` gives fn's result
    structure of dtypes when it differs from elems'. back_prop and
    swap_memory are TF1's and change nothing (tfd.gradients goes through
    every loop)."""
    del back_prop, swap_memory  # see the docstring
    if not callable(fn):
        raise TypeError("tfd.map_fn: fn must be callable, got %r" % (fn,))
    with framework.name_scope(name, "map"):
        flat, known, rows = _elements("map_fn", elems)
        inputs = _arrays(flat, rows)
        out_structure = elems if dtype is None else dtype
        out_dtypes = [e.dtype for e in flat] if dtype is None else [
            dtypes.as_dtype(d) for d in _flatten(dtype)]
        outputs = [TensorArray(d, size=rows, infer_shape=infer_shape) for d in out_dtypes]

        def body(i, *outputs):
            args = _pack(elems, [ta.read(i) for ta in inputs])
            result = _flatten(fn(args))
            if len(result) != len(outputs):
                raise ValueError("tfd.map_fn: fn returns %d tensors where dtype (or elems) says "
                                 "%d: pass dtype= with fn's output structure"
                                 % (len(result), len(outputs)))
            return (i + 1,) + tuple(ta.write(i, r) for ta, r in zip(outputs, result))

        outputs = control_flow_ops.while_loop(
            lambda i, *_: i < rows, body, [0] + outputs,
            parallel_iterations=parallel_iterations or 10)[1:]
        stacked = [_stacked(ta, known) for ta in outputs]
        return _pack(out_structure, stacked)


def _stacked(ta, rows):
    value = ta.stack()
    if value.shape.ndims is not None:
        value.set_shape([rows] + value.shape.dims[1:])
    return value


def scan(fn, elems, initializer=None, parallel_iterations=10, back_prop=True,
         swap_memory=False, infer_shape=True, reverse=False, name=None):
    """TF1's tf.scan: a = fn(a, x) over the elements x of `elems` (from the
    last when `reverse`), every a stacked, in the elements' order. Without
    `initializer`, a starts at the first element (fn's result has elems'
    structure), which is also the first result."""
    del back_prop, swap_memory  # see map_fn
    if not callable(fn):
        raise TypeError("tfd.scan: fn must be callable, got %r" % (fn,))
    with framework.name_scope(name, "scan"):
        flat, known, rows = _elements("scan", elems)
        inputs = _arrays(flat, rows)
        first, last = _ends(rows, reverse)
        a, start = _start(elems, inputs, initializer, first, reverse)
        flat_a = [framework.convert_to_tensor(t) for t in _flatten(a)]
        outputs = [TensorArray(t.dtype, size=rows, infer_shape=infer_shape) for t in flat_a]
        if initializer is None:
            outputs = [ta.write(first, t) for ta, t in zip(outputs, flat_a)]
        n_a = len(flat_a)

        def body(i, *carried):
            state, arrays = _pack(a, list(carried[:n_a])), carried[n_a:]
            x = _pack(elems, [ta.read(i) for ta in inputs])
            new = [framework.convert_to_tensor(t) for t in _flatten(fn(state, x))]
            if len(new) != n_a:
                raise ValueError("tfd.scan: fn returns %d tensors for an accumulator of %d"
                                 % (len(new), n_a))
            arrays = [ta.write(i, t) for ta, t in zip(arrays, new)]
            return (_next(i, reverse),) + tuple(new) + tuple(arrays)

        results = control_flow_ops.while_loop(
            lambda i, *_: _more(i, last, reverse), body, [start] + flat_a + outputs,
            parallel_iterations=parallel_iterations)[1 + n_a:]
        return _pack(a, [_stacked(ta, known) for ta in results])


def _fold(what, fn, elems, initializer, parallel_iterations, name, reverse):
    if not callable(fn):
        raise TypeError("tfd.%s: fn must be callable, got %r" % (what, fn))
    with framework.name_scope(name, what):
        flat, _, rows = _elements(what, elems)
        inputs = _arrays(flat, rows)
        first, last = _ends(rows, reverse)
        a, start = _start(elems, inputs, initializer, first, reverse)
        flat_a = [framework.convert_to_tensor(t) for t in _flatten(a)]

        def body(i, *state):
            x = _pack(elems, [ta.read(i) for ta in inputs])
            new = [framework.convert_to_tensor(t)
                   for t in _flatten(fn(_pack(a, list(state)), x))]
            if len(new) != len(flat_a):
                raise ValueError("tfd.%s: fn returns %d tensors for an accumulator of %d"
                                 % (what, len(new), len(flat_a)))
            return (_next(i, reverse),) + tuple(new)

        final = control_flow_ops.while_loop(
            lambda i, *_: _more(i, last, reverse), body, [start] + flat_a,
            parallel_iterations=parallel_iterations)[1:]
        return _pack(a, list(final))


def foldl(fn, elems, initializer=None, parallel_iterations=10, back_prop=True,
          swap_memory=False, name=None):
    """TF1's tf.foldl: a = fn(a, x) over the elements of `elems`, first to
    last; the last a. Without `initializer`, a starts at the first element."""
    del back_prop, swap_memory  # see map_fn
    return _fold("foldl", fn, elems, initializer, parallel_iterations, name, reverse=False)


def foldr(fn, elems, initializer=None, parallel_iterations=10, back_prop=True,
          swap_memory=False, name=None):
    """TF1's tf.foldr: as foldl, last element to first."""
    del back_prop, swap_memory  # see map_fn
    return _fold("foldr", fn, elems, initializer, parallel_iterations, name, reverse=True)


# The index the loops of scan and the folds walk -----------------------------
def _ends(rows, reverse):
    """The first index read and the one past the last: 0 and rows, or
    rows - 1 and -1 when reversed."""
    return (rows - 1, -1) if reverse else (0, rows)


def _next(i, reverse):
    return i - 1 if reverse else i + 1


def _more(i, last, reverse):
    return i > last if reverse else i < last


def _start(elems, inputs, initializer, first, reverse):
    """The accumulator's start and the first index the loop reads: the
    initializer and `first`, or without one, the first element and the
    index after it (read outside the loop, so each element is read once)."""
    if initializer is not None:
        return initializer, first
    return _pack(elems, [ta.read(first) for ta in inputs]), _next(first, reverse)

