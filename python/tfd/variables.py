"""Variables, as TensorFlow 1.x's: tfd.Variable, tfd.get_variable with
initializers and variable scopes, the initializer ops, global_step.

A variable is the C++ api/variables.h one: a VariableV2 node, its
Initializer, Assign and read nodes beside it (on its ps task under a
replica_device_setter), recorded in the graph so optimizers and
global_variables_initializer find it.
"""
import contextlib
import math
import types

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

    collections: None (GraphKeys.GLOBAL_VARIABLES), or a list naming
    GLOBAL_VARIABLES or LOCAL_VARIABLES (a local variable: one per replica,
    initialized by local_variables_initializer) and any other collections
    to add it to. validate_shape=False (a tensor initial value only) leaves
    its shape unknown, so each assignment may change it.
    """

    def __init__(self, initial_value=None, trainable=True, collections=None,
                 validate_shape=True, name=None, dtype=None, _info=None, _graph=None):
        if _info is not None:
            self._set(_graph, _info)
            return
        if initial_value is None:
            raise ValueError("tfd.Variable needs an initial_value")
        local, others = _collections_arg(collections)
        g = framework.get_default_graph()
        with g._init_scope():
            if callable(initial_value):
                initial_value = initial_value()
            ctx = g._context()
            if isinstance(initial_value, framework.Tensor) or hasattr(initial_value, "_as_tensor"):
                t = _guard_initial_value(g, framework.convert_to_tensor(initial_value, dtype=dtype))
                info = g._builder.variable_from(ctx, name or "", t._ref(), bool(trainable), local,
                                                bool(validate_shape))
            else:
                arr = framework._numpy_value(initial_value, dtype)
                if not validate_shape:
                    raise ValueError("tfd.Variable: validate_shape=False needs a tensor as its "
                                     "initial value, got %r" % (initial_value,))
                info = g._builder.variable(ctx, name or "", list(arr.shape),
                                           dtypes.as_dtype(arr.dtype).name, ("value", arr),
                                           bool(trainable), local)
        self._set(g, info)
        for key in others:
            g.add_to_collection(key, self)

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
        this variable itself. As TF1's, in a run that initializes this
        variable again while it has a value, it may give the old value."""
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

    def count_up_to(self, limit):
        """TF1's: increments this int32 or int64 scalar and returns its
        value before, until it reaches `limit`: then OutOfRangeError."""
        return _raw.count_up_to(self, limit=int(limit))

    def eval(self, session=None):
        return self._value.eval(session=session)

    def load(self, value, session=None):
        """Assigns `value` (a Python or numpy value) in `session` (else the
        default session), as TF1's Variable.load: no op is added per call.
        TF1 feeds the initializer's input; tfd adds a placeholder and an
        Assign once per variable (`<name>/load/...`) and feeds that."""
        from .session import _session_or_default
        session = _session_or_default(session)
        if session.graph is not self.graph:
            raise ValueError("%s.load: the session's graph is not the variable's" % self.op.name)
        if getattr(self, "_load", None) is None:
            self._load = self._load_ops()
        feed, assign = self._load
        session.run(assign, {feed: value})

    def _load_ops(self):
        g = self.graph
        with g.as_default(), g.name_scope(None), g.control_dependencies(None), \
                g.device(None), g.name_scope(self.op.name + "/load"):
            feed = framework.placeholder(self.dtype, self.shape.dims, name="value")
            with g.device(self.device or None):
                assign = _raw.assign(self, feed).op
        return feed, assign

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
    node_of = graph._builder.node  # (name, op, inputs, device) of one node
    guarded = _guarded(graph)
    copies, reads = {}, {}

    def variable_read(inputs):
        """The variable an Identity with these inputs reads, or None."""
        source = inputs[0].partition(":")[0] if inputs else ""
        if not source or node_of(source)[1] != "VariableV2":
            return None
        return next(v for v in _all_variables(graph) if v._ref_t._node == source)

    def substitute(node, port):
        """The tensor to read instead of node:port, or None (the same)."""
        name, op, inputs, _ = node_of(node)
        if op == "Identity" and node not in guarded:
            var = variable_read(inputs)
            if var is not None:
                if var.op.name not in reads:
                    reads[var.op.name] = var.initialized_value()
                return reads[var.op.name]
        if node not in copies:
            copies[node] = None  # a loop (NextIteration) comes back here: no copy
            copies[node] = _copy_if_reading(graph, node_of(node), substitute, guarded)
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


