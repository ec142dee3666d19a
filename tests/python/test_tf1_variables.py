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
