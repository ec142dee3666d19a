"""Variables, gradients (checked against finite differences), optimizers with
minimize and apply_gradients, the graph file tfctl takes, moving averages
and the NaN hook."""
import json
import os
import subprocess

import numpy as np
import pytest

import tfd
from numeric_helpers import numeric_gradient


def test_variables_initialize_and_keep_their_value_across_runs():
    w = tfd.Variable(tfd.constant([1.0, 2.0]), name="w")
    z = tfd.get_variable("z", shape=[2, 3], initializer=tfd.zeros_initializer())
    c = tfd.get_variable("c", shape=[2], initializer=tfd.constant_initializer(0.5))
    with tfd.Session() as sess:
        sess.run(tfd.global_variables_initializer())
        sess.run(w.assign_add([1.0, 1.0]))
        out = sess.run([w, z, c])
    np.testing.assert_array_equal(out[0], [2.0, 3.0])
    np.testing.assert_array_equal(out[1], np.zeros((2, 3)))
    np.testing.assert_array_equal(out[2], [0.5, 0.5])
    assert [v.name for v in tfd.global_variables()] == ["w:0", "z:0", "c:0"]


def test_variable_scopes_name_and_reuse_variables():
    with tfd.variable_scope("layer1"):
        a = tfd.get_variable("w", shape=[2])
    with tfd.variable_scope("layer1", reuse=True):
        b = tfd.get_variable("w", shape=[2])
    assert a is b
    assert a.name == "layer1/w:0"
    with tfd.variable_scope("layer1"):
        with pytest.raises(ValueError, match="exists"):
            tfd.get_variable("w", shape=[2])


def test_random_initializers_draw_within_their_bounds():
    u = tfd.get_variable("u", shape=[1000], initializer=tfd.random_uniform_initializer(-2, -1))
    g = tfd.get_variable("g", shape=[100, 100])  # Glorot uniform, TF's default
    with tfd.Session() as sess:
        sess.run(tfd.global_variables_initializer())
        uu, gg = sess.run([u, g])
    assert uu.min() >= -2 and uu.max() <= -1 and uu.std() > 0
    limit = np.sqrt(6.0 / 200)
    assert np.abs(gg).max() <= limit and gg.std() > 0


