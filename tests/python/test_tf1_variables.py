"""TF1 behaviour of variables, variable scopes, sessions, Saver and the
optimizers' arguments that a TF1 program relies on: initial values that
read other variables, initialized_value(), variable_scope's reuse and
default names, get_variable's tensor initializers, InteractiveSession,
feeds, Variable.load."""
import numpy as np
import pytest

import tfd


# Initial values that read other variables ----------------------------------
def _chain():
    w = tfd.Variable(tfd.random_normal([3]), name="w")
    w2 = tfd.Variable(w * 2.0, name="w2")
    w3 = tfd.Variable(w2 + 1.0, name="w3")
    return w, w2, w3


def test_an_initial_value_reading_a_variable_initializes_with_it_every_time():
    w, w2, w3 = _chain()
    init = tfd.global_variables_initializer()
    for _ in range(20):
        with tfd.Session() as sess:
            sess.run(init)
            a, b, c = sess.run([w, w2, w3])
        np.testing.assert_allclose(b, 2 * a)
        np.testing.assert_allclose(c, 2 * a + 1)


def test_initializing_a_dependent_variable_alone_leaves_the_other_alone():
    w, w2, _ = _chain()
    with tfd.Session() as sess:
        sess.run(tfd.global_variables_initializer())
        a = sess.run(w)
        sess.run(w2.initializer)  # re-initialized from w's value; w is not assigned
        np.testing.assert_array_equal(sess.run(w), a)
        np.testing.assert_allclose(sess.run(w2), 2 * a)
    with tfd.Session() as sess:
        sess.run(w2.initializer)  # from w's initial value: w stays uninitialized
        assert sess.run(w2).shape == (3,)
        with pytest.raises(tfd.errors.FailedPreconditionError):
            sess.run(w)


def test_initialized_value_and_initial_value():
    w = tfd.Variable(tfd.constant([1.0, 2.0]), name="w")
    v = tfd.Variable(w.initialized_value() * 3.0, name="v")
    assert w.initial_value.op.type == "Const"
    with tfd.Session() as sess:
        np.testing.assert_array_equal(sess.run(w.initialized_value()), [1.0, 2.0])
        sess.run(tfd.variables_initializer([v, w]))
        sess.run(w.assign([5.0, 6.0]))
        np.testing.assert_array_equal(sess.run(w.initialized_value()), [5.0, 6.0])
        np.testing.assert_array_equal(sess.run(v), [3.0, 6.0])


def test_a_variable_read_as_the_initial_value_itself():
    w = tfd.get_variable("w", [2, 2], initializer=tfd.random_uniform_initializer())
    copy = tfd.Variable(w, name="copy")
    total = tfd.Variable(tfd.reduce_sum(w) + tfd.reduce_sum(copy), name="total")
    for _ in range(5):
        with tfd.Session() as sess:
            sess.run(tfd.global_variables_initializer())
            a, b, t = sess.run([w, copy, total])
        np.testing.assert_array_equal(a, b)
        np.testing.assert_allclose(t, 2 * a.sum(), rtol=1e-6)


# variable_scope ----------------------------------------------------------------
def test_reuse_variables_on_the_scope_and_at_the_top():
    with tfd.variable_scope("m") as scope:
        a = tfd.get_variable("a", [3])
        scope.reuse_variables()
        assert tfd.get_variable("a", [3]) is a
        with tfd.variable_scope("inner", reuse=False):  # reuse is inherited, as TF1's
            assert tfd.get_variable_scope().reuse is True
    top = tfd.get_variable("top", [1])
    tfd.get_variable_scope().reuse_variables()
    assert tfd.get_variable("top", [1]) is top
    with tfd.variable_scope(scope):
        assert tfd.get_variable("a") is a


