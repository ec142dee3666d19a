"""One Python function per op of the registry, made from the op's definition
when the package is imported: snake_case names (MatMul -> mat_mul, Conv2D ->
conv2d, L2Loss -> l2_loss, as TensorFlow's generator spells them), inputs
first, then the attrs that have no default, then keyword attrs and `name`.
Type and count attrs the inputs imply are inferred, as TF does: a Python
value given where a tensor is expected becomes a constant of the dtype the
other inputs of the same type attr have. A new op appears here with no
change to this package.

    y = tfd.raw_ops.mat_mul(a, b, transpose_b=True)
    tfd.raw_ops.OP_DEFS["MatMul"]   # the definition it was made from
"""
import types


from . import _tfd, dtypes, framework


def snake_name(op_name):
    """TensorFlow's op-name spelling: an underscore before a capital that
    follows a small letter or starts a word (the next letter is small)."""
    out = []
    for i, c in enumerate(op_name):
        if c.isupper() and i > 0 and op_name[i - 1] != "_" and (
                op_name[i - 1].islower() or (i + 1 < len(op_name) and op_name[i + 1].islower())):
            out.append("_")
        out.append(c.lower())
    return "".join(out)


def _is_tensor_like(v):
    return isinstance(v, framework.Tensor) or hasattr(v, "_as_tensor")


def _attr_value(attr_def, value):
    """A Python value as the C++ side takes an attr of this type."""
    t = attr_def["type"]
    if t == "type":
        return dtypes.as_dtype(value).name
    if t == "list(type)":
        return [dtypes.as_dtype(v).name for v in value]
    if t == "shape":
        return framework._shape_arg(value)
    if t == "list(shape)":
        return [framework._shape_arg(v) for v in value]
    if t == "tensor":
        return framework._numpy_value(value, None)
    return value


def _known_types(opdef, values, attrs):
    """The dtype of each type attr that an explicit attr or a tensor input fixes."""
    known = {}
    for a in opdef["attrs"]:
        if a["type"] == "type" and a["name"] in attrs:
            known[a["name"]] = dtypes.as_dtype(attrs[a["name"]])
    for arg in opdef["inputs"]:
        attr = arg["type_attr"]
        if not attr or attr in known or arg["name"] not in values:
            continue
        v = values[arg["name"]]
        items = v if arg["number_attr"] and isinstance(v, (list, tuple)) else [v]
        for item in items:
            if _is_tensor_like(item):
                known[attr] = framework._as_graph_element(item).dtype
                break
    return known


def _attr_default_type(opdef, attr_name):
    for a in opdef["attrs"]:
        if a["name"] == attr_name and a["has_default"] and a["type"] == "type":
            return a["default"]
    return None


def _input_tensor(arg, value, dtype):
    if arg["is_ref"]:
        ref = getattr(value, "_ref_tensor", None)
        if ref is not None:
            return ref()
        if isinstance(value, framework.Tensor) and value.is_ref:
            return value
        raise TypeError("input '%s' takes a variable (a reference), not %r" % (arg["name"], value))
    if _is_tensor_like(value):
        return framework._as_graph_element(value)  # the registry checks its dtype, naming the node
    return framework.convert_to_tensor(value, dtype=dtype)


def _convert_inputs(opdef, values, attrs):
    known = _known_types(opdef, values, attrs)
    flat = []
    for arg in opdef["inputs"]:
        if arg["name"] not in values:
            raise TypeError("%s: missing input '%s'" % (opdef["name"], arg["name"]))
        value = values[arg["name"]]
        attr = arg["type_attr"]
        dtype = arg["type"] or (known.get(attr) if attr else None)
        if dtype is None and attr:
            dtype = _attr_default_type(opdef, attr)
        if arg["number_attr"] or arg["type_list_attr"]:
            if not isinstance(value, (list, tuple)):
                raise TypeError("%s: input '%s' is a list of tensors, not %r"
                                % (opdef["name"], arg["name"], value))
            flat.extend(_input_tensor(arg, v, dtype) for v in value)
        else:
            flat.append(_input_tensor(arg, value, dtype))
    return flat


