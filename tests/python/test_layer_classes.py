"""tfd.layers' classes (TF1's tf.layers.Dense, Conv2D, ...): one object's
calls share its variables; what it lists (variables, updates, losses);
weight and activity regularizers, their losses against float64 numpy and
their effect on training; the arguments tfd does not take refused."""
import numpy as np
import pytest

import tfd

L1, L2 = tfd.contrib.layers.l1_regularizer, tfd.contrib.layers.l2_regularizer


def _names(variables):
    return [v.name for v in variables]


def test_a_dense_object_called_twice_uses_one_kernel():
    x1 = tfd.placeholder(tfd.float32, [None, 3])
    x2 = tfd.placeholder(tfd.float32, [None, 3])
    tower = tfd.layers.Dense(2, activation=tfd.nn.relu,
                             bias_initializer=tfd.constant_initializer(0.5))
    a, b = tower(x1), tower.apply(x2)
    other = tfd.layers.Dense(2)(x1)  # a new object: new variables
    assert _names(tfd.global_variables()) == [
        "dense/kernel:0", "dense/bias:0", "dense_1/kernel:0", "dense_1/bias:0"]
    assert tower.name == "dense" and tower.built
    assert _names(tower.trainable_variables) == ["dense/kernel:0", "dense/bias:0"]
    assert _names(tower.variables) == _names(tower.weights) == _names(tower.trainable_weights)
    assert tower.non_trainable_variables == [] and tower.updates == [] and tower.losses == []
    assert tower.kernel.name == "dense/kernel:0" and tower.bias.name == "dense/bias:0"
    rng = np.random.RandomState(0)
    xs1, xs2 = rng.randn(4, 3).astype(np.float32), rng.randn(5, 3).astype(np.float32)
    with tfd.Session() as sess:
        sess.run(tfd.global_variables_initializer())
        got_a, got_b, _ = sess.run([a, b, other], {x1: xs1, x2: xs2})
        w, bias = (sess.run(v).astype(np.float64) for v in (tower.kernel, tower.bias))
    np.testing.assert_allclose(got_a, np.maximum(xs1.astype(np.float64) @ w + bias, 0),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_b, np.maximum(xs2.astype(np.float64) @ w + bias, 0),
                               rtol=1e-5, atol=1e-6)


def test_a_conv2d_object_shares_its_kernel_across_image_sizes():
    small = tfd.placeholder(tfd.float32, [None, 4, 4, 2])
    large = tfd.placeholder(tfd.float32, [None, 6, 5, 2])
    conv = tfd.layers.Conv2D(3, 2, padding="same", use_bias=False, name="shared")
    out_small, out_large = conv(small), conv(large)
    assert _names(tfd.global_variables()) == ["shared/kernel:0"]
    assert _names(conv.trainable_variables) == ["shared/kernel:0"] and conv.bias is None
    assert out_large.shape.dims == [None, 6, 5, 3]
    rng = np.random.RandomState(1)
    xs_small, xs_large = rng.randn(1, 4, 4, 2), rng.randn(1, 6, 5, 2)
    with tfd.Session() as sess:
        sess.run(tfd.global_variables_initializer())
        k = sess.run(conv.kernel).astype(np.float64)
        got_small, got_large = sess.run([out_small, out_large],
                                        {small: xs_small.astype(np.float32),
                                         large: xs_large.astype(np.float32)})
    for xs, got in ((xs_small, got_small), (xs_large, got_large)):
        # A 2x2 SAME convolution pads one row and column at the bottom and right.
        padded = np.pad(xs, ((0, 0), (0, 1), (0, 1), (0, 0)))
        h, w = xs.shape[1:3]
        want = np.zeros((1, h, w, 3))
        for i in range(h):
            for j in range(w):
                want[:, i, j] = np.tensordot(padded[:, i:i + 2, j:j + 2], k, 3)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_the_layers_without_variables_as_objects():
    x = tfd.placeholder(tfd.float32, [None, 4, 4, 1])
    training = tfd.placeholder(tfd.bool, [])
    pooled = tfd.layers.MaxPooling2D(2, 2)(x)
    averaged = tfd.layers.AveragePooling2D(2, 2, name="avg")(x)
    flat = tfd.layers.Flatten()(pooled)
    drop = tfd.layers.Dropout(0.5, seed=3)
    kept, chosen = drop(flat), drop(flat, training=training)
    assert flat.shape.dims == [None, 4] and tfd.global_variables() == []
    xs = np.arange(16, dtype=np.float32).reshape(1, 4, 4, 1)
    blocks = xs.reshape(2, 2, 2, 2).transpose(0, 2, 1, 3).reshape(4, 4)
    with tfd.Session() as sess:
        got = sess.run([flat, averaged, kept, chosen], {x: xs, training: True})
    np.testing.assert_array_equal(got[0], [blocks.max(axis=1)])
    np.testing.assert_array_equal(got[1].reshape(4), blocks.mean(axis=1))
    np.testing.assert_array_equal(got[2], got[0])
    assert set(got[3].reshape(-1)) <= {0.0} | set(2 * got[0].reshape(-1))


