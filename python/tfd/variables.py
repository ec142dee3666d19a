"""Variables, as TensorFlow 1.x's: tfd.Variable, tfd.get_variable with
initializers and variable scopes, the initializer ops, global_step.

A variable is the C++ api/variables.h one: a VariableV2 node, its
Initializer, Assign and read nodes beside it (on its ps task under a
replica_device_setter), recorded in the graph so optimizers and
global_variables_initializer find it.
"""
import contextlib
import math

import numpy as np

from . import dtypes, errors, framework, math_ops
from .op_gen import raw_ops as _raw


class Variable:
    """A tensor that keeps its value across runs, on the task it is placed on.

        w = tfd.Variable(tfd.zeros([784, 10]), name="w")
        w = tfd.Variable(np.ones(3, np.float32))
        y = tfd.matmul(x, w)        # reads w's value
        w2 = tfd.Variable(w * 2.0)  # initialized from w's initial value

    As TF1's, an initial value that reads other variables is rebuilt to
    read their initialized_value() instead, so global_variables_initializer
    initializes both in one run, in any order (TF1's
    _try_guard_against_uninitialized_dependencies).
    """

    def __init__(self, initial_value=None, trainable=True, name=None, dtype=None,
                 validate_shape=True, _info=None, _graph=None):
        if _info is not None:
            self._set(_graph, _info)
            return
        if initial_value is None:
            raise ValueError("tfd.Variable needs an initial_value")
        if callable(initial_value):
            initial_value = initial_value()
        g = framework.get_default_graph()
        ctx = g._context()
        if isinstance(initial_value, framework.Tensor) or hasattr(initial_value, "_as_tensor"):
            t = _guard_initial_value(g, framework.convert_to_tensor(initial_value, dtype=dtype))
            info = g._builder.variable_from(ctx, name or "", t._ref(), bool(trainable))
        else:
            arr = framework._numpy_value(initial_value, dtype)
            info = g._builder.variable(ctx, name or "", list(arr.shape),
                                       dtypes.as_dtype(arr.dtype).name, ("value", arr),
                                       bool(trainable), False)
        self._set(g, info)

    def _set(self, graph, info):
        ref, value, initializer, device, trainable = info
        self.graph = graph
        self._ref_t = framework.Tensor(graph, *ref)
        self._value = framework.Tensor(graph, *value)
        self._initializer_name = initializer
        self._device = device
        self.trainable = trainable
        graph._variables = getattr(graph, "_variables", {})
        graph._variables[self._ref_t._node] = self

    @property
    def name(self):
        return self._ref_t._node + ":0"

    @property
    def op(self):
        return self.graph.get_operation_by_name(self._ref_t._node)

    @property
    def dtype(self):
        return self._value.dtype

    @property
    def shape(self):
        return self._value.shape

    def get_shape(self):
        return self._value.shape

    @property
    def device(self):
        return self._device

    @property
    def initializer(self):
        return self.graph.get_operation_by_name(self._initializer_name)

    @property
    def initial_value(self):
        """The tensor the initializer assigns (TF1's Variable.initial_value)."""
        init = self.initializer
        if init.type != "Assign":
            raise ValueError("variable %s has no initial value tensor (its initializer is a %s)"
                             % (self.op.name, init.type))
        return init.inputs[1]

    def initialized_value(self):
        """This variable's value, or its initial value while it is not
        initialized: TF1's `cond(is_variable_initialized(v), v.read_value,
        lambda: v.initial_value)`, built where the variable lives. What to
        initialize another variable from: in one run with this variable's
        initializer both see the same initial value, and it never assigns
        this variable itself."""
        g = self.graph
        first = g._builder.num_nodes()
        with g.as_default(), g.name_scope(None), g.control_dependencies(None), \
                g.device(None), g.device(self.device or None), \
                g.name_scope(self.op.name + "/initialized_value"):
            ready = _raw.is_variable_initialized(self)
            taken = _raw.identity(_raw.switch(ready, ready)[1])
            with g.control_dependencies([taken]):
                read = _raw.identity(self._ref_t)
            initial = _raw.identity(_raw.switch(self.initial_value, ready)[0])
            value = _raw.merge([read, initial])[0]
        # Already safe to read before the initializers run: _guard_initial_value keeps them.
        _guarded(g).update(n[0] for n in g._builder.nodes()[first:])
        return value

    def value(self):
        return self._value

    read_value = value

    def _as_tensor(self):
        return self._value

    def _ref_tensor(self):
        return self._ref_t

    def _ref(self):
        return self._ref_t._ref()

    def assign(self, value, name=None):
        return _raw.assign(self, framework.convert_to_tensor(value, dtype=self.dtype), name=name)

    def assign_add(self, delta, name=None):
        return _raw.assign_add(self, framework.convert_to_tensor(delta, dtype=self.dtype),
                               name=name)

    def assign_sub(self, delta, name=None):
        return _raw.assign_sub(self, framework.convert_to_tensor(delta, dtype=self.dtype),
                               name=name)

    def eval(self, session=None):
        return self._value.eval(session=session)

    def __repr__(self):
        return "<tfd.Variable '%s' shape=%s dtype=%s>" % (self.name, self.shape.dims,
                                                         self.dtype.name)

    __hash__ = object.__hash__


