"""tfd.layers (TF1's tf.layers) against float64 references worked out in
numpy: dense over rank 2 and 3, conv2d with strides, dilations and both
paddings, both poolings, flatten and dropout; variables named and shared as
TF1's; the arguments tfd does not take refused by name."""
import math

import numpy as np
import pytest

import tfd


def _conv_ref(x, k, stride, dilation, same):
    """NHWC x, HWIO k, float64: TF's convolution, SAME padding as TF pads
    (the extra row or column at the bottom and right)."""
    n, h, w, c = x.shape
    kh, kw, _, f = k.shape
    eh, ew = (kh - 1) * dilation[0] + 1, (kw - 1) * dilation[1] + 1
    if same:
        oh, ow = -(-h // stride[0]), -(-w // stride[1])
        ph = max((oh - 1) * stride[0] + eh - h, 0)
        pw = max((ow - 1) * stride[1] + ew - w, 0)
        x = np.pad(x, ((0, 0), (ph // 2, ph - ph // 2), (pw // 2, pw - pw // 2), (0, 0)))
    else:
        oh, ow = (h - eh) // stride[0] + 1, (w - ew) // stride[1] + 1
    out = np.zeros((n, oh, ow, f))
    for i in range(oh):
        for j in range(ow):
            patch = x[:, i * stride[0]:i * stride[0] + eh:dilation[0],
                      j * stride[1]:j * stride[1] + ew:dilation[1], :]
            out[:, i, j, :] = np.tensordot(patch, k, axes=([1, 2, 3], [0, 1, 2]))
    return out


def _pool_ref(x, size, stride, same, reduce):
    """NHWC x; size and stride ints, or (rows, cols) pairs."""
    n, h, w, c = x.shape
    (sh, sw), (th, tw) = [(v, v) if isinstance(v, int) else v for v in (size, stride)]
    if same:
        oh, ow = -(-h // th), -(-w // tw)
        ph, pw = max((oh - 1) * th + sh - h, 0), max((ow - 1) * tw + sw - w, 0)
        top, left = ph // 2, pw // 2
    else:
        oh, ow, top, left = (h - sh) // th + 1, (w - sw) // tw + 1, 0, 0
    out = np.zeros((n, oh, ow, c))
    for i in range(oh):
        for j in range(ow):
            r0, c0 = max(i * th - top, 0), max(j * tw - left, 0)
            r1, c1 = min(i * th - top + sh, h), min(j * tw - left + sw, w)
            out[:, i, j, :] = reduce(x[:, r0:r1, c0:c1, :], axis=(1, 2))
    return out


def _values(sess, names):
    by_name = {v.name: v for v in tfd.global_variables()}
    return [sess.run(by_name[n]).astype(np.float64) for n in names]


def test_dense_is_a_matmul_plus_bias_named_and_numbered_as_tf1s():
    x = tfd.placeholder(tfd.float32, [None, 6])
    y = tfd.layers.dense(x, 4, activation=tfd.nn.relu,
                         bias_initializer=tfd.constant_initializer(0.25))
    tfd.layers.dense(x, 3)
    with tfd.variable_scope("head"):
        z = tfd.layers.dense(x, 2, name="out")
    with tfd.variable_scope("head", reuse=True):
        shared = tfd.layers.dense(x, 2, name="out")
    assert [v.name for v in tfd.global_variables()] == [
        "dense/kernel:0", "dense/bias:0", "dense_1/kernel:0", "dense_1/bias:0",
        "head/out/kernel:0", "head/out/bias:0"]
    assert [v.name for v in tfd.trainable_variables()] == [
        v.name for v in tfd.global_variables()]
    xs = np.random.RandomState(0).randn(5, 6).astype(np.float32)
    with tfd.Session() as sess:
        sess.run(tfd.global_variables_initializer())
        kernel, bias = _values(sess, ["dense/kernel:0", "dense/bias:0"])
        limit = math.sqrt(6.0 / (6 + 4))  # Glorot uniform
        assert np.all(np.abs(kernel) <= limit) and np.ptp(kernel) > 0
        np.testing.assert_array_equal(bias, [0.25] * 4)
        want = np.maximum(xs.astype(np.float64) @ kernel + bias, 0)
        np.testing.assert_allclose(sess.run(y, {x: xs}), want, rtol=1e-5, atol=1e-6)
        got_z, got_shared = sess.run([z, shared], {x: xs})
        np.testing.assert_array_equal(got_z, got_shared)


def test_dense_over_rank_3_keeps_the_other_axes():
    x = tfd.placeholder(tfd.float32, [None, 5, 7])
    y = tfd.layers.dense(x, 2, use_bias=False)
    assert y.shape.dims == [None, 5, 2]
    assert [v.name for v in tfd.global_variables()] == ["dense/kernel:0"]
    xs = np.random.RandomState(1).randn(3, 5, 7).astype(np.float32)
    with tfd.Session() as sess:
        sess.run(tfd.global_variables_initializer())
        [kernel] = _values(sess, ["dense/kernel:0"])
        np.testing.assert_allclose(sess.run(y, {x: xs}), xs.astype(np.float64) @ kernel,
                                   rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kernel,strides,dilation,padding", [
    (3, 1, 1, "same"), (3, 1, 1, "valid"), ((3, 2), 2, 1, "same"), ((2, 3), (2, 1), 1, "VALID"),
    (3, 1, 2, "same"), (1, 3, 1, "valid"), (5, 2, 1, "same"),
])
def test_conv2d_is_tf1s_convolution(kernel, strides, dilation, padding):
    x = tfd.placeholder(tfd.float32, [None, 9, 8, 3])
    y = tfd.layers.conv2d(x, 4, kernel, strides=strides, padding=padding,
                          dilation_rate=dilation, activation=tfd.nn.relu,
                          bias_initializer=tfd.constant_initializer(-0.1))
    kh, kw = (kernel, kernel) if isinstance(kernel, int) else kernel
    xs = np.random.RandomState(2).randn(2, 9, 8, 3).astype(np.float32)
    with tfd.Session() as sess:
        sess.run(tfd.global_variables_initializer())
        k, b = _values(sess, ["conv2d/kernel:0", "conv2d/bias:0"])
        assert k.shape == (kh, kw, 3, 4)
        stride = (strides, strides) if isinstance(strides, int) else strides
        want = np.maximum(_conv_ref(xs.astype(np.float64), k, stride, (dilation, dilation),
                                    padding.lower() == "same") + b, 0)
        got = sess.run(y, {x: xs})
        assert got.shape == want.shape and tuple(y.shape.dims[1:]) == want.shape[1:]
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("strides,dilation,padding", [(2, 1, "same"), (1, 2, "valid")])
def test_conv1d_is_a_convolution_along_the_width(strides, dilation, padding):
    x = tfd.placeholder(tfd.float64, [None, 9, 3])
    y = tfd.layers.conv1d(x, 4, 3, strides=strides, padding=padding, dilation_rate=dilation)
    xs = np.random.RandomState(3).randn(2, 9, 3)
    with tfd.Session() as sess:
        sess.run(tfd.global_variables_initializer())
        k, b = _values(sess, ["conv1d/kernel:0", "conv1d/bias:0"])
        got = sess.run(y, {x: xs})
    assert k.shape == (3, 3, 4)
    want = _conv_ref(xs[:, None], k[None], (1, strides), (1, dilation), padding == "same")[:, 0]
    assert tuple(y.shape.dims[1:]) == want.shape[1:]
    np.testing.assert_allclose(got, want + b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("padding", ["same", "valid"])
def test_conv2d_transpose_is_the_adjoint_of_conv2d(padding):
    """<conv2d_transpose(y), x> = <y, conv2d(x)> with the layer's kernel;
    outputs strides times as large (valid: kernel - stride more)."""
    y = tfd.placeholder(tfd.float64, [None, None, None, 6])
    layer = tfd.layers.Conv2DTranspose(5, (3, 2), strides=2, padding=padding,
                                       bias_initializer=tfd.constant_initializer(0.5))
    out = layer(y)
    assert out.shape.dims == [None, None, None, 5]
    ys = np.random.RandomState(4).randn(2, 4, 3, 6)
    with tfd.Session() as sess:
        sess.run(tfd.global_variables_initializer())
        (k,) = _values(sess, ["conv2d_transpose/kernel:0"])
        got = sess.run(out, {y: ys}) - 0.5
    assert k.shape == (3, 2, 5, 6)
    assert got.shape == ((2, 8, 6, 5) if padding == "same" else (2, 9, 6, 5))
    xs = np.random.RandomState(5).randn(*got.shape)
    conv = _conv_ref(xs, k, (2, 2), (1, 1), padding == "same")
    assert conv.shape == ys.shape
    np.testing.assert_allclose(np.sum(got * xs), np.sum(ys * conv), rtol=1e-10)


def test_separable_conv2d_is_a_depthwise_then_a_pointwise_convolution():
    x = tfd.placeholder(tfd.float64, [None, 7, 6, 3])
    y = tfd.layers.separable_conv2d(x, 4, 3, depth_multiplier=2, padding="same")
    xs = np.random.RandomState(6).randn(2, 7, 6, 3)
    with tfd.Session() as sess:
        sess.run(tfd.global_variables_initializer())
        dw, pw, b = _values(sess, ["separable_conv2d/depthwise_kernel:0",
                                   "separable_conv2d/pointwise_kernel:0",
                                   "separable_conv2d/bias:0"])
        got = sess.run(y, {x: xs})
    assert dw.shape == (3, 3, 3, 2) and pw.shape == (1, 1, 6, 4)
    depthwise = np.concatenate([_conv_ref(xs[..., c:c + 1], dw[:, :, c:c + 1], (1, 1), (1, 1),
                                          True) for c in range(3)], axis=3)
    want = np.tensordot(depthwise, pw[0, 0], axes=([3], [0])) + b
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("size,stride,padding", [(2, 2, "valid"), (3, 2, "same"), (3, 1, "valid"),
                                                 (2, 3, "same")])
def test_pooling_is_tf1s(size, stride, padding):
    x = tfd.placeholder(tfd.float32, [None, 7, 6, 2])
    mx = tfd.layers.max_pooling2d(x, size, stride, padding=padding)
    avg = tfd.layers.average_pooling2d(x, size, stride, padding=padding)
    xs = np.random.RandomState(3).randn(2, 7, 6, 2).astype(np.float32)
    same = padding == "same"
    with tfd.Session() as sess:
        got_max, got_avg = sess.run([mx, avg], {x: xs})
    np.testing.assert_array_equal(got_max, _pool_ref(xs, size, stride, same, np.max))
    np.testing.assert_allclose(got_avg, _pool_ref(xs.astype(np.float64), size, stride, same,
                                                  np.mean), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("size,stride,padding", [(2, 2, "valid"), (3, 2, "same")])
def test_1d_pooling_is_pooling_along_the_width(size, stride, padding):
    x = tfd.placeholder(tfd.float64, [None, 7, 2])
    mx = tfd.layers.max_pooling1d(x, size, stride, padding=padding)
    avg = tfd.layers.average_pooling1d(x, size, stride, padding=padding)
    xs = np.random.RandomState(3).randn(2, 7, 2)
    with tfd.Session() as sess:
        got_max, got_avg = sess.run([mx, avg], {x: xs})
    for got, reduce in ((got_max, np.max), (got_avg, np.mean)):
        want = _pool_ref(xs[:, None], (1, size), (1, stride), padding == "same", reduce)[:, 0]
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_flatten_keeps_the_batch_and_joins_the_rest():
    x = tfd.placeholder(tfd.float32, [None, 3, 4, 2])
    unknown = tfd.placeholder(tfd.float32, [None, None, 2])
    flat, flat_unknown = tfd.layers.flatten(x), tfd.layers.flatten(unknown)
    assert flat.shape.dims == [None, 24]
    xs = np.arange(48, dtype=np.float32).reshape(2, 3, 4, 2)
    with tfd.Session() as sess:
        np.testing.assert_array_equal(sess.run(flat, {x: xs}), xs.reshape(2, 24))
        np.testing.assert_array_equal(sess.run(flat_unknown, {unknown: xs.reshape(2, 12, 2)}),
                                      xs.reshape(2, 24))


def test_dropout_drops_only_while_training():
    x = tfd.constant(np.ones([200, 50], np.float32))
    training = tfd.placeholder(tfd.bool, [])
    chosen = tfd.layers.dropout(x, rate=0.25, training=training)
    off = tfd.layers.dropout(x, rate=0.25)
    on = tfd.layers.dropout(x, rate=0.25, training=True, seed=7)
    with tfd.Session() as sess:
        np.testing.assert_array_equal(sess.run(off), np.ones([200, 50]))
        np.testing.assert_array_equal(sess.run(chosen, {training: False}), np.ones([200, 50]))
        for got in (sess.run(on), sess.run(chosen, {training: True})):
            assert set(np.unique(got)) <= {0.0, np.float32(1 / 0.75)}
            assert 0.2 < np.mean(got == 0) < 0.3  # 10,000 draws of a 25% chance


def test_what_tfd_does_not_take_is_refused_by_name():
    x = tfd.placeholder(tfd.float32, [None, 8, 8, 3])
    with pytest.raises(TypeError, match="dense: kernel_constraint is not supported"):
        tfd.layers.dense(tfd.layers.flatten(x), 2, kernel_constraint=lambda w: w)
    with pytest.raises(TypeError, match="unexpected keyword argument 'kernel_regulariser'"):
        tfd.layers.dense(tfd.layers.flatten(x), 2, kernel_regulariser=None)
    with pytest.raises(ValueError, match="data_format 'channels_first' is not supported"):
        tfd.layers.conv2d(x, 2, 3, data_format="channels_first")
    with pytest.raises(ValueError, match="padding must be 'valid' or 'same', got 'full'"):
        tfd.layers.max_pooling2d(x, 2, 2, padding="full")
    with pytest.raises(ValueError, match="kernel_size must be a positive int or two"):
        tfd.layers.conv2d(x, 2, (3, 0))
    with pytest.raises(ValueError, match="last dimension of the input .* must be known"):
        tfd.layers.dense(tfd.placeholder(tfd.float32, [None, None]), 2)
    with pytest.raises(ValueError, match="must have rank 2 or more"):
        tfd.layers.dense(tfd.placeholder(tfd.float32, [5]), 2)


def test_a_small_convnet_of_layers_learns():
    """conv, batch normalization, pool, dense and dropout trained by Adam,
    the moving averages updated with each step as TF1 programs do: the loss
    on a fixed batch falls well below where it starts."""
    rng = np.random.RandomState(4)
    xs = rng.rand(16, 8, 8, 1).astype(np.float32)
    ys = (xs.mean(axis=(1, 2, 3)) > 0.5).astype(np.int32)
    x = tfd.placeholder(tfd.float32, [None, 8, 8, 1])
    y = tfd.placeholder(tfd.int32, [None])
    h = tfd.layers.conv2d(x, 4, 3, padding="same", use_bias=False)
    h = tfd.nn.relu(tfd.layers.batch_normalization(h, training=True))
    h = tfd.layers.max_pooling2d(h, 2, 2)
    h = tfd.layers.dropout(tfd.layers.flatten(h), rate=0.1, training=True, seed=1)
    logits = tfd.layers.dense(h, 2)
    loss = tfd.reduce_mean(tfd.nn.sparse_softmax_cross_entropy_with_logits(labels=y,
                                                                          logits=logits))
    with tfd.control_dependencies(tfd.get_collection(tfd.GraphKeys.UPDATE_OPS)):
        train = tfd.train.AdamOptimizer(0.05).minimize(loss)
    with tfd.Session() as sess:
        sess.run(tfd.global_variables_initializer())
        first = sess.run(loss, {x: xs, y: ys})
        for _ in range(60):
            sess.run(train, {x: xs, y: ys})
        last = sess.run(loss, {x: xs, y: ys})
        [moving_mean] = _values(sess, ["batch_normalization/moving_mean:0"])
    assert last < 0.5 * first, (first, last)
    assert np.all(moving_mean != 0)  # 60 steps moved it


def _bn_ref(xs, mean, variance, gamma=1.0, beta=0.0, eps=1e-3):
    return (xs - mean) / np.sqrt(variance + eps) * gamma + beta


@pytest.mark.parametrize("shape,unbiased", [((6, 3, 2, 4), True), ((10, 4), False)])
def test_batch_normalization_in_training_uses_the_batch_and_moves_the_averages(shape, unbiased):
    """TF1's: the batch's mean and biased variance normalize; the update ops
    in UPDATE_OPS move the averages by 1 - momentum toward the batch's mean
    and (for a 4-D input, its fused kernel's) unbiased variance."""
    xs = np.random.RandomState(5).randn(*shape).astype(np.float32) * 3 + 1
    x = tfd.placeholder(tfd.float32, [None] + list(shape[1:]))
    y = tfd.layers.batch_normalization(x, training=True, momentum=0.9,
                                       gamma_initializer=tfd.constant_initializer(2.0),
                                       beta_initializer=tfd.constant_initializer(0.5))
    updates = tfd.get_collection(tfd.GraphKeys.UPDATE_OPS)
    assert len(updates) == 2
    assert [v.name for v in tfd.get_collection(tfd.GraphKeys.MOVING_AVERAGE_VARIABLES)] == [
        "batch_normalization/moving_mean:0", "batch_normalization/moving_variance:0"]
    assert [v.name for v in tfd.trainable_variables()] == [
        "batch_normalization/gamma:0", "batch_normalization/beta:0"]
    x64 = xs.astype(np.float64).reshape(-1, shape[-1])
    mean, var = x64.mean(axis=0), x64.var(axis=0)
    n = x64.shape[0]
    with tfd.Session() as sess:
        sess.run(tfd.global_variables_initializer())
        got = sess.run(y, {x: xs})
        np.testing.assert_allclose(got, _bn_ref(xs.astype(np.float64), mean, var, 2.0, 0.5),
                                   rtol=1e-4, atol=1e-4)
        sess.run(updates, {x: xs})
        moving_mean, moving_var = _values(sess, ["batch_normalization/moving_mean:0",
                                                 "batch_normalization/moving_variance:0"])
    np.testing.assert_allclose(moving_mean, 0.1 * mean, rtol=1e-5, atol=1e-6)
    want_var = var * n / (n - 1) if unbiased else var
    np.testing.assert_allclose(moving_var, 0.9 + 0.1 * want_var, rtol=1e-5)


def test_batch_normalization_outside_training_uses_the_moving_averages():
    xs = np.random.RandomState(6).randn(4, 3).astype(np.float32)
    x = tfd.placeholder(tfd.float32, [None, 3])
    training = tfd.placeholder(tfd.bool, [])
    inference = tfd.layers.batch_normalization(x, name="bn")
    chosen = tfd.layers.batch_normalization(x, training=training, name="bn", reuse=True)
    assert len(tfd.get_collection(tfd.GraphKeys.UPDATE_OPS)) == 2  # the tensor one's
    assert len(tfd.get_collection(tfd.GraphKeys.MOVING_AVERAGE_VARIABLES)) == 2  # shared
    with tfd.Session() as sess:
        sess.run(tfd.global_variables_initializer())
        want = _bn_ref(xs.astype(np.float64), 0.0, 1.0)  # the initial averages
        np.testing.assert_allclose(sess.run(inference, {x: xs}), want, rtol=1e-6)
        # A step with training False: the moving averages, which stay.
        out = sess.run([chosen] + tfd.get_collection(tfd.GraphKeys.UPDATE_OPS),
                       {x: xs, training: False})
        np.testing.assert_allclose(out[0], want, rtol=1e-6)
        np.testing.assert_array_equal(_values(sess, ["bn/moving_mean:0"])[0], [0, 0, 0])
        # With training True: the batch's statistics, and the averages move.
        out = sess.run([chosen] + tfd.get_collection(tfd.GraphKeys.UPDATE_OPS),
                       {x: xs, training: True})
        x64 = xs.astype(np.float64)
        np.testing.assert_allclose(out[0], _bn_ref(x64, x64.mean(0), x64.var(0)),
                                   rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(_values(sess, ["bn/moving_mean:0"])[0],
                                   0.01 * x64.mean(0), rtol=1e-5, atol=1e-7)


def test_get_collection_filters_by_scope_and_lists_variables():
    with tfd.variable_scope("a"):
        tfd.layers.dense(tfd.placeholder(tfd.float32, [None, 2]), 1)
    with tfd.variable_scope("b"):
        tfd.layers.dense(tfd.placeholder(tfd.float32, [None, 2]), 1, use_bias=False)
    assert [v.name for v in tfd.get_collection(tfd.GraphKeys.TRAINABLE_VARIABLES, "a/")] == [
        "a/dense/kernel:0", "a/dense/bias:0"]
    assert [v.name for v in tfd.get_collection(tfd.GraphKeys.GLOBAL_VARIABLES, "b")] == [
        "b/dense/kernel:0"]
    tfd.add_to_collection("mine", 3)
    assert tfd.get_collection("mine") == [3]


def test_contrib_fully_connected_is_tf1s_with_its_variable_names():
    x = tfd.placeholder(tfd.float64, [None, 3])
    h = tfd.contrib.layers.fully_connected(x, 4)  # relu by default
    y = tfd.contrib.layers.fully_connected(h, 2, activation_fn=None, scope="logits")
    normed = tfd.contrib.layers.fully_connected(x, 4, normalizer_fn=lambda t: t * 2.0,
                                                activation_fn=None)  # no biases then
    names = [v.op.name for v in tfd.global_variables()]
    assert names == ["fully_connected/weights", "fully_connected/biases", "logits/weights",
                     "logits/biases", "fully_connected_1/weights"]
    assert [v.op.name for v in tfd.get_collection("model_variables")] == names
    xs = np.random.RandomState(9).randn(5, 3)
    with tfd.Session() as sess:
        sess.run(tfd.global_variables_initializer())
        w, b, w2, b2, w3 = _values(sess, [n + ":0" for n in names])
        got = sess.run([h, y, normed], {x: xs})
    want_h = np.maximum(xs @ w + b, 0)
    for g, want in zip(got, (want_h, want_h @ w2 + b2, 2 * (xs @ w3))):
        np.testing.assert_allclose(g, want, rtol=1e-12)


@pytest.mark.parametrize("uniform", [True, False])
def test_contrib_xavier_initializer_has_contribs_scale(uniform):
    v = tfd.get_variable("v", [200, 300], initializer=tfd.contrib.layers.xavier_initializer(
        uniform=uniform, seed=1))
    with tfd.Session() as sess:
        sess.run(v.initializer)
        got = sess.run(v)
    if uniform:  # +-sqrt(3 / 250)
        variance, bound = 1.0 / 250, (3.0 / 250) ** 0.5
    else:  # stddev sqrt(1.3 / 250), cut at two of them: 0.8796^2 of the variance
        variance, bound = 1.3 / 250 * 0.87962566 ** 2, 2 * (1.3 / 250) ** 0.5
    assert abs(got.var() / variance - 1) < 0.03
    assert np.abs(got).max() <= bound * (1 + 1e-6)