def test_sharing_checks_shape_and_dtype():
    with tfd.variable_scope("m"):
        tfd.get_variable("a", [3])
        tfd.get_variable("i", [2], dtype=tfd.int32, initializer=tfd.zeros_initializer())
    with tfd.variable_scope("m", reuse=True):
        with pytest.raises(ValueError, match=r"Trying to share variable m/a, but specified "
                                             r"shape \(4,\) and found shape \(3,\)"):
            tfd.get_variable("a", [4])
        with pytest.raises(ValueError, match="specified dtype int32 and found dtype float32"):
            tfd.get_variable("a", [3], dtype=tfd.int32)
        with pytest.raises(ValueError, match="specified dtype float32 and found dtype int32"):
            tfd.get_variable("i", dtype=tfd.float32)
        assert tfd.get_variable("a", [None]).name == "m/a:0"
        assert tfd.get_variable("i").dtype == tfd.int32


def test_default_names_are_made_unique_and_start_again_in_a_reentered_scope():
    names = []
    for _ in range(2):
        with tfd.variable_scope(None, default_name="blk") as s:
            names.append(s.name)
    assert names == ["blk", "blk_1"]
    inner = []
    for _ in range(2):
        with tfd.variable_scope("model", reuse=tfd.AUTO_REUSE):
            with tfd.variable_scope(None, default_name="dense"):
                inner.append(tfd.get_variable("w", [2]))
    assert inner[0] is inner[1] and inner[0].name == "model/dense/w:0"
    with pytest.raises(ValueError, match="reuse=True"):
        with tfd.variable_scope(None, default_name="x", reuse=True):
            pass


def test_a_reentered_scope_opens_a_new_name_scope_for_its_ops():
    with tfd.variable_scope("layer"):
        w = tfd.get_variable("w", [2])
        y = tfd.identity(w, name="y")
    with tfd.variable_scope("layer", reuse=True) as s:
        w2 = tfd.get_variable("w", [2])
        y2 = tfd.identity(w2, name="y")
    assert w2 is w
    assert (y.name, y2.name, s.original_name_scope) == ("layer/y:0", "layer_1/y:0", "layer_1/")
    with tfd.variable_scope(s):  # a scope object goes back to its own name scope
        assert tfd.identity(w, name="z").name == "layer_1/z:0"


# get_variable's initializer ----------------------------------------------------
def test_a_tensor_or_a_value_as_the_initializer():
    ci = tfd.get_variable("ci", initializer=tfd.constant([1.0, 2.0]))
    li = tfd.get_variable("li", initializer=[[1, 2], [3, 4]])
    ni = tfd.get_variable("ni", initializer=np.arange(3, dtype=np.float64), dtype=tfd.float32)
    fi = tfd.get_variable("fi", [2], initializer=lambda: tfd.ones([2]))
    assert (ci.shape.dims, li.dtype, ni.dtype) == ([2], tfd.int32, tfd.float32)
    with tfd.Session() as sess:
        sess.run(tfd.global_variables_initializer())
        out = sess.run([ci, li, ni, fi])
    np.testing.assert_array_equal(out[0], [1.0, 2.0])
    np.testing.assert_array_equal(out[1], [[1, 2], [3, 4]])
    np.testing.assert_array_equal(out[2], [0.0, 1.0, 2.0])
    np.testing.assert_array_equal(out[3], [1.0, 1.0])


def test_a_constant_initializer_with_a_shape_or_another_dtype_is_refused():
    with pytest.raises(ValueError, match="do not specify shape"):
        tfd.get_variable("a", [2], initializer=tfd.constant([1.0, 2.0]))
    with pytest.raises(ValueError, match="do not specify shape"):
        tfd.get_variable("b", [2], initializer=[1.0, 2.0])
    with pytest.raises(ValueError, match="'int32' and explicit dtype 'float32'"):
        tfd.get_variable("c", initializer=tfd.constant([1, 2]), dtype=tfd.float32)
    with pytest.raises(ValueError, match=r"gave shape \[2\], not \[3\]"):
        tfd.get_variable("d", [3], initializer=lambda: tfd.ones([2]))


