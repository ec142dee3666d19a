"""Graphs, tensors and operations, with TensorFlow 1.x's contexts: a default
graph, name scopes, devices and control dependencies.

A Graph wraps the C++ graph builder (common/scope.h); every node is checked
against the op registry as it is added, so a wrong dtype or shape raises
tfd.errors.InvalidArgumentError at the line that made it, and the graph stays
usable afterwards.
"""
import collections
import contextlib
import re
import threading

import numpy as np

from . import _tfd, dtypes, errors


class TensorShape:
    """What is known of a shape: `dims` is None (unknown rank) or a list with
    None for unknown dimensions."""

    def __init__(self, dims):
        self.dims = None if dims is None else [None if d is None or d < 0 else int(d) for d in dims]

    @property
    def ndims(self):
        return None if self.dims is None else len(self.dims)

    def as_list(self):
        if self.dims is None:
            raise ValueError("as_list() of a shape of unknown rank")
        return list(self.dims)

    def is_fully_defined(self):
        return self.dims is not None and all(d is not None for d in self.dims)

    def is_compatible_with(self, other):
        """TF1's: whether some shape fits both (ranks, and the dimensions
        both know, agree). `other` a TensorShape or what one is made of."""
        other = other if isinstance(other, TensorShape) else TensorShape(other)
        if self.dims is None or other.dims is None:
            return True
        return len(self.dims) == len(other.dims) and all(
            a is None or b is None or a == b for a, b in zip(self.dims, other.dims))

    def merge_with(self, other):
        """TF1's: the shape of what both describe, each dimension known to
        either; ValueError when they contradict."""
        other = other if isinstance(other, TensorShape) else TensorShape(_shape_arg(other))
        if not self.is_compatible_with(other):
            raise ValueError("Shapes %s and %s are not compatible" % (self, other))
        if self.dims is None or other.dims is None:
            return TensorShape(other.dims if self.dims is None else self.dims)
        return TensorShape([a if a is not None else b for a, b in zip(self.dims, other.dims)])

    def __len__(self):
        return self.ndims

    def __iter__(self):
        return iter(self.as_list())

    def __getitem__(self, i):
        return self.as_list()[i]

    def __eq__(self, other):
        other_dims = other.dims if isinstance(other, TensorShape) else (
            None if other is None else list(other))
        return self.dims == other_dims

    def __repr__(self):
        return "TensorShape(%r)" % (self.dims,)


def _shape_arg(shape):
    """A shape as the C++ side takes it: None or a list of ints and None."""
    if shape is None:
        return None
    if isinstance(shape, TensorShape):
        return shape.dims
    if isinstance(shape, (int, np.integer)):
        return [int(shape)]
    return [None if d is None else int(d) for d in shape]


class Operation:
    """A node of a graph: name, type (its op), outputs, device."""

    def __init__(self, graph, name, outputs=()):
        self.graph = graph
        self.name = name
        self._outputs = list(outputs)

    @property
    def outputs(self):
        return list(self._outputs)

    def _node(self):
        return self.graph._builder.node(self.name)  # (name, op, inputs, device)

    @property
    def type(self):
        return self._node()[1]

    @property
    def device(self):
        return self._node()[3]

    @property
    def inputs(self):
        """The tensors this operation reads, in order."""
        return [self.graph.get_tensor_by_name(i if ":" in i else i + ":0")
                for i in self._node()[2] if not i.startswith("^")]

    @property
    def control_inputs(self):
        """The operations this one runs after."""
        return [self.graph.get_operation_by_name(i[1:])
                for i in self._node()[2] if i.startswith("^")]

    def get_attr(self, name):
        return self.graph._builder.get_attr(self.name, name)

    def run(self, feed_dict=None, session=None):
        from .session import _session_or_default
        _session_or_default(session).run(self, feed_dict)

    def __repr__(self):
        return "<tfd.Operation '%s'>" % self.name


