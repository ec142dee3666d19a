"""Sparse gradients from Python, as TF1 gives them: the gradient of a
gather (an embedding lookup) is a tfd.IndexedSlices from tfd.gradients and
compute_gradients, apply_gradients updates its rows only with the
optimizer's sparse update, and convert_to_tensor densifies it. Each model
is checked against numpy in float64."""
import numpy as np
import pytest

import tfd

ROWS, WIDTH = 8, 3
IDS = np.array([1, 5, 1, 6], np.int64)  # row 1 twice: its two gradients add up
TOUCHED = sorted(set(IDS.tolist()))
UNTOUCHED = [r for r in range(ROWS) if r not in TOUCHED]


def initial_values():
    rng = np.random.default_rng(7)
    table = rng.normal(size=(ROWS, WIDTH)).astype(np.float32)
    w = rng.normal(size=(WIDTH, 1)).astype(np.float32)
    y = rng.normal(size=(len(IDS), 1)).astype(np.float32)
    return table, w, y


def build(make_optimizer):
    """loss = 0.5 * sum((table[IDS] @ w - y)^2), trained through
    compute_gradients and apply_gradients."""
    table0, w0, y0 = initial_values()
    emb = tfd.Variable(table0, name="emb")
    w = tfd.Variable(w0, name="w")
    rows = tfd.nn.embedding_lookup(emb, tfd.constant(IDS))
    loss = 0.5 * tfd.reduce_sum(tfd.square(tfd.matmul(rows, w) - tfd.constant(y0)))
    opt = make_optimizer()
    grads = opt.compute_gradients(loss, [emb, w])
    return emb, w, grads, opt.apply_gradients(grads)


def numpy_gradients(table, w, y):
    """d(loss)/d(table) summed per distinct id, and d(loss)/d(w), in float64."""
    rows = table[IDS]
    r = rows @ w - y
    d_rows = r @ w.T
    d_table = {i: d_rows[IDS == i].sum(axis=0) for i in TOUCHED}
    return d_table, rows.T @ r


def numpy_train(kind, steps, lr):
    """The reference: GradientDescent, Adagrad, and Adam (lazy on the table:
    only the rows looked up move, as SparseApplyLazyAdam), in float64.
    Returns the table, w and the table's slots."""
    table0, w0, y0 = initial_values()
    table, w, y = table0.astype(np.float64), w0.astype(np.float64), y0.astype(np.float64)
    slots = {"accum": np.full_like(table, 0.1), "w_accum": np.full_like(w, 0.1),
             "m": np.zeros_like(table), "v": np.zeros_like(table),
             "w_m": np.zeros_like(w), "w_v": np.zeros_like(w)}
    b1, b2, eps = 0.9, 0.999, 1e-8
    for t in range(1, steps + 1):
        d_table, d_w = numpy_gradients(table, w, y)
        if kind == "GradientDescent":
            for i, g in d_table.items():
                table[i] -= lr * g
            w -= lr * d_w
        elif kind == "Adagrad":
            for i, g in d_table.items():
                slots["accum"][i] += g * g
                table[i] -= lr * g / np.sqrt(slots["accum"][i])
            slots["w_accum"] += d_w * d_w
            w -= lr * d_w / np.sqrt(slots["w_accum"])
        else:
            lr_t = lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t)
            for i, g in d_table.items():
                slots["m"][i] = b1 * slots["m"][i] + (1 - b1) * g
                slots["v"][i] = b2 * slots["v"][i] + (1 - b2) * g * g
                table[i] -= lr_t * slots["m"][i] / (np.sqrt(slots["v"][i]) + eps)
            slots["w_m"] = b1 * slots["w_m"] + (1 - b1) * d_w
            slots["w_v"] = b2 * slots["w_v"] + (1 - b2) * d_w * d_w
            w -= lr_t * slots["w_m"] / (np.sqrt(slots["w_v"]) + eps)
    return table, w, slots


OPTIMIZERS = {
    "GradientDescent": (lambda: tfd.train.GradientDescentOptimizer(0.1), []),
    "Adagrad": (lambda: tfd.train.AdagradOptimizer(0.1), [("emb/Adagrad", "accum", 0.1)]),
    "Adam": (lambda: tfd.train.AdamOptimizer(0.1), [("emb/Adam", "m", 0.0),
                                                    ("emb/Adam_1", "v", 0.0)]),
}


