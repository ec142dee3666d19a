"""Graph building in TF1's words: default graph and Graph contexts, name
scopes, devices, control dependencies, operators, errors at the call."""
import numpy as np
import pytest

import tfd


def test_nodes_go_to_the_default_graph_or_the_one_made_default():
    a = tfd.constant(1.0, name="a")
    g = tfd.Graph()
    with g.as_default():
        b = tfd.constant(2.0, name="b")
        assert tfd.get_default_graph() is g
    assert a.graph is tfd.get_default_graph()
    assert b.graph is g
    assert [op.name for op in g.get_operations()] == ["b"]
    with pytest.raises(ValueError, match="different graphs"):
        tfd.add(a, b)


def test_name_scopes_nest_and_repeat_as_tf_does():
    with tfd.name_scope("layer"):
        x = tfd.constant(1.0, name="x")
        with tfd.name_scope("inner") as scope:
            y = tfd.identity(x)
    with tfd.name_scope("layer") as again:
        z = tfd.constant(1.0, name="x")
    assert scope == "layer/inner/"
    assert x.op.name == "layer/x"
    assert y.op.name == "layer/inner/Identity"
    assert again == "layer_1/"
    assert z.name == "layer_1/x:0"
    assert tfd.constant(2.0, name="x").op.name == "x"


def test_devices_merge_as_nested_tf_device_blocks():
    with tfd.device("/job:ps"):
        with tfd.device("/task:1"):
            a = tfd.constant(1.0)
        with tfd.device(None):
            b = tfd.constant(1.0)
    assert "/job:ps" in a.op.device and "/task:1" in a.op.device
    assert b.op.device == ""


def test_a_device_function_places_each_op_as_tf1s():
    """The multi-tower pattern of TF1 code: a function of the op puts
    variables on the ps and the rest on the tower's device. Blocks apply
    innermost first, as TF1's: a function sees what the blocks inside it
    chose, and a device string around it fills only what is unset."""
    def assign_to_device(op):
        return "/job:ps/task:0" if op.node_def.op == "VariableV2" else "/job:worker/task:1"

    seen = []
    with tfd.device("/job:worker/task:3"):
        with tfd.device(assign_to_device):
            w = tfd.Variable(1.0, name="w")
            y = w * 2.0
        with tfd.device(lambda op: seen.append((op.name, op.type, op.device))):
            c = tfd.constant(1.0, name="c")
    assert ("/job:ps" in w.op.device and "/task:0" in w.op.device)
    assert ("/job:worker" in y.op.device and "/task:1" in y.op.device)
    assert seen == [("c", "Const", "")]
    assert c.op.device == "/job:worker/task:3"  # None chose nothing; the string around fills it

    def on_cpu(op):
        return "/cpu:0"

    asked = []

    def outer_fn(op):
        asked.append(op.device)
        return op.device + "/task:2" if op.type == "Const" else "/job:ps"

    with tfd.device(outer_fn):
        with tfd.device("/job:worker"):
            with tfd.device(on_cpu):
                d = tfd.constant(1.0, name="d")
            with tfd.device(None):
                e = tfd.constant(1.0, name="e")
    # on_cpu first, then "/job:worker" fills the job, then outer_fn sees both.
    assert asked == ["/job:worker/device:CPU:0"]
    assert d.op.device == "/job:worker/task:2/device:CPU:0"
    assert e.op.device == ""  # None forgets every block around it
    with pytest.raises(TypeError, match="not a device string"):
        with tfd.device(lambda op: 7):
            tfd.constant(1.0)


def test_control_dependencies_are_control_inputs():
    a = tfd.constant(1.0, name="a")
    with tfd.control_dependencies([a]):
        b = tfd.constant(2.0, name="b")
    c = tfd.add(a, b, name="c")
    assert [op.name for op in b.op.control_inputs] == ["a"]
    assert [t.name for t in c.op.inputs] == ["a:0", "b:0"]
    assert c.op.inputs[0] is a.op.outputs[0]