def _results(opdef, op):
    outs = op.outputs
    if not opdef["outputs"]:
        return op
    single = len(opdef["outputs"]) == 1
    arg = opdef["outputs"][0]
    if single and not (arg["number_attr"] or arg["type_list_attr"]):
        return outs[0]
    return outs


def apply_op(opdef, values, attrs, name=None):
    """Adds a node of `opdef` to the default graph: `values` maps input names
    to tensors or values, `attrs` attr names to values."""
    attr_defs = {a["name"]: a for a in opdef["attrs"]}
    for k in attrs:
        if k not in attr_defs:
            raise TypeError("%s has no attr '%s'" % (opdef["name"], k))
    inputs = _convert_inputs(opdef, values, attrs)
    # A count attr shared by several list inputs (DynamicStitch's N) is set
    # from the first list, as TF's op_def_library does; a mismatch in the
    # others is then the registry's error, naming the node.
    attrs = dict(attrs)
    for arg in opdef["inputs"]:
        n = arg["number_attr"]
        if n and n not in attrs and isinstance(values.get(arg["name"]), (list, tuple)):
            attrs[n] = len(values[arg["name"]])
    graph = inputs[0].graph if inputs else framework.get_default_graph()
    for t in inputs:
        if t.graph is not graph:
            raise ValueError("%s: inputs from different graphs (%s)" % (opdef["name"], t.name))
    converted = {k: _attr_value(attr_defs[k], v) for k, v in attrs.items()}
    op = graph._add_op(opdef["name"], inputs, converted, name)
    return _results(opdef, op)


def _inferred_attrs(opdef):
    names = set()
    for arg in opdef["inputs"]:
        names.update(n for n in (arg["type_attr"], arg["number_attr"], arg["type_list_attr"]) if n)
    return names


def _signature(opdef):
    """(positional parameter names, keyword attr names)."""
    inferred = _inferred_attrs(opdef)
    positional = [a["name"] for a in opdef["inputs"]]
    required = [a["name"] for a in opdef["attrs"]
                if not a["has_default"] and a["name"] not in inferred]
    optional = [a["name"] for a in opdef["attrs"] if a["name"] not in required]
    return positional + required, optional


def make_op_function(opdef):
    positional, optional = _signature(opdef)
    input_names = {a["name"] for a in opdef["inputs"]}
    fn_name = snake_name(opdef["name"])

    def op_function(*args, **kwargs):
        name = kwargs.pop("name", None)
        if len(args) > len(positional):
            raise TypeError("%s takes at most %d positional arguments (%s), got %d"
                            % (fn_name, len(positional), ", ".join(positional), len(args)))
        given = dict(zip(positional, args))
        for k, v in kwargs.items():
            if k in given:
                raise TypeError("%s got two values for '%s'" % (fn_name, k))
            given[k] = v
        missing = [p for p in positional if p not in given]
        if missing:
            raise TypeError("%s is missing %s" % (fn_name, ", ".join(missing)))
        values = {k: v for k, v in given.items() if k in input_names}
        attrs = {k: v for k, v in given.items() if k not in input_names}
        return apply_op(opdef, values, attrs, name)

    op_function.__name__ = fn_name
    op_function.__qualname__ = fn_name
    op_function.__doc__ = "%s(%s) -- the op %s.\n\n%s" % (
        fn_name, ", ".join(positional + [o + "=..." for o in optional] + ["name=None"]),
        opdef["name"], opdef["doc"])
    op_function.op_def = opdef
    return op_function


def generate():
    """A module-like namespace with a function per op of the registry."""
    raw = types.ModuleType("tfd.raw_ops", "Every op of the registry as a function.")
    raw.OP_DEFS = {}
    for opdef in _tfd.op_defs():
        raw.OP_DEFS[opdef["name"]] = opdef
        setattr(raw, snake_name(opdef["name"]), make_op_function(opdef))
    return raw


raw_ops = generate()
