"""tfd.map_fn, scan, foldl and foldr as TF1 users call them: over one
tensor and over nested structures, with and without an initializer,
reversed, with rows known only at run time, a result dtype other than the
input's, gradients against numpy, and the errors TF1 gives."""
import numpy as np
import pytest

import tfd


def run(fetches, feed=None):
    with tfd.Session() as sess:
        return sess.run(fetches, feed)


def test_map_fn_over_a_tensor_and_over_a_structure():
    x = tfd.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    squares = tfd.map_fn(lambda row: row * row, x)
    assert squares.shape == tfd.TensorShape([3, 2])
    pairs = tfd.map_fn(lambda p: (p[0] + p[1], tfd.cast(p[1], tfd.int32)),
                       (x, x * 10.0), dtype=(tfd.float32, tfd.int32))
    got_squares, (got_sum, got_int) = run([squares, pairs])
    np.testing.assert_array_equal(got_squares, [[1, 4], [9, 16], [25, 36]])
    np.testing.assert_array_equal(got_sum, [[11, 22], [33, 44], [55, 66]])
    assert got_int.dtype == np.int32
    np.testing.assert_array_equal(got_int, [[10, 20], [30, 40], [50, 60]])


def test_map_fn_with_rows_fed_at_run_time_and_its_gradient():
    x = tfd.placeholder(tfd.float32, [None, 3])
    y = tfd.map_fn(lambda row: tfd.reduce_sum(tfd.square(row)), x)
    assert y.shape == tfd.TensorShape([None])
    dx = tfd.gradients(tfd.reduce_sum(y * tfd.range(0.0, tfd.cast(tfd.shape(x)[0], tfd.float32))),
                       [x])[0]
    value = np.arange(12, dtype=np.float32).reshape(4, 3)
    got_y, got_dx = run([y, dx], {x: value})
    np.testing.assert_allclose(got_y, (value ** 2).sum(1))
    np.testing.assert_allclose(got_dx, 2 * value * np.arange(4)[:, None])


def test_scan_forward_reversed_and_with_an_initializer():
    x = tfd.constant([1.0, 2.0, 3.0, 4.0])
    cumsum = tfd.scan(lambda a, v: a + v, x)
    backwards = tfd.scan(lambda a, v: a + v, x, reverse=True)
    running = tfd.scan(lambda a, v: (a[0] + v, a[1] * v), x,
                       initializer=(tfd.constant(0.0), tfd.constant(1.0)))
    got = run([cumsum, backwards, running])
    np.testing.assert_array_equal(got[0], [1, 3, 6, 10])
    np.testing.assert_array_equal(got[1], [10, 9, 7, 4])
    np.testing.assert_array_equal(got[2][0], [1, 3, 6, 10])
    np.testing.assert_array_equal(got[2][1], [1, 2, 6, 24])


def test_scan_gradient_matches_numpy():
    x = tfd.constant([0.5, -1.0, 2.0])
    w = tfd.Variable(0.9, name="w")
    states = tfd.scan(lambda h, v: tfd.tanh(h * w + v), x, initializer=tfd.constant(0.1))
    dx, dw = tfd.gradients(tfd.reduce_sum(states), [x, w])
    with tfd.Session() as sess:
        sess.run(tfd.global_variables_initializer())
        got_dx, got_dw = sess.run([dx, dw])
    # Central differences in float64 of the same recurrence.
    def loss(xs, wv):
        h, total = 0.1, 0.0
        for v in xs:
            h = np.tanh(h * wv + v)
            total += h
        return total
    xs, eps = np.array([0.5, -1.0, 2.0]), 1e-6
    want_dx = [(loss(xs + eps * np.eye(3)[k], 0.9) - loss(xs - eps * np.eye(3)[k], 0.9)) / (2 * eps)
               for k in range(3)]
    want_dw = (loss(xs, 0.9 + eps) - loss(xs, 0.9 - eps)) / (2 * eps)
    np.testing.assert_allclose(got_dx, want_dx, rtol=1e-4)
    np.testing.assert_allclose(got_dw, want_dw, rtol=1e-4)


def test_foldl_and_foldr_keep_their_order():
    x = tfd.constant([1.0, 2.0, 3.0])
    # a * 10 + v: the order the elements come in shows in the digits.
    left = tfd.foldl(lambda a, v: a * 10.0 + v, x)
    right = tfd.foldr(lambda a, v: a * 10.0 + v, x)
    seeded = tfd.foldl(lambda a, v: a * 10.0 + v, x, initializer=tfd.constant(4.0))
    over_pairs = tfd.foldl(lambda a, p: a + p["x"] * p["y"], {"x": x, "y": x * 2.0},
                           initializer=tfd.constant(0.0))
    assert run([left, right, seeded, over_pairs]) == [123.0, 321.0, 4123.0, 28.0]


def test_what_tf1_refuses_is_refused():
    with pytest.raises(ValueError, match="1\\+ dimensional"):
        tfd.map_fn(lambda v: v, tfd.constant(1.0))
    with pytest.raises(ValueError, match="first dimension"):
        tfd.map_fn(lambda p: p[0], (tfd.zeros([2]), tfd.zeros([3])))
    with pytest.raises(ValueError, match="pass dtype="):
        tfd.map_fn(lambda v: (v, v), tfd.zeros([2]))
    with pytest.raises(TypeError, match="callable"):
        tfd.foldl(None, tfd.zeros([2]))