def local_variables_initializer():
    """TF1's: runs the initializer of every local variable made so far
    (tfd.metrics' counts, ...); a NoOp when there are none."""
    return variables_initializer(local_variables())


def _collections_arg(collections):
    """(local, other keys) of a Variable's collections= (TF1's): None is
    GLOBAL_VARIABLES; a local variable names LOCAL_VARIABLES and not
    GLOBAL_VARIABLES (each variable is one or the other); other keys are
    collections to add the variable to."""
    keys = framework.GraphKeys
    if collections is None:
        return False, []
    collections = list(collections)
    local = keys.LOCAL_VARIABLES in collections
    if local == (keys.GLOBAL_VARIABLES in collections):
        raise ValueError("tfd.Variable: collections must name one of GraphKeys.GLOBAL_VARIABLES "
                         "and GraphKeys.LOCAL_VARIABLES, got %r" % (collections,))
    return local, [c for c in collections if c not in framework._VARIABLE_COLLECTIONS]


def _local_zeros(name, shape, dtype):
    """A local variable of zeros, `name` in the current name scope: not
    trainable, not global (global_variables_initializer leaves it alone),
    placed by the device scope alone, so each replica keeps its own
    (api/variables.h, VariableOptions::local)."""
    g = framework.get_default_graph()
    dtype = dtypes.as_dtype(dtype)
    shape = framework._shape_arg(shape)
    with g._init_scope():
        info = g._builder.variable(g._context(), name, shape, dtype.name,
                                   zeros_initializer().spec(shape, dtype, name), False, True)
    return Variable(_info=info, _graph=g)


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


def _fans(shape):
    """A variable's fan_in, fan_out and fan_avg, as TF1 counts them: a
    kernel's second last and last dimensions, times its window (the
    dimensions before them)."""
    receptive = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
    fan_in = (shape[-2] if len(shape) > 1 else (shape[0] if shape else 1)) * receptive
    fan_out = (shape[-1] if shape else 1) * receptive
    return {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}


class _VarianceScaling(Initializer):
    """TF 1.15's VarianceScaling: values of variance scale / n, n the
    variable's fan in, fan out or their mean (a convolution kernel's
    counting its window), from a normal truncated at two standard
    deviations ("truncated_normal", or TF1's older "normal"), a normal
    ("untruncated_normal") or a uniform."""

    _DISTRIBUTIONS = ("normal", "truncated_normal", "untruncated_normal", "uniform")

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None):
        if not scale > 0:
            raise ValueError("`scale` must be positive float, not %r" % (scale,))
        if mode not in ("fan_in", "fan_out", "fan_avg"):
            raise ValueError("Invalid `mode` argument: %r" % (mode,))
        if distribution not in self._DISTRIBUTIONS:
            raise ValueError("Invalid `distribution` argument: %r" % (distribution,))
        super().__init__(distribution, seed=seed)
        self.scale, self.mode, self.distribution = float(scale), mode, distribution

    def spec(self, shape, dtype, name=""):
        variance = self.scale / max(1.0, _fans(shape)[self.mode])
        if self.distribution == "uniform":
            limit = math.sqrt(3.0 * variance)
            return ("uniform", -limit, limit, self.seed)
        if self.distribution == "untruncated_normal":
            return ("normal", math.sqrt(variance), 0.0, self.seed)
        # A normal cut at two standard deviations has 0.8796... of the
        # uncut one's: scaled up to keep the variance asked for.
        return ("truncated_normal", math.sqrt(variance) / 0.87962566103423978, 0.0, self.seed)


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


def variance_scaling_initializer(scale=1.0, mode="fan_in", distribution="truncated_normal",
                                 seed=None, dtype=None):
    return _VarianceScaling(scale, mode, distribution, seed)


def glorot_uniform_initializer(seed=None, dtype=None):
    return _VarianceScaling(1.0, "fan_avg", "uniform", seed)