class Tensor:
    """One output of an operation: a value computed when a session runs it.
    Takes Python's operators (+ - * / // % ** @, unary -, comparisons, []),
    as TF1's tensors do."""

    def __init__(self, graph, node, port, dtype, shape, is_ref=False):
        self.graph = graph
        self._node = node
        self.value_index = port
        self.dtype = dtypes.as_dtype(dtype)
        self._shape = TensorShape(shape)
        self.is_ref = is_ref

    @property
    def name(self):
        return "%s:%d" % (self._node, self.value_index)

    @property
    def _fetch_name(self):
        return self._node if self.value_index == 0 else self.name

    @property
    def op(self):
        return self.graph.get_operation_by_name(self._node)

    @property
    def shape(self):
        return self.graph._set_shapes.get((self._node, self.value_index), self._shape)

    def get_shape(self):
        return self.shape

    def set_shape(self, shape):
        """TF1's: what is known of this tensor's shape merged with `shape`
        (a TensorShape, a list with None, or None), for this tensor and the
        ops made from it afterwards. It promises the value's shape, which
        is not checked when the graph runs; a shape contradicting what is
        known is ValueError."""
        try:
            merged = self.graph._builder.set_shape(self._ref(), _shape_arg(shape))
        except errors.InvalidArgumentError as e:
            raise ValueError("set_shape(%s) on %s: %s" % (TensorShape(_shape_arg(shape)),
                                                         self.name, e)) from None
        self.graph._set_shapes[(self._node, self.value_index)] = TensorShape(merged)

    @property
    def device(self):
        return self.op.device

    def eval(self, feed_dict=None, session=None):
        from .session import _session_or_default
        return _session_or_default(session).run(self, feed_dict)

    def _ref(self):
        return (self._node, self.value_index)

    def __repr__(self):
        return "<tfd.Tensor '%s' shape=%s dtype=%s>" % (self.name, self._shape.dims, self.dtype.name)

    # Hashable by identity, as TF's: == builds no op (tf.equal does).
    __hash__ = object.__hash__

    def __bool__(self):
        raise TypeError("a tfd.Tensor has no truth value until a session runs it")

    def __iter__(self):
        raise TypeError("a tfd.Tensor is not iterable; use tfd.unstack")


class IndexedSlices:
    """Rows of a tensor, as TF1's tf.IndexedSlices: the tensor shaped
    `dense_shape` that is zero but for row indices[i], which is values[i]
    (rows of one index add up). The gradient of a gather (an embedding
    lookup) comes as one, and an optimizer applies it to those rows only.
    Used as a tensor (tfd.convert_to_tensor, an op's input) it is densified,
    once; fetched, it comes back as an IndexedSlicesValue.

        (grad, var), = opt.compute_gradients(loss, [emb])
        grad.values, grad.indices            # rows looked up, their ids
    """

    def __init__(self, values, indices, dense_shape=None):
        self.values = values
        self.indices = indices
        self.dense_shape = dense_shape
        self._dense = None

    @property
    def graph(self):
        return self.values.graph

    @property
    def dtype(self):
        return self.values.dtype

    @property
    def name(self):
        return self.values.name

    @property
    def op(self):
        return self.values.op

    @property
    def device(self):
        return self.values.device

    def _as_tensor(self):
        if self._dense is None:
            if self.dense_shape is None:
                raise ValueError("an IndexedSlices without dense_shape cannot become a tensor")
            g = self.graph
            self._dense = g._tensor(g._builder.densify(
                g._context(), self.values._ref(), self.indices._ref(), self.dense_shape._ref()))
        return self._dense

    def _grad_spec(self, var):
        """What the C++ optimizers take: ("sparse", values, indices, shape)."""
        shape = self.dense_shape
        if shape is None:
            with self.graph.as_default():
                shape = constant(np.array(var.shape.as_list(), np.int64), name="dense_shape")
        return ("sparse", self.values._ref(), self.indices._ref(), shape._ref())

    def __repr__(self):
        return "IndexedSlices(indices=%r, values=%r, dense_shape=%r)" % (
            self.indices, self.values, self.dense_shape)


class IndexedSlicesValue(collections.namedtuple("IndexedSlicesValue",
                                                ["values", "indices", "dense_shape"])):
    """A fetched IndexedSlices: numpy arrays."""


def _gradient_from(graph, spec):
    """A gradient as the C++ side gives it: None, a Tensor or IndexedSlices."""
    if spec is None:
        return None
    if spec[0] == "dense":
        return graph._tensor(spec[1])
    return IndexedSlices(*[graph._tensor(o) for o in spec[1:]])


def _gradient_spec(grad, var):
    """A gradient as the C++ side takes it (see _gradient_from)."""
    if grad is None:
        return None
    if isinstance(grad, IndexedSlices):
        return grad._grad_spec(var)
    return ("dense", _as_graph_element(grad)._ref())


