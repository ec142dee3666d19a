"""TF1's functions with TF1's signatures and numerics: division by dtype,
dropout with a fed keep_prob, split, where, pad, range, the nn functions
and the reductions, each against numpy (float64 where it matters, IEEE inf
and NaN as numpy gives them) and, where TF1 has a gradient, against finite
differences."""
import numpy as np
import pytest

import tfd
from numeric_helpers import check_gradient


def run(fetches, feed_dict=None):
    with tfd.Session() as sess:
        return sess.run(fetches, feed_dict)


# Division -------------------------------------------------------------------
INTS = np.array([7, -7, 7, -7, 0, 1], np.int64)
DIVISORS = np.array([2, 2, -2, -2, 3, 3], np.int64)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_true_division_of_integers_is_in_float64(dtype):
    x, y = tfd.constant(INTS.astype(dtype)), tfd.constant(DIVISORS.astype(dtype))
    got = run([x / y, tfd.divide(x, y), tfd.truediv(x, y), x / 2, 7 / y])
    for g in got:
        assert g.dtype == np.float64
    want = INTS.astype(dtype) / DIVISORS.astype(dtype)
    np.testing.assert_array_equal(got[0], want)
    np.testing.assert_array_equal(got[1], want)
    np.testing.assert_array_equal(got[2], want)
    np.testing.assert_array_equal(got[3], INTS / 2)
    np.testing.assert_array_equal(got[4], 7 / DIVISORS)


def test_true_division_of_integers_by_zero_is_ieee():
    x = tfd.constant(np.array([1, -1, 0], np.int32))
    got = run(x / 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        np.testing.assert_array_equal(got, np.array([1, -1, 0], np.int32) / 0)
    u = tfd.constant(np.array([200, 3], np.uint8))
    got = run(u / tfd.constant(np.array([3, 2], np.uint8)))
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, np.array([200, 3], np.float32) / np.float32([3, 2]))