def glorot_normal_initializer(seed=None, dtype=None):
    return _VarianceScaling(1.0, "fan_avg", "truncated_normal", seed)


def he_normal(seed=None):
    return _VarianceScaling(2.0, "fan_in", "truncated_normal", seed)


def he_uniform(seed=None):
    return _VarianceScaling(2.0, "fan_in", "uniform", seed)


def lecun_normal(seed=None):
    return _VarianceScaling(1.0, "fan_in", "truncated_normal", seed)


def lecun_uniform(seed=None):
    return _VarianceScaling(1.0, "fan_in", "uniform", seed)


# TF1's tf.initializers: the initializers under their short names, and the
# ops that run variables' initializers.
initializers = types.SimpleNamespace(
    zeros=zeros_initializer, ones=ones_initializer, constant=constant_initializer,
    random_normal=random_normal_initializer, truncated_normal=truncated_normal_initializer,
    random_uniform=random_uniform_initializer, variance_scaling=variance_scaling_initializer,
    glorot_uniform=glorot_uniform_initializer, glorot_normal=glorot_normal_initializer,
    he_normal=he_normal, he_uniform=he_uniform, lecun_normal=lecun_normal,
    lecun_uniform=lecun_uniform, global_variables=global_variables_initializer,
    local_variables=local_variables_initializer, variables=variables_initializer)


# Variable scopes and get_variable --------------------------------------------
class VariableScope:
    """TF1's: the prefix get_variable gives names (`name`), whether it
    returns variables made before (`reuse`: False, True or AUTO_REUSE),
    and the name scope its ops went to (`original_name_scope`, "layer/")."""

    def __init__(self, name, reuse=False, original_name_scope=""):
        self.name, self.reuse = name, reuse
        self.original_name_scope = original_name_scope

    def reuse_variables(self):
        """get_variable in this scope returns the variables made before
        (TF1's: there is no going back to reuse=False)."""
        self.reuse = True

    def __repr__(self):
        return "<tfd.VariableScope %r reuse=%r>" % (self.name, self.reuse)


AUTO_REUSE = "auto_reuse"


def _current_scope(graph):
    """The innermost variable scope, or the graph's root scope."""
    if graph._variable_scope:
        return graph._variable_scope[-1]
    if not hasattr(graph, "_root_variable_scope"):
        graph._root_variable_scope = VariableScope("", False)
    return graph._root_variable_scope


def _scope_counts(graph):
    """Times each variable scope name was entered (TF1's variable_scopes_count)."""
    if not hasattr(graph, "_variable_scope_counts"):
        graph._variable_scope_counts = {}
    return graph._variable_scope_counts


def _unique_default_name(graph, outer, default_name):
    """default_name, or default_name_1, _2, ... when that scope was entered
    before (TF1's _get_unique_variable_scope)."""
    counts = _scope_counts(graph)
    prefix = outer.name + "/" if outer.name else ""
    name, i = default_name, 0
    while counts.get(prefix + name, 0):
        i += 1
        name = "%s_%d" % (default_name, i)
    return name


@contextlib.contextmanager
def variable_scope(name_or_scope, default_name=None, values=None, reuse=None):
    """TF1's: get_variable names variables "<scope>/<name>"; ops go to a name
    scope opened as tfd.name_scope opens one (a second `layer` scope's ops
    are `layer_1/...` while its variables stay `layer/...`). A VariableScope
    object reopens its name and name scope. reuse=True (or AUTO_REUSE) lets
    get_variable return variables made before; reuse is inherited by inner
    scopes and cannot be turned off there. With name_or_scope None,
    default_name is made unique: blk, blk_1, ..."""
    g = framework.get_default_graph()
    outer = _current_scope(g)
    counts = _scope_counts(g)
    if isinstance(name_or_scope, VariableScope):
        full, reuse = name_or_scope.name, reuse or name_or_scope.reuse
        names = name_or_scope.original_name_scope or None
    else:
        if name_or_scope is None and default_name is None:
            raise ValueError("variable_scope needs a name_or_scope or a default_name")
        if name_or_scope is None and reuse is True:
            raise ValueError("reuse=True cannot be used without a name_or_scope")
        name = name_or_scope if name_or_scope is not None else \
            _unique_default_name(g, outer, default_name)
        full, reuse = (outer.name + "/" + name if outer.name else name), reuse or outer.reuse
        names = name_or_scope if name_or_scope is not None else default_name
    counts[full] = counts.get(full, 0) + 1
    saved = dict(counts)
    with g.name_scope(names) as opened:
        scope = VariableScope(full, reuse, opened)
        g._variable_scope.append(scope)
        try:
            yield scope
        finally:
            g._variable_scope.pop()
            _close_subscopes(counts, full, saved if isinstance(name_or_scope, VariableScope)
                             else None)