class _OpBeingMade:
    """What a device function is given: the node being made, as TF1's
    device functions read an Operation or its NodeDef (name, type or op,
    and device: what the enclosing device blocks said)."""

    def __init__(self, name, op_type, device):
        self.name, self.type, self.device = name, op_type, device

    @property
    def op(self):  # NodeDef's name for the type
        return self.type

    @property
    def node_def(self):
        return self


def _device_function_call(fn):
    """The call C++ makes per node (graph_bindings.cc): fn's device, a
    string or anything with to_string() (a DeviceSpec); None is none."""

    def call(name, op_type, device):
        chosen = fn(_OpBeingMade(name, op_type, device))
        if chosen is None or isinstance(chosen, str):
            return chosen or ""
        if hasattr(chosen, "to_string"):
            return chosen.to_string()
        raise TypeError("the device function %r returned %r for node %s, not a device string"
                        % (fn, chosen, name))

    return call


class Graph:
    """A graph being built. Nodes go into the default graph unless a
    `with graph.as_default():` block says otherwise."""

    def __init__(self):
        self._builder = _tfd.GraphBuilder()
        self._name_scope = ""
        self._devices = []
        self._control = []
        self._outside_control_flow = False  # inside _init_scope()
        self._set_shapes = {}  # (node, port): the shape Tensor.set_shape left
        self._operations = {}
        self._collections = {}
        self._variable_scope = []  # VariableScope objects, outermost first

    @property
    def seed(self):
        """The graph-level random seed (TF1's Graph.seed), None when unset;
        settable, as tfd.set_random_seed sets it for the default graph."""
        return _tfd.random_seed(self._builder)

    @seed.setter
    def seed(self, seed):
        _tfd.set_random_seed(self._builder, None if seed is None else int(seed))

    # Contexts ---------------------------------------------------------
    @contextlib.contextmanager
    def as_default(self):
        _default_graphs().append(self)
        try:
            yield self
        finally:
            _default_graphs().pop()

    @contextlib.contextmanager
    def name_scope(self, name):
        """Names the nodes inside "<scope>/<name>". A name taken already
        becomes name_1, ...; one ending in "/" is used as it is; None or ""
        goes back to the top level."""
        old = self._name_scope
        if not name:
            new = ""
        elif name.endswith("/"):
            new = name[:-1]
        else:
            new = self._builder.unique_name(name, self._context())
        self._name_scope = new
        try:
            yield new + "/" if new else ""
        finally:
            self._name_scope = old

    @contextlib.contextmanager
    def device(self, spec):
        """A device ("/job:ps/task:0", "/gpu:0", or an object with
        to_string()), a replica_device_setter or a function of the op (a
        device function), or None to forget the enclosing blocks. Nested
        blocks apply as TF1's, innermost first: a device fills the fields
        not chosen yet, a function chooses anew from what was chosen so far
        (graph_builder.h, BuildContext)."""
        if hasattr(spec, "to_string"):  # a DeviceSpec
            spec = spec.to_string()
        elif callable(spec) and not isinstance(spec, _tfd.DeviceFunction):
            spec = _tfd.python_device_function(_device_function_call(spec))
        elif spec is not None and not isinstance(spec, (str, _tfd.DeviceFunction)):
            raise TypeError("tfd.device takes a device string, a function of the op, a "
                            "replica_device_setter or None, not %r" % (spec,))
        self._devices.append(spec)
        try:
            yield
        finally:
            self._devices.pop()

    @contextlib.contextmanager
    def control_dependencies(self, control_inputs):
        """Nodes made inside run after these (None: after nothing)."""
        if control_inputs is None:
            names = None
        else:
            names = []
            for c in control_inputs:
                names.append(c.name if isinstance(c, Operation) else _as_graph_element(c)._node)
        self._control.append(names)
        try:
            yield
        finally:
            self._control.pop()

    @contextlib.contextmanager
    def _init_scope(self):
        """TF1's init_scope for a variable made inside a cond's branch or a
        while_loop's body: the nodes made inside (the variable, its
        initializer, its read) belong to no cond or loop, and run after no
        control dependency, so the variable is initialized once, outside,
        and the branch or body reads it from there."""
        saved = self._control, self._outside_control_flow
        self._control, self._outside_control_flow = [None], True
        try:
            yield
        finally:
            self._control, self._outside_control_flow = saved

    def _context(self):
        ctx = _tfd.BuildContext()
        ctx.outside_control_flow = self._outside_control_flow
        ctx.name_scope = self._name_scope
        blocks = []
        for d in self._devices:
            if d is None:
                blocks = []
            elif isinstance(d, str):
                blocks.append(_tfd.DeviceBlock(d, None))
            else:
                blocks.append(_tfd.DeviceBlock("", d))
        ctx.device_blocks = blocks
        deps = []
        for names in self._control:
            deps = [] if names is None else deps + names
        ctx.control_inputs = deps
        return ctx

    # Nodes ------------------------------------------------------------
    def _add_op(self, op_type, inputs, attrs, name=None):
        refs = [t._ref() for t in inputs]
        node, outputs = self._builder.add_op(op_type, refs, attrs, name or "", self._context())
        return self._record(node, outputs)

    def _record(self, node, outputs):
        tensors = [Tensor(self, *o) for o in outputs]
        op = Operation(self, node, tensors)
        self._operations[node] = op
        return op

    def _tensor(self, out):
        return Tensor(self, *out)

    def get_operation_by_name(self, name):
        if name not in self._operations:
            outputs = self._builder.outputs(name)  # NotFoundError when there is no such node
            self._operations[name] = Operation(self, name, [Tensor(self, *o) for o in outputs])
        return self._operations[name]

    def get_tensor_by_name(self, name):
        node, _, port = name.partition(":")
        op = self.get_operation_by_name(node)
        port = int(port or 0)
        if port >= len(op._outputs):
            raise KeyError("'%s' has no output %d" % (node, port))
        return op._outputs[port]

    def get_operations(self):
        return [self.get_operation_by_name(n[0]) for n in self._builder.nodes()]

    def add_to_collection(self, name, value):
        self._collections.setdefault(name, []).append(value)

    def get_collection(self, name, scope=None):
        """The collection's items in the order added; with `scope`, those
        whose name it matches at the start (re.match), as TF1's. The
        variable keys (GraphKeys) list the graph's variables."""
        if name in _VARIABLE_COLLECTIONS:
            from . import variables  # noqa: PLC0415 (variables builds on this module)
            items = _VARIABLE_COLLECTIONS[name](variables)
        else:
            items = list(self._collections.get(name, []))
        if scope is None:
            return items
        return [i for i in items if re.match(scope, getattr(i, "name", ""))]

    # The file tfctl takes ----------------------------------------------
    def as_graph_def(self, as_text=False):
        """The graph as tfctl reads it (graph.capnp): a GraphDef whose
        SerializeToString() gives the binary Cap'n Proto message."""
        return GraphDef(self._builder.serialize(bool(as_text)), self._builder.nodes())

    def write(self, path, as_text=False):
        self._builder.write(str(path), bool(as_text))