def test_a_batch_normalization_object_lists_and_moves_its_averages():
    xs1 = np.random.RandomState(2).randn(8, 3).astype(np.float32) + 2
    xs2 = xs1 * 3
    x1 = tfd.placeholder(tfd.float32, [None, 3])
    x2 = tfd.placeholder(tfd.float32, [None, 3])
    bn = tfd.layers.BatchNormalization(momentum=0.5)
    y1 = bn(x1, training=True)
    bn(x2)  # inference: the moving averages, no updates
    y2 = bn.apply(x2, training=True)
    updates = tfd.get_collection(tfd.GraphKeys.UPDATE_OPS)
    assert len(bn.updates) == 4 and [u.name for u in updates] == [u.name for u in bn.updates]
    assert _names(tfd.global_variables()) == [
        "batch_normalization/gamma:0", "batch_normalization/beta:0",
        "batch_normalization/moving_mean:0", "batch_normalization/moving_variance:0"]
    assert _names(bn.trainable_variables) == [bn.gamma.name, bn.beta.name]
    assert _names(bn.non_trainable_variables) == [bn.moving_mean.name, bn.moving_variance.name]
    assert _names(tfd.get_collection(tfd.GraphKeys.MOVING_AVERAGE_VARIABLES)) == _names(
        bn.non_trainable_variables)
    with tfd.Session() as sess:
        sess.run(tfd.global_variables_initializer())
        sess.run(bn.updates[:2], {x1: xs1})
        moved = sess.run(bn.moving_mean)
        got1, got2 = sess.run([y1, y2], {x1: xs1, x2: xs2})
    np.testing.assert_allclose(moved, 0.5 * xs1.astype(np.float64).mean(axis=0), rtol=1e-5)
    for xs, got in ((xs1, got1), (xs2, got2)):
        x64 = xs.astype(np.float64)
        np.testing.assert_allclose(got, (x64 - x64.mean(0)) / np.sqrt(x64.var(0) + 1e-3),
                                   rtol=1e-4, atol=1e-4)


def test_regularization_losses_are_collected_once_per_variable_and_summed():
    x = tfd.placeholder(tfd.float32, [None, 3])
    images = tfd.placeholder(tfd.float32, [None, 5, 5, 2])
    dense = tfd.layers.Dense(4, kernel_regularizer=L2(0.3), bias_regularizer=L1(0.2),
                             bias_initializer=tfd.constant_initializer([1.0, -2.0, 0.5, 0.0]))
    dense(x), dense(x)  # built once: one loss each
    tfd.layers.conv2d(images, 2, 3, name="conv",
                      kernel_regularizer=tfd.contrib.layers.l1_l2_regularizer(0.1, 0.4))
    tfd.layers.conv2d(images, 2, 3, name="conv", reuse=True,
                      kernel_regularizer=tfd.contrib.layers.l1_l2_regularizer(0.1, 0.4))
    tfd.layers.dense(x, 2, kernel_regularizer=L2(0.0))  # scale 0: no loss
    assert L2(0.0)(dense.kernel) is None and L1(0.0)(dense.kernel) is None
    bn = tfd.layers.BatchNormalization(gamma_regularizer=L2(0.5),
                                       gamma_initializer=tfd.constant_initializer(3.0))
    bn(x)
    w = tfd.get_variable("w", [2, 2], regularizer=L1(1.5))
    losses = tfd.losses.get_regularization_losses()
    assert len(losses) == 5
    assert dense.losses == losses[:2] and bn.losses == [losses[3]]
    assert [loss.name for loss in tfd.losses.get_regularization_losses("conv/")] == [
        losses[2].name]
    total = tfd.losses.get_regularization_loss()
    with tfd.Session() as sess:
        sess.run(tfd.global_variables_initializer())
        got, got_total = sess.run(losses), sess.run(total)
        k, b, ck, wv = (sess.run(v).astype(np.float64) for v in (
            dense.kernel, dense.bias, tfd.global_variables()[2], w))
    want = [0.3 * np.sum(k ** 2) / 2, 0.2 * np.sum(np.abs(b)),
            0.1 * np.sum(np.abs(ck)) + 0.4 * np.sum(ck ** 2) / 2, 0.5 * 9.0 * 3 / 2,
            1.5 * np.sum(np.abs(wv))]
    np.testing.assert_allclose(got, want, rtol=1e-5)
    np.testing.assert_allclose(got_total, sum(want), rtol=1e-5)


def test_no_regularizer_is_a_zero_total_and_bad_scales_are_refused():
    with tfd.Session() as sess:
        assert sess.run(tfd.losses.get_regularization_loss()) == 0.0
    with pytest.raises(ValueError, match="scale must be a float, got the integer 1"):
        L2(1)
    with pytest.raises(ValueError, match="must not be negative"):
        L1(-0.5)