for _name in math_ops._OPERATORS:
    setattr(Variable, _name, (lambda n: lambda self, *a: getattr(self._value, n)(*a))(_name))


def _wrap(graph, infos):
    known = getattr(graph, "_variables", {})
    out = []
    for info in infos:
        node = info[0][0]
        out.append(known[node] if node in known else Variable(_info=info, _graph=graph))
    return out


def _all_variables(graph):
    b = graph._builder
    return _wrap(graph, b.variables("global") + b.variables("local"))


def _guarded(graph):
    """Names of the nodes initialized_value() built: reads that wait for
    the variable's initialization, or do without it."""
    if not hasattr(graph, "_initialized_value_nodes"):
        graph._initialized_value_nodes = set()
    return graph._initialized_value_nodes


def _guard_initial_value(graph, value):
    """`value`, or a copy of the part of its graph that reads variables,
    each read (an Identity of a variable's reference, as `w/read`) replaced
    by that variable's initialized_value(): TF1's
    _try_guard_against_uninitialized_dependencies. Ops that read no
    variable are shared, not copied."""
    by_ref = {v._ref_t._node: v for v in _all_variables(graph)}
    if not by_ref:
        return value
    nodes = {n[0]: n for n in graph._builder.nodes()}
    guarded = _guarded(graph)
    copies, reads = {}, {}

    def substitute(node, port):
        """The tensor to read instead of node:port, or None (the same)."""
        name, op, inputs, _ = nodes[node]
        if op == "Identity" and inputs and inputs[0] in by_ref and node not in guarded:
            if inputs[0] not in reads:
                reads[inputs[0]] = by_ref[inputs[0]].initialized_value()
            return reads[inputs[0]]
        if node not in copies:
            copies[node] = None  # a loop (NextIteration) comes back here: no copy
            copies[node] = _copy_if_reading(graph, nodes[node], substitute, guarded)
        return None if copies[node] is None else copies[node].outputs[port]

    new = substitute(value._node, value.value_index)
    return value if new is None else new


def _copy_if_reading(graph, node, substitute, guarded):
    """A copy of `node` reading substitute()'s tensors, when one of its
    inputs has one; else None."""
    name, op, inputs, device = node
    if name in guarded or op == "VariableV2":
        return None
    data = [i for i in inputs if not i.startswith("^")]
    parts = [i.partition(":") for i in data]
    new = [substitute(n, int(p or 0)) for n, _, p in parts]
    if all(t is None for t in new):
        return None
    tensors = [t if t is not None else graph.get_tensor_by_name(n + ":" + (p or "0"))
               for t, (n, _, p) in zip(new, parts)]
    attrs = {}
    for a in _raw.OP_DEFS[op]["attrs"]:
        try:
            attrs[a["name"]] = graph._builder.get_attr(name, a["name"])
        except errors.NotFoundError:
            pass  # a default the node leaves out
    controls = [graph.get_operation_by_name(i[1:]) for i in inputs if i.startswith("^")]
    with graph.name_scope(None), graph.device(None), graph.device(device or None), \
            graph.control_dependencies(None), graph.control_dependencies(controls):
        return graph._add_op(op, tensors, attrs, name)