class GraphDef:
    """A built graph in tfd's file format (schemas/graph.capnp)."""

    def __init__(self, data, nodes):
        self._data = data
        self.node = [NodeDef(*n) for n in nodes]

    def SerializeToString(self):  # noqa: N802 (TF's name)
        return self._data


class NodeDef:
    def __init__(self, name, op, inputs, device):
        self.name, self.op, self.input, self.device = name, op, list(inputs), device

    def __repr__(self):
        return "NodeDef(name=%r, op=%r)" % (self.name, self.op)


_state = threading.local()
_global_default = [Graph()]


def _default_graphs():
    if not hasattr(_state, "stack"):
        _state.stack = []
    return _state.stack


def get_default_graph():
    stack = _default_graphs()
    return stack[-1] if stack else _global_default[0]


def reset_default_graph():
    """A fresh default graph (outside any `as_default` block)."""
    if _default_graphs():
        raise AssertionError("reset_default_graph inside a `with graph.as_default()` block")
    _global_default[0] = Graph()


def name_scope(name, default_name=None, values=None):
    return get_default_graph().name_scope(name if name is not None else default_name)


class GraphKeys:
    """TF1's standard collection names. UPDATE_OPS holds what
    tfd.layers.batch_normalization adds (its moving averages), to run with
    the train op; TRAIN_OP what the optimizers' minimize makes;
    REGULARIZATION_LOSSES the losses of regularizers given to get_variable
    and the layers (tfd.losses.get_regularization_loss sums them);
    QUEUE_RUNNERS the tfd.train.QueueRunners start_queue_runners starts;
    LOSSES what tfd.losses' functions make (get_total_loss sums them);
    METRIC_VARIABLES the local variables tfd.metrics keep their counts in;
    SUMMARIES the tfd.summary ops tfd.summary.merge_all merges."""
    GLOBAL_VARIABLES = "variables"
    TRAINABLE_VARIABLES = "trainable_variables"
    LOCAL_VARIABLES = "local_variables"
    MOVING_AVERAGE_VARIABLES = "moving_average_variables"
    UPDATE_OPS = "update_ops"
    TRAIN_OP = "train_op"
    REGULARIZATION_LOSSES = "regularization_losses"
    QUEUE_RUNNERS = "queue_runners"
    LOSSES = "losses"
    METRIC_VARIABLES = "metric_variables"
    SUMMARIES = "summaries"