def _close_subscopes(counts, full, saved):
    """TF1: leaving a named scope forgets the default names used inside it
    (reentering `model` makes `model/blk` again); leaving a reopened
    VariableScope puts the counts back as they were."""
    if saved is not None:
        counts.clear()
        counts.update(saved)
        return
    for key in [k for k in counts if k.startswith(full + "/")]:
        counts[key] = 0


def get_variable_scope():
    """The current VariableScope (the graph's root scope outside any):
    `tfd.get_variable_scope().reuse_variables()` works as in TF1."""
    return _current_scope(framework.get_default_graph())


def _check_shared(full, existing, shape, dtype):
    """TF1's checks when reusing: a shape or dtype given must be the variable's."""
    if shape is not None:
        want = framework.TensorShape(framework._shape_arg(shape))
        found = existing.shape
        if want.ndims != found.ndims or any(
                a is not None and b is not None and a != b for a, b in zip(want, found)):
            raise ValueError("Trying to share variable %s, but specified shape %s and found "
                             "shape %s." % (full, tuple(want.dims), tuple(found.dims)))
    if dtype is not None and dtypes.as_dtype(dtype) != existing.dtype:
        raise ValueError("Trying to share variable %s, but specified dtype %s and found dtype "
                         "%s." % (full, dtypes.as_dtype(dtype).name, existing.dtype.name))
    return existing


def get_variable(name, shape=None, dtype=None, initializer=None, regularizer=None,
                 trainable=True, collections=None, partitioner=None):
    """The variable "<variable scope>/<name>": made here, or (under reuse)
    the one made before, whose shape and dtype must be those given (TF1's
    ValueError "Trying to share variable ..."; a dtype not given is not
    checked, where TF1 compares float32). The initializer defaults to
    Glorot uniform, as TF's; a tensor, a Python or numpy value gives the
    value itself (its shape; giving shape too is TF1's ValueError). With a
    partitioner (tfd.fixed_size_partitioner, ...) it is a
    tfd.PartitionedVariable of shards "<name>/part_<i>". A regularizer
    (tfd.contrib.layers.l2_regularizer, ...) adds its loss of a variable
    made here to GraphKeys.REGULARIZATION_LOSSES; reusing adds none.
    `collections` (TF1's: those the variable goes to in place of
    [GLOBAL_VARIABLES]) must name GLOBAL_VARIABLES or LOCAL_VARIABLES (a
    local one: not saved, not in the global initializer; made by a tfd
    initializer); the variable also goes to the others it names."""
    g = framework.get_default_graph()
    scope = _current_scope(g)
    full = scope.name + "/" + name if scope.name else name
    existing = {v._ref_t._node: v for v in _all_variables(g)}
    existing.update(getattr(g, "_partitioned", {}))
    if full in existing:
        if not scope.reuse:
            raise ValueError("variable %s exists already; set reuse=True in variable_scope" % full)
        return _check_shared(full, existing[full], shape, dtype)
    if scope.reuse is True:
        raise ValueError("variable %s does not exist, and reuse=True forbids making it" % full)
    if initializer is None:
        initializer = glorot_uniform_initializer()
    local = _is_local(full, collections, initializer, partitioner)
    with g._init_scope():  # made in a loop's body or a cond's branch, it is outside them
        with g.name_scope(scope.name + "/" if scope.name else None):
            if isinstance(initializer, Initializer):
                var = _new_variable(g, name, full, shape, dtypes.as_dtype(dtype or dtypes.float32),
                                    initializer, partitioner, trainable, local)
            elif partitioner is not None:
                raise ValueError("partitioned variable %s needs an initializer of tfd's "
                                 "(zeros_initializer, random_normal_initializer, ...)" % full)
            else:
                var = _variable_from_value(name, full, shape, dtype, initializer, trainable)
        if regularizer is not None:
            _regularize(g, var, regularizer)
    for key in collections or ():
        if key not in framework._VARIABLE_COLLECTIONS:  # those the variable keeps itself
            framework.add_to_collection(key, var)
    return var