def global_variables():
    g = framework.get_default_graph()
    return _wrap(g, g._builder.variables("global"))


all_variables = global_variables


def trainable_variables():
    g = framework.get_default_graph()
    return _wrap(g, g._builder.variables("trainable"))


def local_variables():
    g = framework.get_default_graph()
    return _wrap(g, g._builder.variables("local"))


def global_variables_initializer(name="init"):
    g = framework.get_default_graph()
    return g.get_operation_by_name(g._builder.global_variables_initializer(g._context(), name))


initialize_all_variables = global_variables_initializer


def variables_initializer(var_list, name="init"):
    return math_ops.group(*[v.initializer for v in var_list], name=name)


# Initializers ----------------------------------------------------------------
class Initializer:
    """How get_variable fills a variable: built where the variable lives."""

    def __init__(self, kind, a=0.0, b=0.0, seed=None):
        # seed None: no op seed; the graph's seed, if any, seeds it (random_seed.py).
        self.kind, self.a, self.b = kind, float(a), float(b)
        self.seed = None if seed is None else int(seed)

    def spec(self, shape, dtype, name=""):
        """What the binding builds for variable `name` of `shape` and `dtype`."""
        return (self.kind, self.a, self.b, self.seed)


class _GlorotUniform(Initializer):
    def __init__(self, seed=None):
        super().__init__("uniform", seed=seed)

    def spec(self, shape, dtype, name=""):
        fan_in = shape[-2] if len(shape) > 1 else (shape[0] if shape else 1)
        fan_out = shape[-1] if shape else 1
        receptive = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
        limit = math.sqrt(6.0 / max(1, (fan_in + fan_out) * receptive))
        return ("uniform", -limit, limit, self.seed)


def zeros_initializer(dtype=None):
    return Initializer("zeros")


def ones_initializer(dtype=None):
    return Initializer("ones")


class _ConstantValue(Initializer):
    """constant_initializer of a list or an array: these values exactly, as
    a constant of the variable's shape (api/variables.h, Initializer::Value)."""

    def __init__(self, value, verify_shape):
        super().__init__("value")
        self.value, self.verify_shape = value, bool(verify_shape)

    def spec(self, shape, dtype, name=""):
        arr = framework._numpy_value(self.value, dtype)
        want = tuple(int(d) for d in shape)
        size = int(np.prod(want))
        if arr.shape == want:
            return ("value", arr)
        # TF1's rule (tf.constant with a shape): without verify_shape the
        # values fill the variable in order, the last one repeated when fewer.
        if not self.verify_shape and 0 < arr.size <= size:
            flat = arr.reshape(-1)
            if arr.size < size:
                flat = np.concatenate([flat, np.repeat(flat[-1:], size - arr.size)])
            return ("value", np.ascontiguousarray(flat.reshape(want)))
        raise ValueError("constant_initializer of variable %s: the value has shape %s (%d "
                         "elements), the variable has shape %s (%d)%s"
                         % (name or "?", list(arr.shape), arr.size, list(want), size,
                            "; verify_shape asks for the same shape" if self.verify_shape
                            else ""))


def constant_initializer(value=0, dtype=None, verify_shape=False):
    """TF1's: a scalar fills the variable; a list or numpy array gives its
    values, of the variable's shape (or, without verify_shape, of as many
    elements or fewer, the last one repeated); else a ValueError naming the
    variable and both shapes."""
    if np.ndim(value) == 0 and not verify_shape:
        return Initializer("constant", value)
    return _ConstantValue(value, verify_shape)