def test_float_division_is_as_numpy_with_inf_and_nan():
    xs = np.array([1, -1, 0, np.inf, -7, 7, np.nan, 3], np.float32)
    ys = np.array([0, 0, 0, np.inf, 2, -0.0, 1, 4], np.float32)
    x, y = tfd.constant(xs), tfd.constant(ys)
    got = run([x / y, tfd.div(x, y), tfd.divide(x, y), x // y, x % y])
    with np.errstate(divide="ignore", invalid="ignore"):
        for g in got[:3]:
            assert g.dtype == np.float32
            np.testing.assert_array_equal(g, xs / ys)
        np.testing.assert_array_equal(got[3], xs // ys)
        np.testing.assert_array_equal(got[4], xs % ys)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_div_floors_integers_as_python2(dtype):
    xs, ys = INTS.astype(dtype), DIVISORS.astype(dtype)
    x, y = tfd.constant(xs), tfd.constant(ys)
    got = run([tfd.div(x, y), x // y, tfd.floordiv(x, y), x % y, tfd.floormod(x, y),
               tfd.mod(x, y), tfd.truncatediv(x, y), tfd.truncatemod(x, y)])
    for g in got:
        assert g.dtype == dtype
    for g in got[:3]:
        np.testing.assert_array_equal(g, xs // ys)
    for g in got[3:6]:
        np.testing.assert_array_equal(g, xs % ys)
    np.testing.assert_array_equal(got[6], np.trunc(xs / ys).astype(dtype))
    np.testing.assert_array_equal(got[7], np.fmod(xs, ys))
    with pytest.raises(tfd.errors.InvalidArgumentError):
        run(tfd.div(x, 0))
    with pytest.raises(TypeError, match="integers"):
        tfd.truncatediv(1.5, tfd.constant(2.0))


def test_truncatemod_of_floats_is_fmod():
    xs = np.array([7.5, -7.5, 1.0, -1.0], np.float64)
    ys = np.array([2.0, 2.0, np.inf, 0.0], np.float64)
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(run(tfd.truncatemod(xs, tfd.constant(ys))),
                                      np.fmod(xs, ys))


# Dropout with a fed keep_prob -------------------------------------------------
def test_dropout_takes_a_fed_keep_prob():
    keep_prob = tfd.placeholder(tfd.float32, [], name="keep_prob")
    xs = np.random.RandomState(0).uniform(1, 2, size=4000).astype(np.float32)
    y = tfd.nn.dropout(tfd.constant(xs), keep_prob)
    with tfd.Session() as sess:
        np.testing.assert_array_equal(sess.run(y, {keep_prob: 1.0}), xs)
        half = sess.run(y, {keep_prob: 0.5})
    kept = half != 0
    assert abs(kept.mean() - 0.5) < 0.05  # 4000 draws: over 6 standard deviations
    np.testing.assert_allclose(half[kept], xs[kept] * 2, rtol=1e-6)


def test_dropout_with_a_tensor_rate_follows_the_graph_seed():
    def draw(seed):
        with tfd.Graph().as_default():
            tfd.set_random_seed(seed)
            rate = tfd.placeholder(tfd.float32, [])
            y = tfd.nn.dropout(tfd.ones([1000]), rate=rate)
            with tfd.Session() as sess:
                return [sess.run(y, {rate: 0.25}) for _ in range(2)]

    a, b = draw(5), draw(5)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    assert not np.array_equal(a[0], a[1])
    assert not np.array_equal(a[0], draw(6)[0])
    assert set(np.unique(a[0])) <= {0.0, np.float32(1 / np.float32(0.75))}


def test_dropout_with_a_tensor_keep_prob_has_the_gradient_of_its_mask():
    keep = tfd.placeholder(tfd.float32, [])
    x = tfd.constant(np.ones(500, np.float32))
    y = tfd.nn.dropout(x, keep, seed=3)
    (g,) = tfd.gradients(y, [x])
    got_y, got_g = run([y, g], {keep: 0.5})
    np.testing.assert_array_equal(got_g, got_y)  # d(x / keep * mask)/dx = mask / keep


# Array functions --------------------------------------------------------------
def test_split_into_equal_pieces_and_by_sizes():
    xs = np.arange(24, dtype=np.float32).reshape(4, 6)
    x = tfd.constant(xs)
    got = run([tfd.split(x, 2), tfd.split(x, 3, axis=1), tfd.split(x, [1, 3, 2], 1),
               tfd.split(x, [1, -1, 2], axis=-1), tfd.split(x, np.array([3, 1]), num=2)])
    for g, w in zip(got, [np.split(xs, 2), np.split(xs, 3, axis=1),
                          np.split(xs, [1, 4], axis=1), np.split(xs, [1, 4], axis=1),
                          np.split(xs, [3])]):
        assert len(g) == len(w)
        for a, b in zip(g, w):
            np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="do not fit"):
        tfd.split(x, [1, 2], axis=1)
    with pytest.raises(TypeError, match="tensor"):
        tfd.split(x, tfd.constant([3, 3]), axis=1)


def test_split_by_sizes_with_an_unknown_dimension():
    p = tfd.placeholder(tfd.float32, [None, 2])
    pieces = tfd.split(p, [2, -1, 1])
    xs = np.arange(12, dtype=np.float32).reshape(6, 2)
    got = run(pieces, {p: xs})
    for a, b in zip(got, np.split(xs, [2, 5])):
        np.testing.assert_array_equal(a, b)
    (g,) = tfd.gradients(tfd.reduce_sum(pieces[1]) * 2.0, [p])
    np.testing.assert_array_equal(run(g, {p: xs}), np.repeat([0, 0, 2, 2, 2, 0], 2)
                                  .reshape(6, 2).astype(np.float32))


@pytest.mark.parametrize("shape", [[5], [3, 4], [2, 3, 4], []])
def test_where_of_a_condition_alone_gives_coordinates(shape):
    cond = np.random.RandomState(1).uniform(size=shape) > 0.5
    got = run(tfd.where(tfd.constant(cond)))
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, np.argwhere(cond))
    assert run(tfd.where(tfd.constant(np.zeros([2, 3], bool)))).shape == (0, 2)


def test_where_chooses_between_x_and_y():
    cond = tfd.constant([True, False, True])
    np.testing.assert_array_equal(run(tfd.where(cond, [1.0, 2.0, 3.0], tfd.zeros([3]))),
                                  [1.0, 0.0, 3.0])
    with pytest.raises(ValueError, match="both"):
        tfd.where(cond, x=tfd.zeros([3]))


@pytest.mark.parametrize("mask_shape,axis", [([4], 0), ([4, 3], 0), ([3], 1), ([3, 2], 1)])
def test_boolean_mask_against_numpy(mask_shape, axis):
    xs = np.arange(4 * 3 * 2, dtype=np.float32).reshape(4, 3, 2)
    mask = np.random.RandomState(2).uniform(size=mask_shape) > 0.4
    got = run(tfd.boolean_mask(tfd.constant(xs), tfd.constant(mask), axis=axis))
    index = (slice(None),) * axis + (mask,)
    np.testing.assert_array_equal(got, xs[index])
    with pytest.raises(ValueError, match="known rank"):
        tfd.boolean_mask(xs, tfd.placeholder(tfd.bool))


def test_reduce_all_and_any_as_numpy_even_of_nothing():
    xs = np.array([[True, False, True], [True, True, True]])
    for axis in (None, 0, 1):
        np.testing.assert_array_equal(run(tfd.reduce_all(xs, axis)), np.all(xs, axis))
        np.testing.assert_array_equal(run(tfd.reduce_any(xs, axis)), np.any(xs, axis))
    empty = np.zeros([0], bool)
    assert run(tfd.reduce_all(empty)) and not run(tfd.reduce_any(empty))
    assert run(tfd.reduce_all(xs, 1, keepdims=True)).shape == (2, 1)


def test_asserts_pass_or_fail_the_step_naming_their_data():
    x = tfd.placeholder(tfd.float32, [3])
    checks = [tfd.assert_positive(x, message="x must be > 0"),
              tfd.assert_less(x, 10.0), tfd.debugging.assert_equal(x, x)]
    with tfd.control_dependencies(checks):
        y = tfd.identity(x * 2.0)
    with tfd.Session() as sess:
        np.testing.assert_array_equal(sess.run(y, {x: [1, 2, 3]}), [2, 4, 6])
        with pytest.raises(tfd.errors.InvalidArgumentError,
                           match=r"assertion failed: \[x must be > 0\] .*\[1 -2 3\]"):
            sess.run(y, {x: [1, -2, 3]})
        with pytest.raises(tfd.errors.InvalidArgumentError, match="x < y"):
            sess.run(y, {x: [1, 2, 30]})
        failing = tfd.Assert(tfd.constant(False), ["never", tfd.constant([1, 2, 3, 4])],
                             summarize=2)
        with pytest.raises(tfd.errors.InvalidArgumentError,
                           match=r"assertion failed: \[never\] \[1 2\.\.\.\]"):
            sess.run(failing)


@pytest.mark.parametrize("bad,found", [(np.inf, "Inf"), (-np.inf, "Inf"), (np.nan, "NaN")])
def test_check_numerics_and_its_gradient(bad, found):
    x = tfd.placeholder(tfd.float64, [3])
    scale = tfd.placeholder(tfd.float64, [])
    y = tfd.check_numerics(x, "logits") * scale
    (g,) = tfd.gradients(tfd.reduce_sum(y), [x])
    edge = np.array([np.finfo(np.float64).tiny / 4, -0.0, np.finfo(np.float64).max])
    with tfd.Session() as sess:
        np.testing.assert_array_equal(sess.run(y, {x: edge, scale: 1.0}), edge)
        with pytest.raises(tfd.errors.InvalidArgumentError,
                           match="logits : Tensor had %s values" % found):
            sess.run(y, {x: [1.0, bad, 2.0], scale: 1.0})
        # A gradient that is not finite is caught where it crosses the check.
        with pytest.raises(tfd.errors.InvalidArgumentError, match="detected in gradient"):
            sess.run(g, {x: edge, scale: bad})


def test_pad_with_zeros_and_with_a_constant_value():
    xs = np.arange(6, dtype=np.float32).reshape(2, 3)
    paddings = [[1, 0], [2, 1]]
    x = tfd.constant(xs)
    got = run([tfd.pad(x, paddings), tfd.pad(x, paddings, constant_values=-1.5),
               tfd.pad(tfd.constant(np.array([1, 2], np.int64)), [[1, 2]], "constant", None, 9)])
    np.testing.assert_array_equal(got[0], np.pad(xs, paddings))
    np.testing.assert_array_equal(got[1], np.pad(xs, paddings, constant_values=-1.5))
    np.testing.assert_array_equal(got[2], [9, 1, 2, 9, 9])
    (g,) = tfd.gradients(tfd.reduce_sum(tfd.pad(x, paddings, constant_values=3.0) * 2.0), [x])
    np.testing.assert_array_equal(run(g), np.full((2, 3), 2.0, np.float32))
    with pytest.raises(ValueError, match="mode"):
        tfd.pad(x, paddings, "WRAP")


def test_pad_reflect_and_symmetric_are_numpys_reflect_and_symmetric():
    xs = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = tfd.constant(xs)
    for mode, paddings in (("REFLECT", [[2, 1], [3, 0]]), ("SYMMETRIC", [[3, 3], [0, 4]]),
                           ("reflect", [[0, 0], [1, 1]])):
        padded = tfd.pad(x, paddings, mode)
        assert padded.shape.dims == [3 + sum(paddings[0]), 4 + sum(paddings[1])]
        np.testing.assert_array_equal(run(padded), np.pad(xs, paddings, mode.lower()))
        # Each element's gradient: how many times the padded tensor holds it.
        (g,) = tfd.gradients(tfd.reduce_sum(padded), [x])
        copies = np.zeros(xs.size)
        index = np.pad(np.arange(xs.size).reshape(xs.shape), paddings, mode.lower())
        np.add.at(copies, index.ravel(), 1.0)
        np.testing.assert_array_equal(run(g), copies.reshape(xs.shape))
    with pytest.raises(tfd.errors.InvalidArgumentError, match="at most 2 each in REFLECT"):
        run(tfd.pad(x, [[3, 0], [0, 0]], "REFLECT"))


def test_range_as_tf1():
    got = run([tfd.range(5), tfd.range(limit=5), tfd.range(2, 9, 3), tfd.range(0, 1, 0.25),
               tfd.range(5, dtype=tfd.float64), tfd.range(5, 0, -2)])
    want = [np.arange(5), np.arange(5), np.arange(2, 9, 3), np.arange(0, 1, 0.25),
            np.arange(5.0), np.arange(5, 0, -2)]
    dtypes = [np.int32, np.int32, np.int32, np.float32, np.float64, np.int32]
    for g, w, d in zip(got, want, dtypes):
        assert g.dtype == d
        np.testing.assert_array_equal(g, w)
    n = tfd.placeholder(tfd.int64, [])
    got = run(tfd.range(n), {n: 3})
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, [0, 1, 2])


def test_placeholder_with_default_takes_its_shape_positionally():
    p = tfd.placeholder_with_default([1.0, 2.0], [None])
    assert p.shape.as_list() == [None]
    with tfd.Session() as sess:
        np.testing.assert_array_equal(sess.run(p), [1.0, 2.0])
        np.testing.assert_array_equal(sess.run(p, {p: [3.0, 4.0, 5.0]}), [3.0, 4.0, 5.0])


@pytest.mark.parametrize("dtype", [tfd.int32, tfd.int64])
def test_random_uniform_of_integers(dtype):
    tfd.set_random_seed(7)
    x = tfd.random_uniform([5000], minval=-3, maxval=4, dtype=dtype)
    got = run(x)
    assert got.dtype == dtype.as_numpy_dtype
    assert set(np.unique(got)) == set(range(-3, 4))
    with tfd.Graph().as_default():
        tfd.set_random_seed(7)
        again = run(tfd.random_uniform([5000], minval=-3, maxval=4, dtype=dtype))
    np.testing.assert_array_equal(got, again)
    with pytest.raises(ValueError, match="maxval"):
        tfd.random_uniform([2], dtype=dtype)


def test_random_uniform_floats_take_tensor_bounds():
    lo, hi = tfd.placeholder(tfd.float32, []), tfd.placeholder(tfd.float32, [])
    got = run(tfd.random_uniform([1000], lo, hi, seed=1), {lo: 10.0, hi: 12.0})
    assert got.min() >= 10.0 and got.max() < 12.0 and got.max() > 11.5


def test_report_uninitialized_variables_of_every_variable():
    a = tfd.Variable(1.0, name="a")
    tfd.Variable(2.0, name="b")
    report = tfd.report_uninitialized_variables()
    with tfd.Session() as sess:
        assert list(sess.run(report)) == [b"a", b"b"]
        sess.run(a.initializer)
        assert list(sess.run(report)) == [b"b"]
        assert list(sess.run(tfd.report_uninitialized_variables([a]))) == []


def test_cumsum_runs_along_axis_0_by_default():
    xs = np.arange(12, dtype=np.float64).reshape(3, 4)
    x = tfd.constant(xs)
    got = run([tfd.cumsum(x), tfd.cumsum(x, axis=1), tfd.cumsum(x, 1, exclusive=True),
               tfd.cumsum(x, reverse=True)])
    np.testing.assert_array_equal(got[0], np.cumsum(xs, 0))
    np.testing.assert_array_equal(got[1], np.cumsum(xs, 1))
    np.testing.assert_array_equal(got[2], np.cumsum(xs, 1) - xs)
    np.testing.assert_array_equal(got[3], np.cumsum(xs[::-1], 0)[::-1])


# Reductions and clipping ------------------------------------------------------
def test_clip_by_value_as_numpy_with_nan_and_inf():
    xs = np.array([-np.inf, -2, -1, 0, 0.5, 1, 3, np.inf, np.nan], np.float32)
    got = run(tfd.clip_by_value(tfd.constant(xs), -1.0, 1.0))
    np.testing.assert_array_equal(got, np.clip(xs, -1, 1))
    check_gradient(lambda x: tfd.clip_by_value(x, -1.0, 1.0) * x,
                   np.array([-2.0, -0.5, 0.25, 0.75, 3.0]))


def test_reduce_logsumexp_is_stable_with_inf():
    xs = np.array([[1000.0, 1000.0, -1000.0],
                   [-np.inf, -np.inf, -np.inf],
                   [np.inf, 1.0, -np.inf],
                   [1.0, np.nan, 2.0],
                   [-1.0, 0.5, 2.0]])
    x = tfd.constant(xs)
    got = run([tfd.reduce_logsumexp(x, axis=1), tfd.reduce_logsumexp(x, 1, keepdims=True),
               tfd.reduce_logsumexp(x[4:])])
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        finite_max = np.where(np.isfinite(xs.max(1)), xs.max(1), 0)
        want = np.log(np.exp(xs - finite_max[:, None]).sum(1)) + finite_max
    np.testing.assert_allclose(got[0], want, rtol=1e-12)
    np.testing.assert_allclose(want[[0, 1, 2, 4]], [1000 + np.log(2), -np.inf, np.inf,
                                                    np.log(np.exp(xs[4]).sum())], rtol=1e-12)
    assert np.isnan(got[0][3])
    np.testing.assert_allclose(got[1], want[:, None], rtol=1e-12)
    np.testing.assert_allclose(got[2], np.log(np.exp(xs[4]).sum()), rtol=1e-12)
    check_gradient(lambda x: tfd.reduce_logsumexp(x, axis=0),
                   np.array([[0.5, -1.0], [2.0, 0.1], [-0.3, 0.7]]))


# nn ---------------------------------------------------------------------------
def softmax_ref(x, axis):
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


@pytest.mark.parametrize("axis", [None, -1, 0, 1, -3])
def test_softmax_and_log_softmax_along_an_axis(axis):
    xs = np.random.RandomState(2).normal(size=(3, 4, 5)) * 3
    x = tfd.constant(xs)
    got = run([tfd.nn.softmax(x, axis=axis), tfd.nn.log_softmax(x, axis)])
    a = -1 if axis is None else axis
    np.testing.assert_allclose(got[0], softmax_ref(xs, a), rtol=1e-12)
    np.testing.assert_allclose(got[1], np.log(softmax_ref(xs, a)), rtol=1e-12, atol=1e-14)
    w = np.random.RandomState(3).normal(size=(3, 4, 5))
    check_gradient(lambda v: tfd.nn.softmax(v, axis) * w, xs)
    check_gradient(lambda v: tfd.nn.log_softmax(v, axis) * w, xs)


def test_top_k_and_in_top_k():
    xs = np.array([[1.0, 5.0, 3.0, 5.0], [0.0, -1.0, 2.0, 1.0]], np.float32)
    values, indices = tfd.nn.top_k(xs, 2)
    top = tfd.nn.top_k(tfd.constant(xs), k=3)
    got = run([values, indices, top.values, top.indices])
    np.testing.assert_array_equal(got[0], [[5, 5], [2, 1]])
    np.testing.assert_array_equal(got[1], [[1, 3], [2, 3]])
    assert got[1].dtype == np.int32
    np.testing.assert_array_equal(got[2], [[5, 5, 3], [2, 1, 0]])
    np.testing.assert_array_equal(run(tfd.nn.top_k(xs).values), [[5], [2]])
    got = run(tfd.nn.in_top_k(xs, [2, 1], 2))
    np.testing.assert_array_equal(got, [False, False])
    got = run(tfd.nn.in_top_k(tfd.constant(xs), tfd.constant([3, 0], tfd.int64), k=3))
    np.testing.assert_array_equal(got, [True, True])


def test_lrn_is_tf1_formula():
    xs = np.random.RandomState(4).normal(size=(2, 3, 3, 8))
    for fn in (tfd.nn.lrn, tfd.nn.local_response_normalization):
        got = run([fn(tfd.constant(xs)), fn(tfd.constant(xs), 2, 0.5, 0.1, 0.75)])
        for g, (r, bias, alpha, beta) in zip(got, [(5, 1, 1, 0.5), (2, 0.5, 0.1, 0.75)]):
            sq = np.stack([np.sum(xs[..., max(0, d - r):d + r + 1] ** 2, -1)
                           for d in range(8)], -1)
            np.testing.assert_allclose(g, xs / (bias + alpha * sq) ** beta, rtol=1e-6)


def conv_ref(x, f, stride, padding, dilation=1, depthwise=False):
    """Cross-correlation of NHWC x with filter f, numpy loops."""
    n, h, w, c = x.shape
    fh, fw = f.shape[:2]
    eh, ew = (fh - 1) * dilation + 1, (fw - 1) * dilation + 1
    if padding == "SAME":
        oh, ow = -(-h // stride), -(-w // stride)
        ph, pw = max((oh - 1) * stride + eh - h, 0), max((ow - 1) * stride + ew - w, 0)
        x = np.pad(x, [[0, 0], [ph // 2, ph - ph // 2], [pw // 2, pw - pw // 2], [0, 0]])
    else:
        oh, ow = (h - eh) // stride + 1, (w - ew) // stride + 1
    out = []
    for i in range(oh):
        row = []
        for j in range(ow):
            patch = x[:, i * stride:i * stride + eh:dilation, j * stride:j * stride + ew:dilation]
            if depthwise:  # [n, fh, fw, c] x [fh, fw, c, m] -> [n, c * m]
                row.append(np.einsum("nhwc,hwcm->ncm", patch, f).reshape(n, -1))
            else:
                row.append(np.einsum("nhwc,hwco->no", patch, f))
        out.append(np.stack(row, 1))
    return np.stack(out, 1)


def test_depthwise_conv2d_with_strides_and_rates():
    rs = np.random.RandomState(5)
    xs, fs = rs.normal(size=(2, 7, 6, 3)), rs.normal(size=(3, 2, 3, 2))
    x, f = tfd.constant(xs), tfd.constant(fs)
    got = run([tfd.nn.depthwise_conv2d(x, f, [1, 1, 1, 1], "VALID"),
               tfd.nn.depthwise_conv2d(x, f, [1, 2, 2, 1], "SAME"),
               tfd.nn.depthwise_conv2d(x, f, [1, 1, 1, 1], "SAME", rate=[2, 2]),
               tfd.nn.depthwise_conv2d_native(x, f, [1, 2, 1, 1], "VALID")])
    want = [conv_ref(xs, fs, 1, "VALID", depthwise=True),
            conv_ref(xs, fs, 2, "SAME", depthwise=True),
            conv_ref(xs, fs, 1, "SAME", dilation=2, depthwise=True)]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got[3], conv_ref(xs, fs, 1, "VALID", depthwise=True)[:, ::2],
                               rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match="rate"):
        tfd.nn.depthwise_conv2d(x, f, [1, 2, 2, 1], "SAME", rate=[2, 2])


@pytest.mark.parametrize("stride,padding", [(1, "SAME"), (2, "SAME"), (2, "VALID")])
def test_conv2d_transpose_is_the_adjoint_of_conv2d(stride, padding):
    rs = np.random.RandomState(6)
    xs, fs = rs.normal(size=(2, 6, 5, 3)), rs.normal(size=(3, 3, 3, 4))
    conv = conv_ref(xs, fs, stride, padding)
    ys = rs.normal(size=conv.shape)
    back = run(tfd.nn.conv2d_transpose(tfd.constant(ys), tfd.constant(fs), xs.shape,
                                       [1, stride, stride, 1], padding))
    assert back.shape == xs.shape
    np.testing.assert_allclose(np.sum(back * xs), np.sum(conv * ys), rtol=1e-10)
    with pytest.raises(ValueError, match="channels"):
        tfd.nn.conv2d_transpose(tfd.constant(ys), tfd.constant(fs[..., :3]), xs.shape,
                                [1, stride, stride, 1], padding)


def test_fused_batch_norm_training_and_inference():
    rs = np.random.RandomState(7)
    xs = rs.normal(2.0, 3.0, size=(4, 3, 2, 5)).astype(np.float32)
    scale, offset = rs.uniform(0.5, 2, 5).astype(np.float32), rs.normal(size=5).astype(np.float32)
    mean, var = xs.mean((0, 1, 2)), xs.var((0, 1, 2))
    y, bm, bv = tfd.nn.fused_batch_norm(tfd.constant(xs), scale, offset)
    given = rs.normal(size=5).astype(np.float32), rs.uniform(1, 2, 5).astype(np.float32)
    yi, im, iv = tfd.nn.fused_batch_norm(tfd.constant(xs), scale, offset, *given,
                                         epsilon=0.01, is_training=False)
    got = run([y, bm, bv, yi, im, iv])
    np.testing.assert_allclose(got[0], (xs - mean) / np.sqrt(var + 0.001) * scale + offset,
                               rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got[1], mean, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[2], var * 24 / 23, rtol=1e-5)  # unbiased, as TF1's
    np.testing.assert_allclose(got[3], (xs - given[0]) / np.sqrt(given[1] + 0.01) * scale
                               + offset, rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(got[4], given[0])
    np.testing.assert_array_equal(got[5], given[1])
    with pytest.raises(ValueError, match="is_training"):
        tfd.nn.fused_batch_norm(tfd.constant(xs), scale, offset, is_training=False)


def test_batch_normalization_and_moments_with_gradients():
    rs = np.random.RandomState(8)
    xs = rs.normal(1.0, 2.0, size=(6, 4))
    scale, offset = rs.uniform(0.5, 2, 4), rs.normal(size=4)
    mean, variance = tfd.nn.moments(tfd.constant(xs), [0])
    y = tfd.nn.batch_normalization(tfd.constant(xs), mean, variance, offset, scale, 1e-3)
    m2, v2 = tfd.nn.moments(tfd.constant(xs), axes=[0, 1], keep_dims=True)
    got = run([mean, variance, y, m2, v2, tfd.nn.batch_normalization(xs, 1.0, 4.0, None, None,
                                                                      0.0)])
    np.testing.assert_allclose(got[0], xs.mean(0), rtol=1e-12)
    np.testing.assert_allclose(got[1], xs.var(0), rtol=1e-12)
    np.testing.assert_allclose(got[2], (xs - xs.mean(0)) / np.sqrt(xs.var(0) + 1e-3) * scale
                               + offset, rtol=1e-10, atol=1e-12)
    assert got[3].shape == (1, 1)
    np.testing.assert_allclose(got[3], [[xs.mean()]], rtol=1e-12)
    np.testing.assert_allclose(got[4], [[xs.var()]], rtol=1e-12)
    np.testing.assert_allclose(got[5], (xs - 1.0) / 2.0, rtol=1e-12)

    w = rs.normal(size=(6, 4))

    def normalized(v):
        m, s = tfd.nn.moments(v, [0])
        return tfd.nn.batch_normalization(v, m, s, offset, scale, 1e-3) * w

    check_gradient(normalized, xs, rtol=1e-5, atol=1e-7)
    check_gradient(lambda v: tfd.nn.moments(v, [1])[1] * w[0, :], xs[:4].T.copy())
    check_gradient(lambda v: tfd.nn.moments(v, [0, 1])[0] * 3.0, xs)


def test_indexing_by_scalar_tensors_as_tf1():
    """x[i], x[a:b], x[i, 1:] with i, a, b int32 or int64 scalar tensors
    (a loop counter, a fed position), mixed with ints, slices, ... and None;
    the gradient flows back to the rows read."""
    xs = np.arange(24, dtype=np.float32).reshape(4, 6)
    x = tfd.constant(xs)
    i = tfd.placeholder(tfd.int32, [])
    j = tfd.placeholder(tfd.int64, [])
    cases = [(x[i], xs[2]), (x[i, 1:], xs[2, 1:]), (x[1:i], xs[1:2]), (x[:, j], xs[:, 3]),
             (x[i:, ::2], xs[2:, ::2]), (x[j - 1, i], xs[2, 2]), (x[..., i, None], xs[..., 2, None]),
             (x[-i], xs[-2]), (x[i:j], xs[2:3])]
    got = run([c for c, _ in cases], {i: 2, j: np.int64(3)})
    for (tensor, want), value in zip(cases, got):
        np.testing.assert_array_equal(value, want, err_msg=tensor.name)
    (g,) = tfd.gradients(tfd.reduce_sum(x[i] * 2.0), [x])
    want = np.zeros_like(xs)
    want[1] = 2.0
    np.testing.assert_array_equal(run(g, {i: 1}), want)
    with pytest.raises(TypeError, match="must be an int32 or int64 scalar, got float32"):
        x[tfd.constant(1.0)]
    with pytest.raises(TypeError, match="must be an int32 or int64 scalar"):
        x[tfd.constant([1, 2])]
    with pytest.raises(TypeError, match="not True"):
        x[True]
    with pytest.raises(tfd.errors.InvalidArgumentError):
        run(x[i], {i: 7})  # past the end, at run time
