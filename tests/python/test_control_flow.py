"""tfd.cond and tfd.while_loop as TF1 users write them: lambdas that use
any tensor of the graph, nested structures, gradients through both, the
untaken branch never run, loops in loops and conds in loops, shape
invariants, and the errors: a structure mismatch, a Python bool, an exception in a branch, a
loop that never ends (the step's timeout stops it)."""
import collections

import numpy as np
import pytest

import tfd


def scalar(dtype=tfd.float32, name=None):
    return tfd.placeholder(dtype, [], name=name)


def test_cond_takes_one_branch_and_never_runs_the_other():
    p, x = scalar(tfd.bool), scalar()
    taken = tfd.Variable(0.0, name="false_taken")

    def false_fn():
        with tfd.control_dependencies([taken.assign_add(1.0)]):
            return -x

    y = tfd.cond(p, lambda: x * 3.0, false_fn)
    with tfd.Session() as sess:
        sess.run(tfd.global_variables_initializer())
        assert sess.run(y, {p: True, x: 2.0}) == 6.0
        assert sess.run(taken) == 0.0
        assert sess.run(y, {p: False, x: 2.0}) == -2.0
        assert sess.run(y, {p: True, x: 5.0}) == 15.0
        assert sess.run(taken) == 1.0  # the false branch's assign ran once


def test_cond_gradients_flow_through_the_taken_branch():
    p, x = scalar(tfd.bool), scalar(tfd.float64)
    w = tfd.Variable(np.float64(3.0), name="w")
    y = tfd.cond(p, lambda: x * w + tfd.sin(x), lambda: x * x)
    gx, gw = tfd.gradients(y, [x, w])
    with tfd.Session() as sess:
        sess.run(tfd.global_variables_initializer())
        got = sess.run([gx, gw], {p: True, x: 0.5})
        np.testing.assert_allclose(got, [3.0 + np.cos(0.5), 0.5], rtol=1e-12)
        got = sess.run([gx, gw], {p: False, x: 0.5})
        np.testing.assert_allclose(got, [1.0, 0.0], rtol=1e-12)


def test_cond_returns_its_branches_structure():
    p, a, b = scalar(tfd.bool), scalar(), scalar()
    Pair = collections.namedtuple("Pair", ["lo", "hi"])
    pair = tfd.cond(p, lambda: Pair(a, b), lambda: Pair(b, a))
    d = tfd.cond(p, lambda: {"s": a + b, "d": [a - b]}, lambda: {"s": a * b, "d": [b - a]})
    one = tfd.cond(p, lambda: [a], lambda: [b])  # not strict: the element itself
    kept = tfd.cond(p, lambda: [a], lambda: [b], strict=True)
    assert isinstance(pair, Pair) and isinstance(one, tfd.Tensor) and isinstance(kept, list)
    with tfd.Session() as sess:
        feed = {p: False, a: 2.0, b: 5.0}
        assert sess.run(list(pair), feed) == [5.0, 2.0]
        got = sess.run(d, feed)
        assert got["s"] == 10.0 and got["d"][0] == 3.0
        assert sess.run([one, kept[0]], feed) == [5.0, 5.0]


def test_cond_of_operations_returns_an_operation():
    p = scalar(tfd.bool)
    v = tfd.Variable(0.0, name="v")
    op = tfd.cond(p, lambda: v.assign_add(1.0).op, lambda: v.assign_add(10.0).op)
    assert isinstance(op, tfd.Operation)
    with tfd.Session() as sess:
        sess.run(tfd.global_variables_initializer())
        sess.run(op, {p: True})
        sess.run(op, {p: False})
        assert sess.run(v) == 11.0


def test_cond_errors_name_what_is_wrong_and_leave_the_graph_usable():
    p, x = scalar(tfd.bool), scalar()
    with pytest.raises(TypeError, match="Python bool"):
        tfd.cond(True, lambda: x, lambda: x)
    with pytest.raises(ValueError, match="different structures"):
        tfd.cond(p, lambda: (x, x), lambda: [x])
    with pytest.raises(ValueError, match="must have a return value"):
        tfd.cond(p, lambda: None, lambda: x)

    def broken():
        raise RuntimeError("the branch's own error")

    with pytest.raises(RuntimeError, match="own error"):
        tfd.cond(p, broken, lambda: x)
    with pytest.raises(tfd.errors.InvalidArgumentError):
        tfd.cond(p, lambda: x, lambda: tfd.constant(1, tfd.int32))  # float32 and int32
    y = tfd.cond(p, lambda: x + 1.0, lambda: x - 1.0)
    with tfd.Session() as sess:
        assert sess.run(y, {p: True, x: 1.0}) == 2.0