def _is_local(full, collections, initializer, partitioner):
    """Whether get_variable's `collections` make the variable local; a
    ValueError for what tfd cannot make (neither global nor local; a local
    one from a value or partitioned)."""
    if collections is None:
        return False
    keys = set(collections)
    if framework.GraphKeys.GLOBAL_VARIABLES in keys:
        return False
    if framework.GraphKeys.LOCAL_VARIABLES not in keys:
        raise ValueError("get_variable(%s): collections %s name neither GLOBAL_VARIABLES nor "
                         "LOCAL_VARIABLES; tfd makes every variable one of the two"
                         % (full, sorted(keys)))
    if not isinstance(initializer, Initializer) or partitioner is not None:
        raise ValueError("get_variable(%s): a local variable (collections=[LOCAL_VARIABLES]) "
                         "needs a tfd initializer and no partitioner" % full)
    return True


def _regularize(g, var, regularizer):
    """regularizer(var) (of each shard of a partitioned variable) into
    REGULARIZATION_LOSSES, unless it is None (a scale of 0). TF1 names it
    "<variable>/Regularizer/..." and builds it beside the variable, which
    keeps a ps-held weight from crossing to the worker whole; it reads only
    the variable, so no control dependency of the caller's holds it back."""
    for v in (var._get_variable_list() if hasattr(var, "_get_variable_list") else [var]):
        with g.name_scope(v.op.name + "/Regularizer/"), g.control_dependencies(None), \
                g.device(None), g.device(v.device or None):
            loss = regularizer(v)
        if loss is not None:
            framework.add_to_collection(framework.GraphKeys.REGULARIZATION_LOSSES, loss)


def _new_variable(g, name, full, shape, dtype, initializer, partitioner, trainable,
                  local=False):
    """get_variable's variable of `shape` filled by a tfd initializer."""
    if shape is None:
        raise ValueError("get_variable(%s) needs a shape" % full)
    shape = framework._shape_arg(shape)
    if partitioner is not None:
        from . import embedding_ops
        return embedding_ops.partitioned_variable(g, name, full, shape, dtype, initializer,
                                                  partitioner, trainable)
    info = g._builder.variable(g._context(), name, shape, dtype.name,
                               initializer.spec(shape, dtype, full), bool(trainable), bool(local))
    return Variable(_info=info, _graph=g)


def _variable_from_value(name, full, shape, dtype, initializer, trainable):
    """get_variable with a tensor, a Python or numpy value, or a function
    of no arguments returning one, as the initializer: the variable takes
    its shape, and its dtype when none is given (TF's choice for a Python
    value: float32, int32). A tensor of another dtype than `dtype` is
    TF1's ValueError; a value is converted to it, as tfd.constant does."""
    constant = not callable(initializer)
    if constant and shape is not None:
        raise ValueError("get_variable(%s): if initializer is a constant, do not specify "
                         "shape" % full)
    value = initializer if constant else initializer()
    if isinstance(value, framework.Tensor) or hasattr(value, "_as_tensor"):
        value = framework._as_graph_element(value)
        if dtype is not None and dtypes.as_dtype(dtype) != value.dtype:
            raise ValueError("get_variable(%s): initializer type '%s' and explicit dtype '%s' "
                             "don't match" % (full, value.dtype.name, dtypes.as_dtype(dtype).name))
    else:
        value = framework._numpy_value(value, dtype)
    if shape is not None and framework.TensorShape(framework._shape_arg(shape)) != value.shape:
        raise ValueError("get_variable(%s): the initializer gave shape %s, not %s"
                         % (full, list(value.shape), framework._shape_arg(shape)))
    return Variable(value, trainable=trainable, name=name)
