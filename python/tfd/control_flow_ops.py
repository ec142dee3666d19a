"""TF1's tf.cond and tf.while_loop, built by the C++ graph API
(api/control_flow.h): Switch and Merge for a cond, frames of Enter, Merge,
Switch, LoopCond, NextIteration and Exit for a loop, so the untaken branch
never runs, a loop runs in the executor (not in Python), and tfd.gradients
goes through both.

    y = tfd.cond(x > 0, lambda: x * w, lambda: -x)
    i, total = tfd.while_loop(lambda i, s: i < 10, lambda i, s: (i + 1, s + i), [0, 0])

A branch or a body may use any tensor of the graph, as in TF1: it enters
the cond (switched on the predicate) or the loop (once, as a loop
invariant) by itself.
"""
import contextlib

from . import framework

__all__ = ["cond", "while_loop"]


def _flatten(structure):
    """The leaves of nested lists, tuples, namedtuples and dicts (by sorted
    key), in order, as TF's nest.flatten."""
    if isinstance(structure, dict):
        return [leaf for k in sorted(structure) for leaf in _flatten(structure[k])]
    if isinstance(structure, (list, tuple)):
        return [leaf for item in structure for leaf in _flatten(item)]
    return [structure]


def _pack(structure, flat):
    """`flat`'s leaves in the shape of `structure` (the inverse of _flatten);
    where `structure` has a TensorArray, its leaf is that array's new flow."""
    leaves = iter(flat)

    def build(s):
        if isinstance(s, dict):
            built = {k: build(s[k]) for k in sorted(s)}
            return type(s)((k, built[k]) for k in s)
        if isinstance(s, (list, tuple)):
            items = [build(item) for item in s]
            if hasattr(s, "_fields"):  # a namedtuple
                return type(s)(*items)
            return type(s)(items)
        leaf = next(leaves)
        return s._with_flow(leaf) if _is_array(s) else leaf

    return build(structure)


def _is_array(value):
    """Whether `value` is a tfd.TensorArray, which a loop or cond carries as
    its flow."""
    return hasattr(value, "_with_flow")


def _carried(value):
    """What a loop or cond carries for `value`: an array's flow, else the
    tensor."""
    return value.flow if _is_array(value) else framework.convert_to_tensor(value)


def _same_structure(a, b):
    """True when `a` and `b` nest the same containers with as many leaves."""
    if isinstance(a, dict) or isinstance(b, dict):
        return (isinstance(a, dict) and isinstance(b, dict) and sorted(a) == sorted(b)
                and all(_same_structure(a[k], b[k]) for k in a))
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        return (isinstance(a, (list, tuple)) and isinstance(b, (list, tuple))
                and len(a) == len(b) and all(_same_structure(x, y) for x, y in zip(a, b)))
    return True


def _part(graph, fn):
    """A callback for the C++ builder (control_flow_bindings.cc): runs `fn`
    on the tensors it is given, in the name scope and after the control
    inputs the builder gives, and returns the (node, port) of each tensor
    `fn` returns, flattened."""

    def call(name_scope, control_inputs, args):
        saved = graph._name_scope, graph._control
        graph._name_scope, graph._control = name_scope, [list(control_inputs)]
        try:
            flat = fn([graph._tensor(a) for a in args])
            return [t._ref() for t in flat]
        finally:
            graph._name_scope, graph._control = saved

    return call


def _branch_tensor(value):
    """What a cond branch returns, as a tensor made in the branch: an
    Operation becomes a bool that runs after it (cond then returns the
    Operation of the merge, as TF1's)."""
    if isinstance(value, framework.Operation):
        with framework.control_dependencies([value]):
            return framework.constant(True, name="op_done")
    return _carried(value)


def cond(pred, true_fn=None, false_fn=None, strict=False, name=None):
    """TF1's tf.cond: the value of true_fn() if `pred` (a scalar bool tensor)
    holds, else of false_fn(). Only the taken branch runs: a side effect in
    the other (an assign) does not happen. Both return the same structure
    (a tensor, an operation, a tfd.TensorArray, or nested lists, tuples
    and dicts of them);
    unless `strict`, a list or tuple of one is returned as its element.
    Nodes are named "cond/..." (under `name`, when given)."""
    if isinstance(pred, bool):
        raise TypeError("pred must not be a Python bool")
    if not callable(true_fn) or not callable(false_fn):
        raise TypeError("true_fn and false_fn must be callable")
    graph = framework.get_default_graph()
    pred = framework.convert_to_tensor(pred)
    results = {}

    def branch(side, fn):
        def run(_):
            value = fn()
            if value is None:
                raise ValueError("%s must have a return value" % side)
            results[side] = value
            if side == "false_fn" and not _same_structure(results["true_fn"], value):
                raise ValueError("true_fn and false_fn return different structures: %r and %r"
                                 % (results["true_fn"], value))
            return [_branch_tensor(v) for v in _flatten(value)]
        return _part(graph, run)

    with framework.name_scope(name) if name else contextlib.nullcontext():
        merged = graph._builder.cond(graph._context(), pred._ref(), branch("true_fn", true_fn),
                                     branch("false_fn", false_fn))
    leaves = _flatten(results["true_fn"])
    outputs = [graph._tensor(m) for m in merged]
    outputs = [t.op if isinstance(leaf, framework.Operation) else t
               for t, leaf in zip(outputs, leaves)]
    packed = _pack(results["true_fn"], outputs)
    if not strict and isinstance(packed, (list, tuple)) and len(packed) == 1:
        return packed[0]
    return packed


