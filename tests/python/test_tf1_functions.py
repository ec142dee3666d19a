"""TF1's functions with TF1's signatures and numerics: division by dtype,
dropout with a fed keep_prob, split, where, pad, range, the nn functions
and the reductions, each against numpy (float64 where it matters, IEEE inf
and NaN as numpy gives them) and, where TF1 has a gradient, against finite
differences."""
import numpy as np
import pytest

import tfd


def run(fetches, feed_dict=None):
    with tfd.Session() as sess:
        return sess.run(fetches, feed_dict)


def numeric_gradient(f, x, eps=1e-6):
    """d(sum of f(x))/dx by central differences, x float64."""
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        g[i] = (np.sum(f(up)) - np.sum(f(down))) / (2 * eps)
    return g


def check_gradient(build, x0, **tol):
    """The gradient tfd.gradients gives for build(placeholder) at x0 against
    central differences of the same graph, both in float64."""
    x = tfd.placeholder(tfd.float64, x0.shape)
    y = build(x)
    (g,) = tfd.gradients(y, [x])
    with tfd.Session() as sess:
        got = sess.run(g, {x: x0})
        want = numeric_gradient(lambda v: sess.run(y, {x: v}), x0)
    np.testing.assert_allclose(got, want, **tol or {"rtol": 1e-6, "atol": 1e-8})


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