def test_an_activity_regularizer_takes_the_outputs_per_example():
    x = tfd.placeholder(tfd.float32, [None, 2])
    dense = tfd.layers.Dense(3, activity_regularizer=L1(0.25))
    y = dense(x)
    [loss] = tfd.losses.get_regularization_losses()
    xs = np.array([[1.0, -2.0], [0.5, 3.0], [-1.0, 0.0], [2.0, 2.0]], np.float32)
    with tfd.Session() as sess:
        sess.run(tfd.global_variables_initializer())
        out, got = sess.run([y, loss], {x: xs})
    np.testing.assert_allclose(got, 0.25 * np.abs(out.astype(np.float64)).sum() / 4, rtol=1e-5)


def test_a_regularizer_pulls_the_weights_toward_zero():
    """One step of gradient descent on the regularization loss alone is
    w * (1 - lr * scale) for l2 and w - lr * scale * sign(w) for l1; with
    a data loss, the regularized kernel ends smaller than the other."""
    x = tfd.constant(np.ones([4, 2], np.float32))
    init = tfd.constant_initializer([[1.0, -2.0], [0.5, 3.0]])
    plain = tfd.layers.dense(x, 2, kernel_initializer=init, use_bias=False)
    l2 = tfd.layers.Dense(2, kernel_initializer=init, use_bias=False, kernel_regularizer=L2(0.5))
    l1 = tfd.layers.Dense(2, kernel_initializer=init, use_bias=False, kernel_regularizer=L1(0.5))
    fitted, _ = l2(x), l1(x)
    step = tfd.train.GradientDescentOptimizer(0.1).minimize(
        tfd.losses.get_regularization_loss(), var_list=[l2.kernel, l1.kernel])
    data = lambda y: tfd.reduce_mean(tfd.square(y - 4.0))  # noqa: E731
    fit = tfd.train.GradientDescentOptimizer(0.05).minimize(
        data(plain) + data(fitted) + tfd.losses.get_regularization_loss("dense_1/"))
    w0 = np.array([[1.0, -2.0], [0.5, 3.0]])
    with tfd.Session() as sess:
        sess.run(tfd.global_variables_initializer())
        sess.run(step)
        np.testing.assert_allclose(sess.run(l2.kernel), w0 * (1 - 0.1 * 0.5), rtol=1e-6)
        np.testing.assert_allclose(sess.run(l1.kernel), w0 - 0.1 * 0.5 * np.sign(w0), rtol=1e-6)
        sess.run(tfd.variables_initializer(tfd.global_variables()))
        for _ in range(20):
            sess.run(fit)
        kernels = sess.run([tfd.global_variables()[0], l2.kernel])  # plain's, l2's
    assert np.sum(kernels[1] ** 2) < 0.9 * np.sum(kernels[0] ** 2), kernels


def test_what_the_classes_do_not_take_is_refused_by_name():
    x = tfd.placeholder(tfd.float32, [None, 3])
    with pytest.raises(TypeError, match="dense: kernel_constraint is not supported"):
        tfd.layers.Dense(2, kernel_constraint=lambda w: w)
    with pytest.raises(TypeError, match="conv2d: bias_constraint is not supported"):
        tfd.layers.Conv2D(2, 3, bias_constraint=lambda w: w)
    with pytest.raises(TypeError, match="batch_normalization: renorm is not supported"):
        tfd.layers.BatchNormalization(renorm=True)
    with pytest.raises(TypeError, match="batch_normalization: virtual_batch_size is not"):
        tfd.layers.batch_normalization(x, virtual_batch_size=2)
    with pytest.raises(TypeError, match="unexpected keyword argument 'kernel_regularizer'"):
        tfd.layers.MaxPooling2D(2, 2, kernel_regularizer=L2(0.1))
    dense = tfd.layers.Dense(2)
    dense(x)
    with pytest.raises(ValueError, match="built for inputs of last dimension 3"):
        dense(tfd.placeholder(tfd.float32, [None, 4]))
    with tfd.Graph().as_default():
        with pytest.raises(ValueError, match="of another graph"):
            dense(tfd.placeholder(tfd.float32, [None, 3]))


def test_a_layer_of_ones_own():
    """Layer's protocol, as TF1's: build() makes the weights once, call()
    runs at every call."""

    class Scale(tfd.layers.Layer):
        def build(self, input_shape):
            self.factor = self.add_weight("factor", [int(input_shape[-1])],
                                          initializer=tfd.constant_initializer(2.0),
                                          regularizer=L1(1.0))

        def call(self, inputs):
            return inputs * self.factor

    scale = Scale(name="scale")
    x = tfd.placeholder(tfd.float32, [None, 2])
    y = scale(scale(x))
    assert _names(scale.weights) == ["scale/factor:0"] and len(scale.losses) == 1
    with tfd.Session() as sess:
        sess.run(tfd.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(y, {x: [[1.0, -1.0]]}), [[4.0, -4.0]])
        assert sess.run(scale.losses[0]) == 4.0
