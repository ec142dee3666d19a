"""tfd.TensorArray as TF1 users write it: written and read in a
tfd.while_loop (carried as a loop variable), through a tfd.cond, unstacked
and stacked, split and concatenated; static element shapes from what is
written; gradients through all of it against numpy, two tfd.gradients
calls apart; and TF1's errors (a second write, a second read, a wrong
dtype, an inconsistent shape, a missing size)."""
import numpy as np
import pytest

import tfd


def run(fetches, feed=None):
    with tfd.Session() as sess:
        sess.run(tfd.global_variables_initializer())
        return sess.run(fetches, feed)


def test_write_read_stack_and_the_element_shape_they_infer():
    ta = tfd.TensorArray(tfd.float32, size=3, clear_after_read=False)
    assert ta.element_shape == tfd.TensorShape(None)
    ta = ta.write(0, [1.0, 2.0]).write(1, tfd.constant([3.0, 4.0])).write(2, [5.0, 6.0])
    assert ta.element_shape == tfd.TensorShape([2])
    first, stacked, size = ta.read(0), ta.stack(), ta.size()
    assert first.shape == tfd.TensorShape([2])
    assert stacked.shape == tfd.TensorShape([None, 2])
    got = run([first, stacked, size])
    np.testing.assert_array_equal(got[0], [1, 2])
    np.testing.assert_array_equal(got[1], [[1, 2], [3, 4], [5, 6]])
    assert got[2] == 3


def test_a_loop_writes_one_element_per_iteration_and_reads_its_inputs():
    x = tfd.placeholder(tfd.float32, [None, 2])
    n = tfd.shape(x)[0]
    inputs = tfd.TensorArray(tfd.float32, size=n).unstack(x)
    outputs = tfd.TensorArray(tfd.float32, size=n)

    def body(t, total, out):
        total = total + inputs.read(t)
        return t + 1, total, out.write(t, total * 10.0)

    _, total, outputs = tfd.while_loop(lambda t, *_: t < n, body,
                                       [0, tfd.zeros([2]), outputs])
    assert isinstance(outputs, tfd.TensorArray)
    value = np.arange(10, dtype=np.float32).reshape(5, 2)
    got_total, got_out = run([total, outputs.stack()], {x: value})
    np.testing.assert_allclose(got_total, value.sum(0))
    np.testing.assert_allclose(got_out, 10 * np.cumsum(value, 0))


def test_gradients_through_a_loop_over_arrays_match_numpy():
    x = tfd.constant(np.arange(12, dtype=np.float32).reshape(4, 3) / 10)
    w = tfd.Variable(np.float32(0.5), name="w")
    inputs = tfd.TensorArray(tfd.float32, size=4).unstack(x)

    def body(t, h, out):
        h = tfd.tanh(h * w + inputs.read(t))
        return t + 1, h, out.write(t, h)

    _, _, out = tfd.while_loop(lambda t, *_: t < 4, body,
                               [0, tfd.zeros([3]), tfd.TensorArray(tfd.float32, size=4)])
    loss = tfd.reduce_sum(tfd.square(out.stack()))
    dx, dw = tfd.gradients(loss, [x, w])
    got_dx, got_dw = run([dx, dw])

    # The same recurrence and its backward pass in float64 numpy.
    xs, wv = np.arange(12, dtype=np.float64).reshape(4, 3) / 10, 0.5
    hs = [np.zeros(3)]
    for t in range(4):
        hs.append(np.tanh(hs[-1] * wv + xs[t]))
    want_dx, want_dw, dh = np.zeros_like(xs), 0.0, np.zeros(3)
    for t in reversed(range(4)):
        dh = dh + 2 * hs[t + 1]
        dpre = dh * (1 - hs[t + 1] ** 2)
        want_dx[t] = dpre
        want_dw += float((dpre * hs[t]).sum())
        dh = dpre * wv
    np.testing.assert_allclose(got_dx, want_dx, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_dw, want_dw, rtol=1e-5)


def test_two_gradient_calls_keep_their_gradient_arrays_apart():
    x = tfd.constant([[1.0, 2.0], [3.0, 4.0]])
    ta = tfd.TensorArray(tfd.float32, size=2, clear_after_read=False).unstack(x)
    y = ta.stack()
    first = tfd.gradients(tfd.reduce_sum(y * 2.0), [x])[0]
    second = tfd.gradients(tfd.reduce_sum(y * y), [x])[0]
    # An array's gradient array by hand (TF1's TensorArray.grad): nothing written, zeros.
    by_hand = ta.grad("by_hand").read(1)
    assert by_hand.shape == tfd.TensorShape([2])
    got_first, got_second, got_by_hand = run([first, second, by_hand])
    np.testing.assert_array_equal(got_by_hand, [0.0, 0.0])
    np.testing.assert_allclose(got_first, np.full((2, 2), 2.0))
    np.testing.assert_allclose(got_second, 2 * np.array([[1.0, 2.0], [3.0, 4.0]]))