# Variable.load -----------------------------------------------------------------
def test_load_assigns_without_adding_ops_per_call():
    w = tfd.Variable(tfd.zeros([2]), name="w")
    with tfd.Session() as sess:
        sess.run(w.initializer)
        w.load([1.0, 2.0], sess)
        nodes = tfd.get_default_graph()._builder.num_nodes()
        with sess.as_default():
            w.load(np.array([3.0, 4.0]))
        assert tfd.get_default_graph()._builder.num_nodes() == nodes
        np.testing.assert_array_equal(sess.run(w), [3.0, 4.0])
        with pytest.raises(ValueError, match="shape"):
            w.load([1.0, 2.0, 3.0], sess)
    with pytest.raises(ValueError, match="no session"):
        w.load([1.0, 2.0])


# Sessions ----------------------------------------------------------------------
def test_an_interactive_session_is_the_default_until_closed():
    w = tfd.Variable(tfd.constant([1.0, 2.0]), name="w")
    sess = tfd.InteractiveSession()
    try:
        assert tfd.get_default_session() is sess
        w.initializer.run()
        np.testing.assert_array_equal((w * 2.0).eval(), [2.0, 4.0])
        with tfd.Session() as other:
            assert tfd.get_default_session() is other
        assert tfd.get_default_session() is sess
    finally:
        sess.close()
    assert tfd.get_default_session() is None
    with tfd.InteractiveSession() as sess:
        assert tfd.get_default_session() is sess
    assert tfd.get_default_session() is None


def test_a_tensor_fed_as_a_value_is_a_type_error_naming_the_key():
    x = tfd.placeholder(tfd.float32, [1], name="x")
    y = x * 2.0
    with tfd.Session() as sess:
        with pytest.raises(TypeError, match=r"cannot be a tfd.Tensor object.*fed to x:0"):
            sess.run(y, {x: tfd.constant([1.0])})
        v = tfd.Variable([1.0], name="v")
        with pytest.raises(TypeError, match="fed to x:0"):
            sess.run(y, {"x:0": v})
        np.testing.assert_array_equal(sess.run(y, {x: [1.5]}), [3.0])


# train: optimizers' arguments, Saver's --------------------------------------------
@pytest.mark.parametrize("make", [
    lambda lr: tfd.train.GradientDescentOptimizer(lr),
    lambda lr: tfd.train.MomentumOptimizer(lr, 0.9),
    lambda lr: tfd.train.AdamOptimizer(lr),
    lambda lr: tfd.train.AdagradOptimizer(lr),
    lambda lr: tfd.train.RMSPropOptimizer(lr),
    lambda lr: tfd.train.FtrlOptimizer(lr),
])
def test_a_tensor_learning_rate_trains_as_the_same_number_does(make):
    """TF1's optimizers take a tensor learning rate: a constant, a variable
    or a fed placeholder of the number's value moves the variables exactly
    as the number does, float64 ones included (the rate is cast; 1/16 is
    the same number in both dtypes)."""
    def trained(lr_of):
        tfd.reset_default_graph()
        w = tfd.Variable(np.array([1.0, -2.0], np.float32), name="w")
        d = tfd.Variable(np.array([0.5], np.float64), name="d")
        loss = tfd.reduce_sum(tfd.square(w)) + tfd.cast(tfd.reduce_sum(tfd.square(d)),
                                                        tfd.float32)
        lr, feed = lr_of()
        train = make(lr).minimize(loss)
        with tfd.Session() as sess:
            sess.run(tfd.global_variables_initializer())
            for _ in range(3):
                sess.run(train, feed)
            return sess.run([w, d])

    def placeholder():
        p = tfd.placeholder(tfd.float32, [])
        return p, {p: np.float32(0.0625)}

    want = trained(lambda: (0.0625, None))
    for lr_of in (lambda: (tfd.constant(0.0625), None),
                  lambda: (tfd.Variable(0.0625, name="lr", trainable=False), None),
                  placeholder):
        got = trained(lr_of)
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
    assert not np.array_equal(want[0], [1.0, -2.0])  # it did train