def test_operators_build_the_ops_tf1_builds():
    x = tfd.placeholder(tfd.float32, [2, 2], name="x")
    ops = {"+": x + 1, "-": 1 - x, "*": x * x, "/": x / 2, "@": x @ x, "neg": -x,
           "<": x < 0.5, ">=": x >= 0.5, "[]": x[0, 1:], "**": x ** 2.0}
    types = {k: v.op.type for k, v in ops.items()}
    assert types == {"+": "Add", "-": "Sub", "*": "Mul", "/": "Div", "@": "MatMul",
                     "neg": "Neg", "<": "Less", ">=": "GreaterEqual", "[]": "StridedSlice",
                     "**": "Pow"}
    assert ops["[]"].shape.as_list() == [1]
    assert ops["<"].dtype == tfd.bool
    # A Python number takes the tensor's dtype, as in TF.
    i = tfd.placeholder(tfd.int64, [3])
    assert (i * 2).dtype == tfd.int64


def test_shapes_are_inferred_at_graph_time():
    x = tfd.placeholder(tfd.float32, [None, 784])
    w = tfd.zeros([784, 10])
    y = tfd.matmul(x, w)
    assert y.shape.as_list() == [None, 10]
    assert tfd.reduce_sum(y, axis=1).shape.as_list() == [None]


def test_set_shape_merges_into_the_static_shape_for_later_ops():
    x = tfd.placeholder(tfd.float32, [None, None])
    first = x.op.outputs[0]           # a handle made before set_shape
    x.set_shape([None, 784])
    assert first.shape.as_list() == x.get_shape().as_list() == [None, 784]
    assert tfd.matmul(x, tfd.zeros([784, 10])).shape.as_list() == [None, 10]
    x.set_shape(tfd.TensorShape([32, None]))   # merged: what both say
    assert x.shape.as_list() == [32, 784]
    with pytest.raises(ValueError, match="784"):
        x.set_shape([32, 100])
    assert x.shape.as_list() == [32, 784]


def test_a_bad_node_raises_at_its_line_and_the_graph_goes_on():
    a = tfd.placeholder(tfd.float32, [2, 3], name="a")
    b = tfd.placeholder(tfd.float32, [4, 5], name="b")
    with pytest.raises(tfd.errors.InvalidArgumentError) as e:
        tfd.matmul(a, b, name="bad")
    assert "bad" in str(e.value)
    assert e.value.code == "INVALID_ARGUMENT"
    c = tfd.matmul(a, tfd.transpose(a), name="good")
    assert c.shape.as_list() == [2, 2]
    assert "bad" not in [op.name for op in tfd.get_default_graph().get_operations()]


def test_an_unknown_op_is_not_found():
    g = tfd.get_default_graph()
    with pytest.raises(tfd.errors.NotFoundError) as e:
        g._add_op("NoSuchOp", [], {})
    assert e.value.code == "NOT_FOUND"


def test_a_dtype_mismatch_names_the_node():
    i = tfd.placeholder(tfd.int32, [2])
    f = tfd.placeholder(tfd.float32, [2])
    with pytest.raises(tfd.errors.InvalidArgumentError, match="mixed"):
        tfd.raw_ops.add(i, f, name="mixed")


def test_replica_device_setter_puts_variables_on_ps_tasks():
    with tfd.device(tfd.train.replica_device_setter(ps_tasks=2)):
        w = tfd.Variable(np.zeros((2, 2), np.float32), name="w")
        b = tfd.Variable(np.zeros(2, np.float32), name="b")
        y = tfd.matmul(tfd.ones([1, 2]), w) + b
    assert "/job:ps" in w.device and "/task:0" in w.device
    assert "/job:ps" in b.device and "/task:1" in b.device
    assert "/job:worker" in y.op.device
    assert w.initializer.device == w.op.device


def test_as_graph_def_lists_the_nodes_and_serializes():
    tfd.constant(1.0, name="c")
    gd = tfd.get_default_graph().as_graph_def()
    assert [n.name for n in gd.node] == ["c"]
    assert len(gd.SerializeToString()) > 0
    text = tfd.get_default_graph().as_graph_def(as_text=True).SerializeToString()
    assert b"Const" in text


def test_a_python_scalar_is_a_scalar_constant():
    assert tfd.constant(1).shape.as_list() == []
    assert tfd.constant(2.5, tfd.float64).shape.as_list() == []
    assert tfd.constant(0, shape=[]).shape.as_list() == []
    x = tfd.placeholder(tfd.float32, [None, 10])
    assert tfd.argmax(x, 1).shape.as_list() == [None]
