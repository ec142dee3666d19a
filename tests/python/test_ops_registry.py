"""Every op `tfctl ops` lists is a Python function (tfd.raw_ops.<snake name>,
generated from the registry), and calling it with inputs of the dtypes
the op allows builds a node of that op."""
import inspect
import json
import os
import subprocess

import numpy as np
import pytest

import tfd


def registry_ops():
    out = subprocess.run([os.environ["TFCTL"], "ops", "--output", "json"], check=True,
                         capture_output=True, text=True, timeout=60).stdout
    return json.loads(out)["ops"]


OPS = registry_ops()


def test_the_walk_sees_the_whole_registry():
    assert len(OPS) == len(tfd.raw_ops.OP_DEFS)
    assert {op["name"] for op in OPS} == set(tfd.raw_ops.OP_DEFS)


@pytest.mark.parametrize("name,snake", [("MatMul", "mat_mul"), ("Conv2D", "conv2d"),
                                        ("L2Loss", "l2_loss"), ("FIFOQueue", "fifo_queue"),
                                        ("ApplyRMSProp", "apply_rms_prop"), ("_Recv", "_recv"),
                                        ("BiasAddGrad", "bias_add_grad"), ("LRN", "lrn")])
def test_names_are_tf_snake_case(name, snake):
    assert tfd.snake_name(name) == snake


def _dtype_for(attr):
    allowed = attr.get("allowed_types") or []
    if not allowed or "float32" in allowed:
        return "float32"
    return allowed[0]


def _attr_value(attr, dtype_of):
    t, name = attr["type"], attr["name"]
    if t == "type":
        return dtype_of(name)
    if t == "int":
        return max(1, attr.get("minimum") or 0)
    if t == "float":
        return 0.5
    if t == "bool":
        return False
    if t == "string":
        return "SAME" if name == "padding" else "NHWC" if name == "data_format" else "x"
    if t == "shape":
        return [2]
    if t == "tensor":
        return np.zeros(2, np.float32)
    if t == "list(int)":
        return [1, 1, 1, 1] if name in ("strides", "ksize", "dilations") else [1]
    if t == "list(type)":
        return ["float32"]
    if t == "list(shape)":
        return [[2]]
    if t == "list(string)":
        return ["x"]
    if t == "list(float)":
        return [0.5]
    raise AssertionError("no test value for attr type " + t)


def _call_args(op):
    """Inputs (placeholders of unknown shape, variables for references) and
    the attrs without a default, of the dtypes the op allows."""
    attrs = {a["name"]: a for a in op["attrs"]}

    def dtype_of(attr_name):
        return _dtype_for(attrs[attr_name]) if attr_name in attrs else "float32"

    def tensor(arg, dtype):
        if arg["ref"] and dtype == "string":  # a queue's, an accumulator's, a dataset's handle
            return tfd.raw_ops.fifo_queue(component_types=[tfd.float32])
        if arg["ref"]:
            return tfd.Variable(np.zeros((2, 2), tfd.as_dtype(dtype).as_numpy_dtype))
        return tfd.placeholder(tfd.as_dtype(dtype))

    fn = getattr(tfd.raw_ops, tfd.snake_name(op["name"]))
    opdef = fn.op_def
    values = {}
    for arg, spec in zip(opdef["inputs"], op["inputs"]):
        spec = dict(spec)
        dtype = arg["type"] or dtype_of(arg["type_attr"] or "T")
        if arg["number_attr"]:
            values[arg["name"]] = [tensor(spec, dtype) for _ in range(2)]
        elif arg["type_list_attr"]:
            values[arg["name"]] = [tensor(spec, "float32")]
        else:
            values[arg["name"]] = tensor(spec, dtype)
    inferred = {n for a in opdef["inputs"]
                for n in (a["type_attr"], a["number_attr"], a["type_list_attr"]) if n}
    for a in op["attrs"]:
        if a["default"] is None and a["name"] not in inferred:
            values[a["name"]] = _attr_value(a, dtype_of)
    return fn, values


@pytest.mark.parametrize("op", OPS, ids=[op["name"] for op in OPS])
def test_every_op_is_callable_and_builds_its_node(op):
    fn = getattr(tfd.raw_ops, tfd.snake_name(op["name"]), None)
    assert callable(fn), "no function for op " + op["name"]
    assert getattr(tfd, tfd.snake_name(op["name"])) is not None
    fn, values = _call_args(op)
    result = fn(name="walked", **values)
    op_made = result if isinstance(result, tfd.Operation) else (
        result[0] if isinstance(result, list) else result).op
    assert op_made.type == op["name"]
    assert op_made.name == "walked"
    assert inspect.getdoc(fn)