def test_gradients_match_finite_differences():
    rng = np.random.default_rng(7)
    x0 = rng.normal(size=(3, 4))
    w0 = rng.normal(size=(4, 2))
    x = tfd.placeholder(tfd.float64, [3, 4], name="x")
    w = tfd.placeholder(tfd.float64, [4, 2], name="w")
    y = tfd.reduce_sum(tfd.tanh(tfd.matmul(x, w)) ** 2.0 + tfd.sigmoid(x[:, :2] * w[0]))
    dx, dw = tfd.gradients(y, [x, w])
    with tfd.Session() as sess:
        gx, gw = sess.run([dx, dw], {x: x0, w: w0})

        def f_x(v):
            return sess.run(y, {x: v, w: w0})

        def f_w(v):
            return sess.run(y, {x: x0, w: v})
        np.testing.assert_allclose(gx, numeric_gradient(f_x, x0), rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(gw, numeric_gradient(f_w, w0), rtol=1e-5, atol=1e-7)


def test_gradients_of_an_unrelated_x_are_none():
    x = tfd.placeholder(tfd.float32, [2])
    other = tfd.placeholder(tfd.float32, [2])
    assert tfd.gradients(tfd.reduce_sum(x * 2.0), [x, other])[1] is None


def test_gradient_descent_minimize_applies_w_minus_lr_times_grad():
    w = tfd.Variable(np.array([1.0, -2.0], np.float32), name="w")
    loss = tfd.reduce_sum(w * w)
    step = tfd.train.get_or_create_global_step()
    train = tfd.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
    with tfd.Session() as sess:
        sess.run(tfd.global_variables_initializer())
        sess.run(train)
        np.testing.assert_allclose(sess.run(w), [1.0 - 0.1 * 2.0, -2.0 + 0.1 * 4.0], rtol=1e-6)
        assert sess.run(step) == 1


@pytest.mark.parametrize("optimizer", [
    tfd.train.GradientDescentOptimizer(0.1),
    tfd.train.MomentumOptimizer(0.05, 0.9),
    tfd.train.AdamOptimizer(0.1),
], ids=["sgd", "momentum", "adam"])
def test_optimizers_fit_a_line(optimizer):
    rng = np.random.default_rng(1)
    xs = rng.normal(size=(64, 1)).astype(np.float32)
    ys = 3.0 * xs + 0.5
    x = tfd.placeholder(tfd.float32, [None, 1])
    y = tfd.placeholder(tfd.float32, [None, 1])
    w = tfd.Variable(np.zeros((1, 1), np.float32))
    b = tfd.Variable(np.zeros(1, np.float32))
    loss = tfd.reduce_mean(tfd.square(x @ w + b - y))
    train = optimizer.minimize(loss)
    with tfd.Session() as sess:
        sess.run(tfd.global_variables_initializer())
        first = sess.run(loss, {x: xs, y: ys})
        for _ in range(200):
            sess.run(train, {x: xs, y: ys})
        last = sess.run(loss, {x: xs, y: ys})
    assert last < first * 1e-3


def test_compute_and_apply_gradients_separately():
    w = tfd.Variable(np.array([2.0], np.float32))
    loss = tfd.reduce_sum(w * w)
    opt = tfd.train.GradientDescentOptimizer(0.25)
    grads_and_vars = opt.compute_gradients(loss)
    assert [v for _, v in grads_and_vars] == [w]
    train = opt.apply_gradients([(g * 2.0, v) for g, v in grads_and_vars])
    with tfd.Session() as sess:
        sess.run(tfd.global_variables_initializer())
        sess.run(train)
        np.testing.assert_allclose(sess.run(w), [2.0 - 0.25 * 8.0])


def test_write_graph_gives_a_file_tfctl_validates_and_runs(tmp_path):
    w = tfd.Variable(np.array([1.0, 2.0], np.float32), name="w")
    loss = tfd.reduce_sum(w * w, name="loss")
    tfd.train.GradientDescentOptimizer(0.5).minimize(loss, name="train")
    tfd.global_variables_initializer()
    path = tmp_path / "graph.capnp"
    tfd.write_graph(str(path))
    tfctl = os.environ["TFCTL"]
    subprocess.run([tfctl, "graph", "validate", str(path)], check=True, capture_output=True,
                   timeout=60)

    def loss_after(steps):
        run = subprocess.run([tfctl, "run", str(path), "--init", "init", "--target", "train",
                              "--fetch", "loss", "--steps", str(steps), "--output", "json"],
                             check=True, capture_output=True, text=True, timeout=60)
        return json.loads(run.stdout)["fetches"]["loss"]["values"]
    # sum(w^2) at [1, 2] is 5; one step of lr 0.5 takes w to w - 0.5 * 2w = 0.
    assert loss_after(1) == 5.0
    assert loss_after(2) == 0.0


def test_exponential_moving_average_follows_its_variables_as_tf1s():
    w = tfd.Variable([1.0, -2.0], name="w")
    b = tfd.Variable(3.0, dtype=tfd.float64, name="b")
    step = tfd.placeholder(tfd.int32, [], name="step")
    ema = tfd.train.ExponentialMovingAverage(0.9, num_updates=step)
    update = ema.apply([w, b])
    assert ema.average(w).op.name == ema.average_name(w) == "w/ExponentialMovingAverage"
    assert not ema.average(w).trainable and ema.average(b).dtype == tfd.float64
    assert tfd.get_collection(tfd.GraphKeys.MOVING_AVERAGE_VARIABLES) == [w, b]
    assert ema.variables_to_restore() == {"w/ExponentialMovingAverage": w,
                                          "b/ExponentialMovingAverage": b}
    shadow_w, shadow_b = np.array([1.0, -2.0]), 3.0  # the reference, in float64
    with tfd.Session() as sess:
        sess.run(tfd.global_variables_initializer())
        for n, (dw, db) in enumerate([(1.0, 0.5), (-4.0, 2.0), (0.25, -1.0)]):
            sess.run([w.assign_add([dw, dw]), b.assign_add(db)])
            sess.run(update, {step: n * 10})
            decay = min(0.9, (1.0 + n * 10) / (10.0 + n * 10))
            shadow_w -= (1 - np.float32(decay)) * (shadow_w - sess.run(w))
            shadow_b -= (1 - np.float32(decay)) * (shadow_b - sess.run(b))
            np.testing.assert_allclose(sess.run(ema.average(w)), shadow_w, rtol=1e-6)
            np.testing.assert_allclose(sess.run(ema.average(b)), shadow_b, rtol=1e-12)
    with pytest.raises(TypeError, match="float"):
        ema.apply([tfd.Variable(1, name="count")])
    with pytest.raises(NotImplementedError, match="zero_debias"):
        tfd.train.ExponentialMovingAverage(0.9, zero_debias=True)


def test_nan_tensor_hook_fails_or_stops_on_a_nan_loss():
    loss = tfd.constant(1.0)
    for fail in (True, False):
        hook = tfd.train.NanTensorHook(loss, fail_on_nan_loss=fail)
        context = tfd.train.SessionRunContext(None, None)
        assert hook.before_run(context).fetches is loss
        hook.after_run(context, tfd.train.SessionRunValues(1.5, None, None))
        assert not context.stop_requested
        if fail:
            with pytest.raises(tfd.train.NanLossDuringTrainingError):
                hook.after_run(context, tfd.train.SessionRunValues(np.nan, None, None))
        else:
            hook.after_run(context, tfd.train.SessionRunValues(np.float32("nan"), None, None))
            assert context.stop_requested