# Kept by the graph's variables themselves, not by adding to a collection.
_VARIABLE_COLLECTIONS = {
    GraphKeys.GLOBAL_VARIABLES: lambda v: v.global_variables(),
    GraphKeys.TRAINABLE_VARIABLES: lambda v: v.trainable_variables(),
    GraphKeys.LOCAL_VARIABLES: lambda v: v.local_variables(),
}


def add_to_collection(name, value):
    get_default_graph().add_to_collection(name, value)


def get_collection(key, scope=None):
    return get_default_graph().get_collection(key, scope)


def device(spec):
    return get_default_graph().device(spec)


def control_dependencies(control_inputs):
    return get_default_graph().control_dependencies(control_inputs)


def _as_graph_element(value):
    """A Tensor for a Tensor or a Variable (its value)."""
    if isinstance(value, Tensor):
        return value
    as_tensor = getattr(value, "_as_tensor", None)
    if as_tensor is not None:
        return as_tensor()
    raise TypeError("expected a tfd.Tensor, got %r" % (value,))


def _numpy_value(value, dtype):
    """`value` as a numpy array of `dtype` (a DType or None: TF's choice,
    float32 for Python floats and int32 for Python ints)."""
    if dtype is not None:
        dtype = dtypes.as_dtype(dtype)
        if dtype == dtypes.string:
            return np.asarray(value, dtype=object)
        arr = np.asarray(value)
        if dtype.is_integer and arr.dtype.kind == "f" and not np.all(np.mod(arr, 1) == 0):
            raise TypeError("%r is not exactly a %s" % (value, dtype.name))
        return np.asarray(arr, dtype=dtype.as_numpy_dtype, order="C")
    if isinstance(value, np.ndarray) or isinstance(value, np.generic):
        arr = np.asarray(value)
    else:
        arr = np.asarray(value)
        if arr.dtype.kind in "SU":
            # Not through numpy's fixed-width strings, which drop trailing
            # NUL bytes (a serialized record often ends in one).
            arr = np.asarray(value, dtype=object)
        if arr.dtype == np.float64:
            arr = arr.astype(np.float32)
        elif arr.dtype == np.int64 and (arr.size == 0 or (
                arr.min() >= -2**31 and arr.max() < 2**31)):
            arr = arr.astype(np.int32)
    if arr.dtype.kind in "SU":
        arr = arr.astype(object)
    # Not np.ascontiguousarray, which makes a scalar a vector of one.
    return np.asarray(arr, order="C")


def constant(value, dtype=None, shape=None, name="Const"):
    """A Const node holding `value` (a number, nested lists, a numpy
    array), converted to `dtype`; with `shape`, a scalar is broadcast to it."""
    arr = _numpy_value(value, dtype)
    if shape is not None:
        want = _shape_arg(shape)
        if arr.size == 1:
            arr = np.asarray(np.broadcast_to(arr.reshape(()), want), order="C")
        else:
            arr = arr.reshape(want)
    d = dtypes.as_dtype(arr.dtype)
    g = get_default_graph()
    return g._add_op("Const", [], {"value": arr, "dtype": d.name}, name).outputs[0]


def convert_to_tensor(value, dtype=None, name=None):
    """A Tensor for a Tensor, a Variable or a value (then a Const)."""
    if isinstance(value, Tensor) or hasattr(value, "_as_tensor"):
        t = _as_graph_element(value)
        if dtype is not None and t.dtype != dtypes.as_dtype(dtype):
            raise TypeError("tensor %s is %s, not %s" % (t.name, t.dtype.name,
                                                         dtypes.as_dtype(dtype).name))
        return t
    return constant(value, dtype=dtype, name=name or "Const")


def placeholder(dtype, shape=None, name=None):
    """A value fed at run time: sess.run(..., feed_dict={x: array})."""
    g = get_default_graph()
    attrs = {"dtype": dtypes.as_dtype(dtype).name, "shape": _shape_arg(shape)}
    return g._add_op("Placeholder", [], attrs, name or "Placeholder").outputs[0]