def test_a_learning_rate_tensor_must_be_a_float_and_only_the_learning_rate_may_be_one():
    with pytest.raises(TypeError, match="learning rate .* is int32, not a floating-point"):
        tfd.train.GradientDescentOptimizer(tfd.constant(1))
    with pytest.raises(TypeError, match="MomentumOptimizer: a tensor momentum is not supported; "
                                        "only the learning rate may be a tensor"):
        tfd.train.MomentumOptimizer(0.1, tfd.constant(0.9))
    w = tfd.Variable([1.0], name="w")
    with pytest.raises(tfd.errors.InvalidArgumentError, match="must be a floating-point scalar"):
        tfd.train.GradientDescentOptimizer(tfd.constant([0.1, 0.2])).minimize(
            tfd.reduce_sum(w))


def test_saver_takes_tf1_arguments_and_refuses_what_the_tasks_decide():
    tfd.train.Saver(sharded=True, name="save", allow_empty=True, write_version=2,
                    keep_checkpoint_every_n_hours=10000.0, defer_build=True)
    with pytest.raises(ValueError, match=r"max_to_keep=3 .*--checkpoint-keep"):
        tfd.train.Saver(max_to_keep=3)
    with pytest.raises(ValueError, match="--checkpoint-keep"):
        tfd.train.Saver(max_to_keep=None)
    with pytest.raises(ValueError, match="none by age"):
        tfd.train.Saver(keep_checkpoint_every_n_hours=1)
    with pytest.raises(ValueError, match="--checkpoint-dir"):
        tfd.train.Saver(filename="model.ckpt")
    with pytest.raises(ValueError, match="var_list"):
        tfd.train.Saver(var_list=[])


def _dependent_on_two_ps():
    with tfd.device(tfd.train.replica_device_setter(ps_tasks=2)):
        w = tfd.Variable(tfd.random_normal([3]), name="w")       # ps:0
        w2 = tfd.Variable(w * 2.0, name="w2")                    # ps:1
        w3 = tfd.Variable(w2 + w, name="w3")                     # ps:0
    assert w.device != w2.device
    return w, w2, w3


@pytest.mark.parametrize("attempt", range(3))
def test_dependent_initial_values_on_a_fresh_cluster(cluster_factory, attempt):
    cluster = cluster_factory({"ps": 2, "worker": 1})
    w, w2, w3 = _dependent_on_two_ps()
    with tfd.Session(cluster.address("worker", 0), timeout=60) as sess:
        sess.run(tfd.global_variables_initializer())
        a, b, c = sess.run([w, w2, w3])
        np.testing.assert_allclose(b, 2 * a)
        np.testing.assert_allclose(c, 3 * a, rtol=1e-6)
        # What the chief does when w was restored and w2 is new: w2's Assign alone.
        w.load([1.0, 2.0, 3.0], sess)
        sess.run(w2.initializer)
        np.testing.assert_array_equal(sess.run([w, w2]), [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0]])


def test_get_variable_collections_make_a_local_variable_or_add_to_others():
    counter = tfd.get_variable("counter", [], initializer=tfd.zeros_initializer(),
                               trainable=False, collections=[tfd.GraphKeys.LOCAL_VARIABLES])
    w = tfd.get_variable("w", [2], collections=[tfd.GraphKeys.GLOBAL_VARIABLES, "mine"])
    assert tfd.local_variables() == [counter] and tfd.global_variables() == [w]
    assert tfd.get_collection("mine") == [w]
    with tfd.Session() as sess:
        sess.run(tfd.global_variables_initializer())
        sess.run(tfd.local_variables_initializer())
        assert sess.run(counter.assign_add(1.0)) == 1.0
    with pytest.raises(ValueError, match="neither GLOBAL_VARIABLES nor LOCAL_VARIABLES"):
        tfd.get_variable("nowhere", [1], collections=["mine"])
    with pytest.raises(ValueError, match="needs a tfd initializer"):
        tfd.get_variable("from_value", initializer=[1.0],
                         collections=[tfd.GraphKeys.LOCAL_VARIABLES])