def test_while_loop_sums_and_returns_the_loop_vars_structure():
    i, total = tfd.while_loop(lambda i, s: i < 10, lambda i, s: (i + 1, s + i), [0, 0])
    single = tfd.while_loop(lambda v: v < 100.0, lambda v: v * 2.0, [tfd.constant(3.0)])
    same = tfd.while_loop(lambda v: v < 100.0, lambda v: [v * 2.0], [tfd.constant(3.0)],
                          return_same_structure=True)
    State = collections.namedtuple("State", ["n", "acc"])
    st = tfd.while_loop(lambda s: s.n < 4, lambda s: [State(s.n + 1, s.acc * 2)],
                        [State(tfd.constant(0), tfd.constant(1))])
    assert isinstance(single, tfd.Tensor) and isinstance(same, list) and isinstance(st, State)
    with tfd.Session() as sess:
        assert sess.run([i, total]) == [10, 45]
        assert sess.run(single) == 192.0
        assert sess.run(same[0]) == 192.0
        assert sess.run(list(st)) == [4, 16]


def test_while_loop_gradient_of_a_power():
    x = scalar(tfd.float64)
    _, xn = tfd.while_loop(lambda k, a: k < 5, lambda k, a: (k + 1, a * x),
                           [0, tfd.constant(1.0, tfd.float64)])
    g, = tfd.gradients(xn, [x])
    with tfd.Session() as sess:
        for v in (2.0, -0.5, 0.0):
            np.testing.assert_allclose(sess.run([xn, g], {x: v}), [v ** 5, 5 * v ** 4],
                                       rtol=1e-12)


def test_maximum_iterations_stops_a_loop_whose_condition_still_holds():
    n = tfd.while_loop(lambda v: v >= 0, lambda v: v + 1, [0], maximum_iterations=7)
    limit = tfd.placeholder(tfd.int32, [])
    fed = tfd.while_loop(lambda v: v >= 0, lambda v: v + 1, [0], maximum_iterations=limit)
    none = tfd.while_loop(lambda v: v >= 0, lambda v: v + 1, [0], maximum_iterations=-1)
    with tfd.Session() as sess:
        assert sess.run(n) == 7
        assert [sess.run(fed, {limit: v}) for v in (3, 0, 9)] == [3, 0, 9]
        assert sess.run(none) == 0  # TF1's: a limit below 1 runs no iteration


def test_a_loop_body_updates_a_variable_and_uses_outside_tensors():
    step = scalar()
    counter = tfd.Variable(0.0, name="counter")

    def body(k, acc):
        with tfd.control_dependencies([counter.assign_add(1.0)]):
            return k + 1, acc + step  # `step` enters the loop by itself

    _, acc = tfd.while_loop(lambda k, acc: k < 6, body, [0, tfd.constant(0.0)])
    with tfd.Session() as sess:
        sess.run(tfd.global_variables_initializer())
        assert sess.run(acc, {step: 0.5}) == 3.0
        assert sess.run(counter) == 6.0


def test_variables_made_in_a_body_or_a_branch_are_made_outside_them():
    """As TF1's init_scope: get_variable in a while_loop's body, or a
    tfd.Variable in a cond's branch, makes one variable outside the loop or
    cond, initialized once by global_variables_initializer; every iteration
    reads it, gradients reach it and training updates it."""
    x, p = scalar(), scalar(tfd.bool)

    def body(i, h):
        with tfd.variable_scope("cell"):
            w = tfd.get_variable("w", [], initializer=tfd.constant_initializer(0.5))
        return i + 1, h * w + x

    _, h = tfd.while_loop(lambda i, h: i < 3, body, [0, 0.0])  # x * (w^2 + w + 1)
    y = tfd.cond(p, lambda: tfd.Variable(10.0, name="in_branch") * 2.0, lambda: x)
    train = tfd.train.GradientDescentOptimizer(0.1).minimize(h)
    assert sorted(v.op.name for v in tfd.global_variables()) == [
        "cell/w", "cond/true/in_branch"]
    with tfd.Session() as sess:
        sess.run(tfd.global_variables_initializer())
        assert sess.run([h, y], {x: 2.0, p: True}) == [3.5, 20.0]
        assert sess.run(y, {x: 2.0, p: False}) == 2.0
        sess.run(train, {x: 2.0})  # dh/dw = x * (2w + 1) = 4
        np.testing.assert_allclose(sess.run("cell/w:0"), 0.1, rtol=1e-6)