def test_split_concat_and_scatter_gather_round_trip_with_gradients():
    x = tfd.constant(np.arange(10, dtype=np.float32).reshape(5, 2))
    parts = tfd.TensorArray(tfd.float32, size=3).split(x, [2, 0, 3])
    joined = parts.concat()
    assert joined.shape == tfd.TensorShape([None, 2])
    rows = tfd.TensorArray(tfd.float32, size=5, clear_after_read=False).scatter([4, 3, 2, 1, 0], x)
    picked = rows.gather([0, 0, 4])
    dx_joined, dx_picked = tfd.gradients(tfd.reduce_sum(joined * joined), [x])[0], \
        tfd.gradients(tfd.reduce_sum(picked), [x])[0]
    got = run([joined, picked, dx_joined, dx_picked])
    value = np.arange(10, dtype=np.float32).reshape(5, 2)
    np.testing.assert_array_equal(got[0], value)
    np.testing.assert_array_equal(got[1], value[[4, 4, 0]])
    np.testing.assert_allclose(got[2], 2 * value)
    # Row 4 of x went to index 0, gathered twice; row 0 to index 4, once.
    np.testing.assert_allclose(got[3], [[1, 1], [0, 0], [0, 0], [0, 0], [2, 2]])


def test_a_cond_carries_an_array_and_only_the_taken_branch_writes():
    p = tfd.placeholder(tfd.bool, [])
    ta = tfd.TensorArray(tfd.float32, size=1, element_shape=[])
    ta = tfd.cond(p, lambda: ta.write(0, 1.0), lambda: ta.write(0, -1.0))
    assert isinstance(ta, tfd.TensorArray)
    value = ta.read(0)
    with tfd.Session() as sess:
        assert sess.run(value, {p: True}) == 1.0
        assert sess.run(value, {p: False}) == -1.0


def test_a_dynamic_array_grows_and_unwritten_elements_read_as_zeros():
    ta = tfd.TensorArray(tfd.float32, size=0, dynamic_size=True, element_shape=[2])
    _, ta = tfd.while_loop(lambda i, ta: i < 3, lambda i, ta: (i + 1, ta.write(2 * i, [1.0, 1.0])),
                           [0, ta])
    size, stacked = run([ta.size(), ta.stack()])
    assert size == 5
    np.testing.assert_array_equal(stacked[:, 0], [1, 0, 1, 0, 1])


def test_tf1_errors_a_user_meets():
    with pytest.raises(ValueError, match="Size must be provided"):
        tfd.TensorArray(tfd.float32)
    ta = tfd.TensorArray(tfd.float32, size=2)
    with pytest.raises(tfd.errors.InvalidArgumentError, match="dtype is float32"):
        ta.write(0, tfd.constant([1, 2]))
    ta = ta.write(0, [1.0, 2.0])
    with pytest.raises(ValueError, match="Inconsistent shapes"):
        ta.write(1, [1.0, 2.0, 3.0])
    twice = ta.write(0, [3.0, 4.0])
    with pytest.raises(tfd.errors.InvalidArgumentError, match="written already"):
        run(twice.read(0))
    reread = ta.read(0)
    with tfd.Session() as sess:
        with pytest.raises(tfd.errors.InvalidArgumentError, match="cleared"):
            sess.run([reread, ta.read(0)])


def test_gradients_through_writes_in_a_cond_in_a_loop_and_arrays_made_per_iteration():
    x = tfd.constant([1.0, -2.0, 3.0, -4.0])
    w = tfd.Variable(2.0, name="w")
    inputs = tfd.TensorArray(tfd.float32, size=4).unstack(x)

    def body(t, out):
        v = inputs.read(t)
        return t + 1, tfd.cond(v > 0, lambda: out.write(t, v * w), lambda: out.write(t, v * w * w))

    _, out = tfd.while_loop(lambda t, o: t < 4, body,
                            [0, tfd.TensorArray(tfd.float32, size=4, element_shape=[])])
    dx, dw = tfd.gradients(tfd.reduce_sum(out.stack()), [x, w])

    m = tfd.constant(np.arange(6, dtype=np.float32).reshape(2, 3))

    def outer(i, total):
        row = m[i]
        _, squares = tfd.while_loop(lambda j, ta: j < 3,
                                    lambda j, ta: (j + 1, ta.write(j, row[j] * row[j])),
                                    [0, tfd.TensorArray(tfd.float32, size=3)])
        return i + 1, total + tfd.reduce_sum(squares.stack())

    _, total = tfd.while_loop(lambda i, t: i < 2, outer, [0, 0.0])
    dm = tfd.gradients(total, [m])[0]
    got = run([dx, dw, total, dm])
    np.testing.assert_allclose(got[0], [2, 4, 2, 4])
    np.testing.assert_allclose(got[1], (1 + 3) + 2 * 2.0 * (-2 - 4))
    assert got[2] == 55.0
    np.testing.assert_allclose(got[3], 2 * np.arange(6).reshape(2, 3))