@pytest.mark.parametrize("kind", sorted(OPTIMIZERS))
def test_a_sparse_gradient_trains_the_rows_looked_up_as_numpy(kind):
    make, slot_names = OPTIMIZERS[kind]
    emb, w, grads, train = build(make)
    assert isinstance(grads[0][0], tfd.IndexedSlices) and grads[0][1] is emb
    assert isinstance(grads[1][0], tfd.Tensor)  # w is read whole: a dense gradient
    graph = tfd.get_default_graph()
    slots = [graph.get_tensor_by_name(name + ":0") for name, _, _ in slot_names]
    steps = 3
    with tfd.Session() as sess:
        sess.run(tfd.global_variables_initializer())
        before = sess.run(emb)
        for _ in range(steps):
            sess.run(train)
        table, w_value, slot_values = sess.run([emb, w, slots])
    want_table, want_w, want_slots = numpy_train(kind, steps, 0.1)
    np.testing.assert_allclose(table, want_table, rtol=2e-5, atol=1e-6)
    np.testing.assert_allclose(w_value, want_w, rtol=2e-5, atol=1e-6)
    # Rows no step looked up are the bytes they started as, and so are their slots.
    np.testing.assert_array_equal(table[UNTOUCHED], before[UNTOUCHED])
    for got, (_, key, start) in zip(slot_values, slot_names):
        np.testing.assert_array_equal(got[UNTOUCHED], np.float32(start))
        np.testing.assert_allclose(got[TOUCHED], want_slots[key][TOUCHED], rtol=2e-5, atol=1e-7)
    assert {op.type for op in graph.get_operations()} & {
        "ScatterSub", "SparseApplyAdagrad", "SparseApplyLazyAdam"}


def test_gradients_of_a_gather_are_indexed_slices_and_densify_summing_duplicates():
    table0, _, _ = initial_values()
    emb = tfd.Variable(table0, name="emb")
    ids = tfd.constant(IDS)
    weights = tfd.constant(np.arange(1, len(IDS) + 1, dtype=np.float32).reshape(-1, 1))
    loss = tfd.reduce_sum(tfd.gather(emb, ids) * weights)
    grad, = tfd.gradients(loss, [emb])
    assert isinstance(grad, tfd.IndexedSlices)
    assert grad.dtype == tfd.float32 and grad.graph is tfd.get_default_graph()
    dense = tfd.convert_to_tensor(grad)
    assert isinstance(dense, tfd.Tensor) and dense.shape.as_list() == [ROWS, WIDTH]
    assert tfd.convert_to_tensor(grad) is dense  # densified once
    doubled = tfd.multiply(grad, 2.0)  # an op densifies its input
    with tfd.Session() as sess:
        sess.run(tfd.global_variables_initializer())
        value, got_dense, got_doubled = sess.run([grad, dense, doubled])
    assert isinstance(value, tfd.IndexedSlicesValue)
    np.testing.assert_array_equal(value.indices, IDS)
    np.testing.assert_array_equal(value.values, np.repeat(np.arange(1, 5), WIDTH).reshape(4, 3))
    np.testing.assert_array_equal(value.dense_shape, [ROWS, WIDTH])
    want = np.zeros((ROWS, WIDTH), np.float32)
    want[1], want[5], want[6] = 1 + 3, 2, 4  # row 1 is looked up twice: 1 + 3
    np.testing.assert_array_equal(got_dense, want)
    np.testing.assert_array_equal(got_doubled, 2 * want)


def test_apply_gradients_takes_indexed_slices_made_by_hand():
    table0, _, _ = initial_values()
    emb = tfd.Variable(table0, name="emb")
    slices = tfd.IndexedSlices(tfd.constant(np.ones((3, WIDTH), np.float32)),
                               tfd.constant(np.array([2, 2, 4], np.int32)))
    train = tfd.train.AdagradOptimizer(0.5).apply_gradients([(slices, emb)])
    with tfd.Session() as sess:
        sess.run(tfd.global_variables_initializer())
        sess.run(train)
        got = sess.run(emb)
    want = table0.astype(np.float64)
    for row, g in ((2, 2.0), (4, 1.0)):  # row 2's two rows add up before the update
        want[row] -= 0.5 * g / np.sqrt(0.1 + g * g)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_array_equal(np.delete(got, [2, 4], axis=0),
                                  np.delete(table0, [2, 4], axis=0))


def test_a_partitioned_table_gets_one_indexed_slices_per_shard():
    emb = tfd.get_variable("emb", [ROWS, WIDTH], initializer=tfd.ones_initializer(),
                           partitioner=tfd.fixed_size_partitioner(2))
    rows = tfd.nn.embedding_lookup(emb, tfd.constant(np.array([0, 7], np.int64)),
                                   partition_strategy="div")
    opt = tfd.train.GradientDescentOptimizer(0.5)
    grads = opt.compute_gradients(tfd.reduce_sum(rows), list(emb))
    assert [type(g) for g, _ in grads] == [tfd.IndexedSlices, tfd.IndexedSlices]
    train = opt.apply_gradients(grads)
    with tfd.Session() as sess:
        sess.run(tfd.global_variables_initializer())
        sess.run(train)
        got = sess.run(emb.as_tensor())
    want = np.ones((ROWS, WIDTH), np.float32)
    want[[0, 7]] = 0.5
    np.testing.assert_array_equal(got, want)