def _shapes_like(structure, shapes):
    """The shapes of `shapes` where `structure` has its leaves, in
    _flatten's order: a shape is a leaf there even as a list ([None, 3])."""
    if isinstance(structure, dict):
        if not isinstance(shapes, dict) or sorted(shapes) != sorted(structure):
            raise ValueError("shape_invariants %r does not have loop_vars' structure" % (shapes,))
        return [leaf for k in sorted(structure) for leaf in _shapes_like(structure[k], shapes[k])]
    if isinstance(structure, (list, tuple)):
        if not isinstance(shapes, (list, tuple)) or len(shapes) != len(structure):
            raise ValueError("shape_invariants %r does not have loop_vars' structure" % (shapes,))
        return [leaf for s, sh in zip(structure, shapes) for leaf in _shapes_like(s, sh)]
    if _is_array(structure):
        return [[]]  # its flow's, whatever is given
    return [framework._shape_arg(shapes)]


def _iteration_limit(maximum_iterations):
    """What the C++ builder takes for maximum_iterations: None, an int, or
    an int scalar tensor's (node, port)."""
    if maximum_iterations is None or isinstance(maximum_iterations, int):
        return maximum_iterations
    limit = framework.convert_to_tensor(maximum_iterations)
    if not limit.dtype.is_integer or limit.shape.ndims not in (None, 0):
        raise ValueError("maximum_iterations must be an int32 or int64 scalar, saw %s of shape %s"
                         % (limit.dtype.name, limit.shape))
    return limit._ref()


def while_loop(cond, body, loop_vars, shape_invariants=None, parallel_iterations=10,
               back_prop=True, swap_memory=False, name=None, maximum_iterations=None,
               return_same_structure=False):
    """TF1's tf.while_loop: while cond(*vars) holds, vars = body(*vars),
    starting from `loop_vars` (a list or tuple, possibly nested, of
    tensors, numbers, which become constants, and tfd.TensorArrays, which
    the loop carries as their flow); returns the last vars in loop_vars'
    structure (the element itself for a list of one, unless
    `return_same_structure`). body returns as many of the same dtypes
    (an array where loop_vars has one). As in TF1, a loop
    variable's static shape in the loop and after it is its shape
    invariant: its initial shape, or shape_invariants' (loop_vars'
    structure of tfd.TensorShape, lists with None, or None) where its shape
    changes; a body value contradicting it is InvalidArgumentError. At most
    `parallel_iterations` iterations run at once; `maximum_iterations` (an
    int or an int scalar tensor) stops the loop after that many. The loop
    runs in the executor: a session's timeout bounds a loop that does not
    end. back_prop and swap_memory are
    accepted for TF1's signature: tfd.gradients differentiates every loop,
    keeping what it needs in memory. Nodes are named "while/..." (under
    `name`, when given)."""
    del back_prop, swap_memory  # see the docstring
    if not callable(cond) or not callable(body):
        raise TypeError("cond and body must be callable")
    if parallel_iterations < 1:
        raise TypeError("parallel_iterations must be a positive integer")
    structure = loop_vars if isinstance(loop_vars, (list, tuple)) else [loop_vars]
    graph = framework.get_default_graph()
    flat = [_carried(v) for v in _flatten(structure)]
    if not flat:
        raise ValueError("no loop variables given")

    def run_cond(args):
        return [framework.convert_to_tensor(cond(*_pack(structure, args)))]

    def run_body(args):
        result = body(*_pack(structure, args))
        if not isinstance(result, (list, tuple)):
            result = [result]
        if not _same_structure(list(structure), list(result)):
            raise ValueError("body returns %r for loop variables %r: the structures differ"
                             % (result, structure))
        return [_carried(v) for v in _flatten(result)]

    limit = _iteration_limit(maximum_iterations)
    invariants = [] if shape_invariants is None else _shapes_like(
        structure, shape_invariants if isinstance(loop_vars, (list, tuple)) else [shape_invariants])
    with framework.name_scope(name) if name else contextlib.nullcontext():
        exits = graph._builder.while_loop(graph._context(), _part(graph, run_cond),
                                          _part(graph, run_body), [t._ref() for t in flat],
                                          int(parallel_iterations), limit, invariants)
    packed = _pack(structure, [graph._tensor(e) for e in exits])
    if len(structure) == 1 and not return_same_structure:
        return packed[0]
    return packed