def test_a_variable_initialized_from_a_tensor_of_the_body_is_refused():
    def body(i):
        tfd.Variable(tfd.cast(i, tfd.float32), name="from_i")  # TF1 asks for a callable
        return i + 1

    with pytest.raises(tfd.errors.InvalidArgumentError, match="from_i.*made inside while loop"):
        tfd.while_loop(lambda i: i < 3, body, [0])
    assert tfd.while_loop(lambda i: i < 3, lambda i: i + 1, [0]) is not None  # still usable


def test_nested_loops_and_a_cond_in_a_loop_with_gradients():
    x = scalar(tfd.float64)

    def outer(i, acc):
        _, inner = tfd.while_loop(lambda j, s: j < i, lambda j, s: (j + 1, s + x), [0, acc])
        # odd i: add x squared, even i: nothing
        extra = tfd.cond(tfd.equal(i % 2, 1), lambda: x * x, lambda: tfd.zeros_like(x))
        return i + 1, inner + extra

    # sum over i < 4 of (i * x) plus x^2 for i = 1, 3
    _, y = tfd.while_loop(lambda i, acc: i < 4, outer, [0, tfd.constant(0.0, tfd.float64)])
    g, = tfd.gradients(y, [x])
    with tfd.Session() as sess:
        np.testing.assert_allclose(sess.run([y, g], {x: 1.5}), [6 * 1.5 + 2 * 1.5 ** 2,
                                                                 6 + 4 * 1.5], rtol=1e-12)


def test_while_loop_errors():
    with pytest.raises(ValueError, match="structures differ"):
        tfd.while_loop(lambda a, b: a < 3, lambda a, b: [a + 1], [0, 0])
    with pytest.raises(tfd.errors.InvalidArgumentError):
        tfd.while_loop(lambda a: a < 3, lambda a: tfd.cast(a, tfd.float32), [0])
    with pytest.raises(ValueError, match="maximum_iterations must be an int32 or int64 scalar"):
        tfd.while_loop(lambda a: a < 3, lambda a: a + 1, [0], maximum_iterations=tfd.constant(3.0))
    with pytest.raises(ValueError, match="maximum_iterations must be an int32 or int64 scalar"):
        tfd.while_loop(lambda a: a < 3, lambda a: a + 1, [0], maximum_iterations=[1, 2])
    n = tfd.while_loop(lambda a: a < 3, lambda a: a + 1, [0])
    with tfd.Session() as sess:
        assert sess.run(n) == 3


def test_shape_invariants_let_a_loop_variable_grow():
    """As TF1: a variable keeps its initial shape unless its invariant says
    which dimensions change; the loop's result has the invariant's shape."""
    n = scalar(tfd.int32, "n")

    def grow(i, acc):
        return i + 1, {"v": tfd.concat([acc["v"], tfd.reshape(i, [1])], 0), "m": acc["m"]}
    start = (tfd.constant(0), {"v": tfd.zeros([0], tfd.int32), "m": tfd.zeros([2, 3])})
    i, acc = tfd.while_loop(lambda i, acc: i < n, grow, start,
                            shape_invariants=(tfd.TensorShape([]), {"v": [None], "m": None}))
    assert acc["v"].shape.as_list() == [None] and acc["m"].shape.dims is None
    assert (acc["v"] + tfd.zeros([5], tfd.int32)).shape.as_list() == [5]  # no [0] to clash
    with tfd.Session() as sess:
        np.testing.assert_array_equal(sess.run(acc["v"], {n: 5}), [0, 1, 2, 3, 4])
    with pytest.raises(tfd.errors.InvalidArgumentError, match="enters with shape \\[0\\]"):
        tfd.while_loop(lambda i, acc: i < n, grow, start)
    with pytest.raises(ValueError, match="structure"):
        tfd.while_loop(lambda i, acc: i < n, grow, start, shape_invariants=[[], [None]])


def test_a_loop_that_never_ends_is_stopped_by_the_steps_timeout():
    forever = tfd.while_loop(lambda a: a >= 0, lambda a: a + 0, [0])
    ok = tfd.constant(1)
    with tfd.Session() as sess:
        with pytest.raises(tfd.errors.DeadlineExceededError):
            sess.run(forever, timeout=0.5)
        assert sess.run(ok) == 1  # the session runs on