def random_normal_initializer(mean=0.0, stddev=1.0, seed=None, dtype=None):
    return Initializer("normal", stddev, mean, seed)


def truncated_normal_initializer(mean=0.0, stddev=1.0, seed=None, dtype=None):
    return Initializer("truncated_normal", stddev, mean, seed)


def random_uniform_initializer(minval=0.0, maxval=1.0, seed=None, dtype=None):
    return Initializer("uniform", minval, maxval, seed)


def glorot_uniform_initializer(seed=None, dtype=None):
    return _GlorotUniform(seed)


# Variable scopes and get_variable --------------------------------------------
class VariableScope:
    def __init__(self, name, reuse):
        self.name, self.reuse = name, reuse


AUTO_REUSE = "auto_reuse"


@contextlib.contextmanager
def variable_scope(name_or_scope, default_name=None, reuse=None):
    """Names get_variable's variables "<scope>/<name>" and opens a name
    scope of the same name; reuse=True (or AUTO_REUSE) lets get_variable
    return variables made before."""
    g = framework.get_default_graph()
    name = name_or_scope.name if isinstance(name_or_scope, VariableScope) else (
        name_or_scope or default_name)
    outer = g._variable_scope[-1] if g._variable_scope else ("", False)
    full = name if isinstance(name_or_scope, VariableScope) else (
        outer[0] + "/" + name if outer[0] else name)
    effective = reuse if reuse is not None else outer[1]
    g._variable_scope.append((full, effective))
    try:
        with g.name_scope(full + "/"):
            yield VariableScope(full, effective)
    finally:
        g._variable_scope.pop()


def get_variable_scope():
    g = framework.get_default_graph()
    name, reuse = g._variable_scope[-1] if g._variable_scope else ("", False)
    return VariableScope(name, reuse)


def get_variable(name, shape=None, dtype=dtypes.float32, initializer=None, trainable=True,
                 collections=None, partitioner=None):
    """The variable "<variable scope>/<name>": made here, or (under reuse)
    the one made before. The initializer defaults to Glorot uniform, as TF's.
    With a partitioner (tfd.fixed_size_partitioner, ...) it is a
    tfd.PartitionedVariable of shards "<name>/part_<i>"."""
    g = framework.get_default_graph()
    scope, reuse = g._variable_scope[-1] if g._variable_scope else ("", False)
    full = scope + "/" + name if scope else name
    existing = {v._ref_t._node: v for v in global_variables() + local_variables()}
    existing.update(getattr(g, "_partitioned", {}))
    if full in existing:
        if not reuse:
            raise ValueError("variable %s exists already; set reuse=True in variable_scope" % full)
        return existing[full]
    if reuse is True:
        raise ValueError("variable %s does not exist, and reuse=True forbids making it" % full)
    dtype = dtypes.as_dtype(dtype)
    if initializer is None:
        initializer = glorot_uniform_initializer()
    if partitioner is not None:
        if not isinstance(initializer, Initializer) or shape is None:
            raise ValueError("partitioned variable %s needs a shape and an initializer of "
                             "tfd's (zeros_initializer, random_normal_initializer, ...)" % full)
        from . import embedding_ops
        with g.name_scope(scope + "/" if scope else None):
            return embedding_ops.partitioned_variable(g, name, full, framework._shape_arg(shape),
                                                      dtype, initializer, partitioner,
                                                      trainable)
    if not isinstance(initializer, Initializer):
        with g.name_scope(scope + "/" if scope else None):
            value = framework._numpy_value(initializer, dtype) if not callable(initializer) \
                else initializer
            return Variable(value, trainable=trainable, name=name, dtype=dtype)
    if shape is None:
        raise ValueError("get_variable(%s) needs a shape" % full)
    shape = framework._shape_arg(shape)
    with g.name_scope(scope + "/" if scope else None):
        info = g._builder.variable(g._context(), name, shape, dtype.name,
                                   initializer.spec(shape, dtype, full), bool(trainable), False)
    return Variable(_info=info, _graph=g)
