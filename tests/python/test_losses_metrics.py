"""TF1's tf.losses, tf.metrics and gradient clipping, and the tfd.nn
functions they stand on (sigmoid_cross_entropy_with_logits, l2_normalize):
each loss against a float64 numpy reference under every Reduction and
several weights, the numerics at inf and NaN as numpy's formulas give
them, gradients against finite differences, and the metrics accumulated
over batches against numpy over all of them."""
import numpy as np
import pytest

import tfd
from numeric_helpers import check_gradient

R = tfd.losses.Reduction


def run(fetches, feed_dict=None):
    with tfd.Session() as sess:
        return sess.run(fetches, feed_dict)


# numpy references -------------------------------------------------------------
def np_reduce(losses, weights, reduction):
    """TF1's weighting and reductions, in float64."""
    w = np.broadcast_to(np.asarray(weights, np.float64), losses.shape)
    weighted = losses * w
    if reduction == R.NONE:
        return weighted
    total = weighted.sum()
    if reduction == R.SUM:
        return total
    divisor = {R.MEAN: w.sum(), R.SUM_OVER_BATCH_SIZE: losses.size}.get(
        reduction, np.count_nonzero(w))
    return 0.0 if divisor == 0 else total / divisor


def np_sigmoid_xent(z, x):
    return np.maximum(x, 0) - x * z + np.log1p(np.exp(-np.abs(x)))


def np_log_softmax(x):
    top = x.max(axis=-1, keepdims=True)
    return x - top - np.log(np.exp(x - top).sum(axis=-1, keepdims=True))


def np_huber(y, p, delta):
    e = np.abs(p - y)
    return np.where(e <= delta, 0.5 * e * e, 0.5 * delta * delta + delta * (e - delta))


RNG = np.random.RandomState(7)
LOGITS = RNG.normal(size=(4, 3)) * 2
TARGETS = RNG.normal(size=(4, 3))
BINARY = (RNG.uniform(size=(4, 3)) > 0.5).astype(np.float64)
SOFT = RNG.uniform(size=(4, 3))
PROBS = RNG.uniform(0.05, 0.95, size=(4, 3))
ONEHOT = np.eye(3)[[0, 2, 1, 2]]
IDS = np.array([0, 2, 1, 2], np.int32)

# name: (tfd loss of (labels, predictions), numpy losses, labels, predictions, per-row?)
LOSSES = {
    "mean_squared_error": (tfd.losses.mean_squared_error, lambda y, p: (p - y) ** 2,
                           TARGETS, LOGITS, False),
    "absolute_difference": (tfd.losses.absolute_difference, lambda y, p: np.abs(p - y),
                            TARGETS, LOGITS, False),
    "huber_loss": (lambda y, p, **kw: tfd.losses.huber_loss(y, p, delta=0.7, **kw),
                   lambda y, p: np_huber(y, p, 0.7), TARGETS, LOGITS, False),
    "log_loss": (tfd.losses.log_loss,
                 lambda y, p: -y * np.log(p + 1e-7) - (1 - y) * np.log(1 - p + 1e-7),
                 BINARY, PROBS, False),
    "hinge_loss": (tfd.losses.hinge_loss, lambda y, x: np.maximum(0, 1 - (2 * y - 1) * x),
                   BINARY, LOGITS, False),
    "sigmoid_cross_entropy": (tfd.losses.sigmoid_cross_entropy, np_sigmoid_xent, SOFT, LOGITS,
                              False),
    "softmax_cross_entropy": (tfd.losses.softmax_cross_entropy,
                              lambda y, x: -(y * np_log_softmax(x)).sum(axis=-1),
                              ONEHOT, LOGITS, True),
    "sparse_softmax_cross_entropy": (tfd.losses.sparse_softmax_cross_entropy,
                                     lambda y, x: -np_log_softmax(x)[np.arange(4), y],
                                     IDS, LOGITS, True),
}


def weight_cases(per_row):
    """Scalars, per-example weights with a zero, all zeros, and (for
    element-wise losses) one weight per element."""
    example = np.array([2.0, 0.0, 0.5, 1.0])
    cases = [1.0, 2.5, example if per_row else example[:, None],
             np.zeros(4) if per_row else np.zeros((4, 1))]
    if not per_row:
        cases.append(RNG.uniform(size=(4, 3)) * (RNG.uniform(size=(4, 3)) > 0.3))
    return cases


# Losses -----------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(LOSSES))
def test_loss_against_numpy_for_every_weight_and_reduction(name):
    fn, reference, labels, predictions, per_row = LOSSES[name]
    want_losses = reference(labels, predictions)
    built, wants = [], []
    for weights in weight_cases(per_row):
        w = weights if np.ndim(weights) == 0 else tfd.constant(weights)
        for reduction in R.all():
            built.append(fn(tfd.constant(labels), tfd.constant(predictions), weights=w,
                            reduction=reduction))
            wants.append(np_reduce(want_losses, weights, reduction))
    got = run(built)
    for g, w, t in zip(got, wants, built):
        assert t.dtype == tfd.float64
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-15, err_msg=t.name)


def test_losses_default_to_sum_by_nonzero_weights_and_keep_float32():
    w = np.array([[1.0], [0.0], [3.0], [0.0]])
    loss = tfd.losses.mean_squared_error(TARGETS.astype(np.float32),
                                         tfd.constant(LOGITS.astype(np.float32)), weights=w)
    assert loss.dtype == tfd.float32 and loss.shape.dims == []
    want = np_reduce((LOGITS - TARGETS) ** 2, w, R.SUM_BY_NONZERO_WEIGHTS)
    np.testing.assert_allclose(run(loss), want, rtol=1e-6)


def test_label_smoothing():
    s = 0.2
    sig = tfd.losses.sigmoid_cross_entropy(BINARY, tfd.constant(LOGITS), label_smoothing=s,
                                           reduction=R.NONE)
    soft = tfd.losses.softmax_cross_entropy(ONEHOT, tfd.constant(LOGITS), label_smoothing=s,
                                            reduction=R.NONE)
    logits = tfd.placeholder(tfd.float64, [None, 3])  # the class count from the shape at run time
    fed = tfd.losses.softmax_cross_entropy(tfd.placeholder_with_default(ONEHOT, [None, None]),
                                           logits, label_smoothing=s, reduction=R.NONE)
    got = run([sig, soft, fed], {logits: LOGITS})
    np.testing.assert_allclose(got[0], np_sigmoid_xent(BINARY * (1 - s) + s / 2, LOGITS),
                               rtol=1e-12)
    smoothed = ONEHOT * (1 - s) + s / 3
    want = -(smoothed * np_log_softmax(LOGITS)).sum(axis=-1)
    np.testing.assert_allclose(got[1], want, rtol=1e-12)
    np.testing.assert_allclose(got[2], want, rtol=1e-12)


def test_sparse_softmax_cross_entropy_squeezes_labels_and_weights_of_shape_batch_1():
    w = np.array([[1.0], [2.0], [0.0], [1.0]])
    loss = tfd.losses.sparse_softmax_cross_entropy(IDS[:, None], tfd.constant(LOGITS), weights=w)
    want = np_reduce(-np_log_softmax(LOGITS)[np.arange(4), IDS], w[:, 0],
                     R.SUM_BY_NONZERO_WEIGHTS)
    np.testing.assert_allclose(run(loss), want, rtol=1e-12)


def test_losses_go_to_their_collection_and_add_up():
    mse = tfd.losses.mean_squared_error(TARGETS, tfd.constant(LOGITS))
    with tfd.name_scope("head"):
        xent = tfd.losses.sigmoid_cross_entropy(BINARY, tfd.constant(LOGITS), weights=0.5)
    tfd.losses.absolute_difference(TARGETS, tfd.constant(LOGITS), loss_collection=None)
    extra = tfd.constant(3.0, tfd.float64)
    tfd.losses.add_loss(extra)
    assert tfd.losses.get_losses() == [mse, xent, extra]
    assert tfd.get_collection(tfd.GraphKeys.LOSSES) == [mse, xent, extra]
    assert tfd.losses.get_losses(scope="head") == [xent]
    v = tfd.get_variable("w", initializer=np.array([1.0, -2.0]),
                         regularizer=tfd.contrib.layers.l2_regularizer(0.5))
    total = tfd.losses.get_total_loss()
    without = tfd.losses.get_total_loss(add_regularization_losses=False, name="data_loss")
    with tfd.Session() as sess:
        sess.run(tfd.global_variables_initializer())
        m, x, t, d = sess.run([mse, xent, total, without])
    assert v.trainable
    np.testing.assert_allclose(d, m + x + 3.0, rtol=1e-12)
    np.testing.assert_allclose(t, m + x + 3.0 + 0.5 * 0.5 * 5.0, rtol=1e-12)


def test_loss_argument_errors_as_tf1():
    with pytest.raises(ValueError, match="Invalid Reduction Key"):
        tfd.losses.compute_weighted_loss(tfd.constant([1.0]), reduction="mean")
    with pytest.raises(ValueError, match="can not be broadcast"):
        tfd.losses.mean_squared_error(TARGETS, tfd.constant(LOGITS), weights=np.ones(4))
    with pytest.raises(ValueError, match="can not be broadcast"):
        tfd.losses.mean_squared_error(TARGETS, tfd.constant(LOGITS), weights=np.ones((2, 3)))
    with pytest.raises(ValueError, match="incompatible"):
        tfd.losses.absolute_difference(TARGETS[:, :2], tfd.constant(LOGITS))
    with pytest.raises(ValueError, match="labels must not be None"):
        tfd.losses.log_loss(None, tfd.constant(PROBS))
    with pytest.raises(ValueError, match="no losses"):
        tfd.losses.get_total_loss()


def test_compute_weighted_loss_divides_by_zero_as_zero():
    losses = tfd.constant(np.array([[np.inf, 1.0], [2.0, np.nan]]))
    zeros = tfd.constant(np.zeros((2, 1)))
    # inf * 0 makes the sum NaN, but a zero divisor gives 0 whatever it
    # divides (TF1's div_no_nan).
    got = run([tfd.losses.compute_weighted_loss(losses, zeros, reduction=r)
               for r in (R.SUM, R.MEAN, R.SUM_BY_NONZERO_WEIGHTS)]
              + [tfd.losses.compute_weighted_loss(tfd.constant(np.ones((2, 2))), 0.0)])
    assert np.isnan(got[0]) and got[1:] == [0.0, 0.0, 0.0]


@pytest.mark.parametrize("name", ["sigmoid_cross_entropy", "softmax_cross_entropy",
                                  "huber_loss"])
def test_loss_gradients_against_finite_differences(name):
    fn, _, labels, predictions, per_row = LOSSES[name]
    weights = np.array([1.0, 0.0, 2.0, 0.5]) if per_row else np.array([[1.0], [0.0], [2.0], [0.5]])
    check_gradient(lambda p: fn(labels, p, weights=weights), predictions)


# tfd.nn -----------------------------------------------------------------------
EDGES = np.array([1e4, -1e4, 0.0, np.inf, -np.inf, np.nan, -30.0, 30.0, 1.5])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sigmoid_cross_entropy_with_logits_at_the_edges(dtype):
    x = np.tile(EDGES, 3).astype(dtype)
    z = np.repeat([0.0, 1.0, 0.5], len(EDGES)).astype(dtype)
    got = run(tfd.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=tfd.constant(x)))
    assert got.dtype == dtype
    with np.errstate(invalid="ignore", over="ignore"):
        want = np_sigmoid_xent(z.astype(np.float64), x.astype(np.float64))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    # log1p's precision where exp(-|x|) is tiny (x = -30 with z = 0 is 9.4e-14).
    np.testing.assert_allclose(got, want, rtol=1e-14 if dtype == np.float64 else 1e-6, atol=0)


def test_sigmoid_cross_entropy_with_logits_gradient_at_zero_and_elsewhere():
    z = np.array([0.0, 1.0, 0.3, 0.7])
    x = tfd.placeholder(tfd.float64, [4])
    (g,) = tfd.gradients(tfd.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x), [x])
    np.testing.assert_allclose(run(g, {x: np.zeros(4)}), 0.5 - z, rtol=1e-15)
    check_gradient(lambda v: tfd.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=v),
                   np.array([-3.0, 2.0, 0.4, -0.1]))
    with pytest.raises(ValueError, match="same shape"):
        tfd.nn.sigmoid_cross_entropy_with_logits(labels=z[:3], logits=x)


def test_l2_normalize_as_tf1():
    xs = RNG.normal(size=(3, 4))
    got = run([tfd.nn.l2_normalize(xs, axis=1), tfd.nn.l2_normalize(tfd.constant(xs)),
               tfd.nn.l2_normalize(xs, dim=0)])
    np.testing.assert_allclose(got[0], xs / np.linalg.norm(xs, axis=1, keepdims=True),
                               rtol=1e-14)
    np.testing.assert_allclose(got[1], xs / np.linalg.norm(xs), rtol=1e-14)
    np.testing.assert_allclose(got[2], xs / np.linalg.norm(xs, axis=0, keepdims=True),
                               rtol=1e-14)


def test_l2_normalize_of_zero_tiny_and_huge_vectors():
    tiny = np.array([1e-8, 0.0])
    huge = np.array([3e20, 4e20])
    got = run([tfd.nn.l2_normalize(tfd.zeros([3], tfd.float64), 0),
               tfd.nn.l2_normalize(tiny, 0),  # the norm floored at sqrt(epsilon) = 1e-6
               tfd.nn.l2_normalize(huge, 0),
               tfd.nn.l2_normalize(huge.astype(np.float32), 0)])
    np.testing.assert_array_equal(got[0], np.zeros(3))
    np.testing.assert_allclose(got[1], tiny / 1e-6, rtol=1e-12)
    np.testing.assert_allclose(got[2], [0.6, 0.8], rtol=1e-15)
    # float32 squares overflow to inf, and TF1's formula gives 0 there.
    np.testing.assert_array_equal(got[3], np.zeros(2, np.float32))


def test_div_no_nan():
    x = tfd.constant(np.array([1.0, np.inf, np.nan, 1.0, -3.0]))
    y = tfd.constant(np.array([0.0, 0.0, 0.0, 2.0, -0.0]))
    np.testing.assert_array_equal(run(tfd.div_no_nan(x, y)), [0, 0, 0, 0.5, 0])
    np.testing.assert_array_equal(run(tfd.div_no_nan(tfd.constant([[2.0], [4.0]]),
                                                     tfd.constant([0.0, 2.0]))),
                                  [[0.0, 1.0], [0.0, 2.0]])
    (gx, gy) = tfd.gradients(tfd.div_no_nan(x, y), [x, y])
    got = run([gx, gy])
    np.testing.assert_array_equal(got[0], [0, 0, 0, 0.5, 0])
    assert np.isfinite(got[1][[0, 1, 4]]).all()
    with pytest.raises(TypeError, match="float"):
        tfd.div_no_nan(tfd.constant([1]), tfd.constant([2]))


# Clipping ---------------------------------------------------------------------
def test_clip_by_norm_whole_and_along_axes():
    xs = np.array([[3.0, 4.0, 0.0], [0.0, 0.0, 0.0], [1.0, 1.0, 1.0]])
    got = run([tfd.clip_by_norm(xs, 2.0), tfd.clip_by_norm(xs, 100.0),
               tfd.clip_by_norm(tfd.constant(xs), 2.0, axes=[1])])
    np.testing.assert_allclose(got[0], xs * 2.0 / np.linalg.norm(xs), rtol=1e-15)
    np.testing.assert_array_equal(got[1], xs)
    rows = np.linalg.norm(xs, axis=1, keepdims=True)
    np.testing.assert_allclose(got[2], xs * 2.0 / np.maximum(rows, 2.0), rtol=1e-15)
    # A zero tensor: zero, and a finite gradient (the two-Select form).
    check_gradient(lambda t: tfd.clip_by_norm(t, 1.0), np.zeros((2, 2)))
    check_gradient(lambda t: tfd.clip_by_norm(t, 1.0, axes=[1]), xs + 0.5)


def test_cosine_distance_and_mean_pairwise_squared_error_are_tf1s():
    labels = np.array([[0.6, 0.8, 0.0], [0.0, 0.0, 1.0]])
    predictions = np.array([[0.8, 0.6, 0.0], [0.0, 1.0, 0.0]])
    rng = np.random.RandomState(8)
    pl, pp, pw = rng.randn(3, 4), rng.randn(3, 4), np.array([[2.0], [0.0], [0.5]])
    got = run([tfd.losses.cosine_distance(labels, predictions, axis=1),
               tfd.losses.mean_pairwise_squared_error(pl, pp, weights=pw)])
    np.testing.assert_allclose(got[0], ((1 - 0.96) + 1.0) / 2, rtol=1e-12)
    want = 0.0
    for d, w in zip(pp - pl, pw[:, 0]):  # every pair i != j of a row, one by one
        pairs = [(d[i] - d[j]) ** 2 for i in range(4) for j in range(4) if i != j]
        want += w * np.mean(pairs) if w != 0 else 0.0
    np.testing.assert_allclose(got[1], want, rtol=1e-12)
    with pytest.raises(ValueError, match="axis"):
        tfd.losses.cosine_distance(labels, predictions)


def test_clip_by_average_norm_scales_by_the_norm_per_element():
    xs = np.array([[3.0, 4.0], [0.0, 0.0]])  # norm 5, 4 elements: 1.25 per element
    got = run([tfd.clip_by_average_norm(xs, 0.5), tfd.clip_by_average_norm(xs, 2.0)])
    np.testing.assert_allclose(got[0], xs * 0.5 / 1.25, rtol=1e-15)
    np.testing.assert_allclose(got[1], xs, rtol=1e-15)
    check_gradient(lambda t: tfd.clip_by_average_norm(t, 0.5), xs + 0.5)


def test_clip_by_norm_keeps_an_indexed_slices_sparse():
    s = tfd.IndexedSlices(tfd.constant([[3.0, 4.0]]), tfd.constant([2]), tfd.constant([4, 2]))
    c = tfd.clip_by_norm(s, 1.0)
    assert isinstance(c, tfd.IndexedSlices) and c.indices is s.indices
    np.testing.assert_allclose(run(c.values), [[0.6, 0.8]], rtol=1e-6)


def test_clip_by_global_norm_with_none_and_indexed_slices():
    a, b = np.array([3.0, 4.0], np.float32), np.array([[1.0, 2.0]], np.float32)
    rows = np.array([[2.0, 2.0], [1.0, 3.0]], np.float32)  # two rows of one id: both count
    sparse = tfd.IndexedSlices(tfd.constant(rows), tfd.constant([1, 1]), tfd.constant([5, 2]))
    (ca, none, cs, cb), norm = tfd.clip_by_global_norm([tfd.constant(a), None, sparse,
                                                        tfd.constant(b)], 2.0)
    assert none is None and isinstance(cs, tfd.IndexedSlices) and cs.indices is sparse.indices
    got = run([ca, cs.values, cb, norm, tfd.global_norm([a, None, sparse, b])])
    want_norm = np.sqrt(sum((v.astype(np.float64) ** 2).sum() for v in (a, rows, b)))
    np.testing.assert_allclose(got[3], want_norm, rtol=1e-6)
    np.testing.assert_allclose(got[4], want_norm, rtol=1e-6)
    for g, v in zip(got[:3], (a, rows, b)):
        np.testing.assert_allclose(g, v * 2.0 / want_norm, rtol=1e-6)
    (kept,), _ = tfd.clip_by_global_norm([a], 100.0)
    np.testing.assert_allclose(run(kept), a, rtol=1e-6)
    (used,), n = tfd.clip_by_global_norm([a], 1.0, use_norm=tfd.constant(10.0))
    np.testing.assert_allclose(run([used, n])[0], a / 10.0, rtol=1e-6)
    with pytest.raises(TypeError, match="sequence"):
        tfd.clip_by_global_norm(tfd.constant(a), 1.0)


def test_clipped_gradients_of_an_embedding_train_through_apply_gradients():
    emb = tfd.get_variable("emb", initializer=np.ones((5, 2), np.float32))
    w = tfd.Variable(np.full(2, 3.0, np.float32), name="w")
    loss = tfd.reduce_sum(tfd.gather(emb, tfd.constant([1, 1, 3])) * w)
    opt = tfd.train.GradientDescentOptimizer(1.0)
    grads, variables = zip(*opt.compute_gradients(loss))
    clipped, norm = tfd.clip_by_global_norm(grads, 1.0)
    assert isinstance(clipped[0], tfd.IndexedSlices)
    train = opt.apply_gradients(zip(clipped, variables))
    with tfd.Session() as sess:
        sess.run(tfd.global_variables_initializer())
        _, got_norm = sess.run([train, norm])  # the norm before the update
        got_emb, got_w = sess.run([emb, w])
    want_norm = np.sqrt(3 * 18 + 2 * 9.0)  # three rows of [3, 3], and w's [3, 3]
    np.testing.assert_allclose(got_norm, want_norm, rtol=1e-6)
    want_emb = np.ones((5, 2)) - np.array([0, 2, 0, 1, 0])[:, None] * 3.0 / want_norm
    np.testing.assert_allclose(got_emb, want_emb, rtol=1e-6)
    np.testing.assert_allclose(got_w, 3.0 - 3.0 / want_norm, rtol=1e-6)


def test_clip_by_global_norm_of_zero_inf_and_nan_norms():
    zeros = [tfd.zeros([2]), tfd.zeros([1, 3])]
    (z0, z1), zn = tfd.clip_by_global_norm(zeros, 1.0)
    (i0, i1), inorm = tfd.clip_by_global_norm(
        [tfd.constant([np.inf, 1.0]), tfd.constant([2.0])], 1.0)
    (n0,), nnorm = tfd.clip_by_global_norm([tfd.constant([np.nan, 1.0])], 1.0)
    got = run([z0, z1, zn, i0, i1, inorm, n0, nnorm])
    np.testing.assert_array_equal(got[0], np.zeros(2))
    np.testing.assert_array_equal(got[1], np.zeros((1, 3)))
    assert got[2] == 0.0
    # TF1: a norm of inf or NaN makes every clipped value NaN.
    assert np.isnan(got[3]).all() and np.isnan(got[4]).all() and got[5] == np.inf
    assert np.isnan(got[6]).all() and np.isnan(got[7])


# Metrics ----------------------------------------------------------------------
BATCHES = 3


def batches():
    rng = np.random.RandomState(11)
    return [dict(labels=rng.randint(0, 2, size=6), predictions=rng.randint(0, 2, size=6),
                 values=rng.normal(size=6), weights=rng.uniform(size=6) * (rng.uniform(size=6)
                                                                            > 0.3))
            for _ in range(BATCHES)]


def np_metrics(data):
    y, p, v, w = (np.concatenate([d[k] for d in data]).astype(np.float64)
                  for k in ("labels", "predictions", "values", "weights"))
    tp = ((y == 1) & (p == 1)).sum()
    return {"accuracy": (y == p).mean(), "weighted_accuracy": ((y == p) * w).sum() / w.sum(),
            "mean": v.mean(), "weighted_mean": (v * w).sum() / w.sum(),
            "mse": ((y - v) ** 2).mean(), "mae": np.abs(y - v).mean(),
            "rmse": ((y - v) ** 2).mean() ** 0.5, "precision": tp / (p == 1).sum(),
            "recall": tp / (y == 1).sum(),
            "weighted_precision": (((y == 1) & (p == 1)) * w).sum() / ((p == 1) * w).sum()}


def test_metrics_accumulate_over_batches_and_reset():
    labels = tfd.placeholder(tfd.int32, [None])
    predictions = tfd.placeholder(tfd.int32, [None])
    values = tfd.placeholder(tfd.float64, [None])
    weights = tfd.placeholder(tfd.float32, [None])
    metrics = {
        "accuracy": tfd.metrics.accuracy(labels, predictions),
        "weighted_accuracy": tfd.metrics.accuracy(labels, predictions, weights=weights),
        "mean": tfd.metrics.mean(values),
        "weighted_mean": tfd.metrics.mean(values, weights=weights),
        "mse": tfd.metrics.mean_squared_error(labels, values),
        "mae": tfd.metrics.mean_absolute_error(labels, values),
        "rmse": tfd.metrics.root_mean_squared_error(labels, values),
        "precision": tfd.metrics.precision(labels, predictions),
        "recall": tfd.metrics.recall(labels, predictions),
        "weighted_precision": tfd.metrics.precision(labels, predictions, weights=weights),
    }
    values_of = {k: m[0] for k, m in metrics.items()}
    updates = {k: m[1] for k, m in metrics.items()}
    data = batches()

    def feed(d):
        return {labels: d["labels"], predictions: d["predictions"], values: d["values"],
                weights: d["weights"]}

    with tfd.Session() as sess:
        sess.run(tfd.local_variables_initializer())
        assert all(v == 0 for v in sess.run(values_of).values())
        for i, d in enumerate(data):
            after = sess.run(updates, feed(d))
            want = np_metrics(data[:i + 1])
            for k in metrics:
                np.testing.assert_allclose(after[k], want[k], rtol=1e-5, err_msg=k)
        got = sess.run(values_of)
        for k in metrics:
            np.testing.assert_allclose(got[k], want[k], rtol=1e-5, err_msg=k)
        sess.run(tfd.local_variables_initializer())
        assert all(v == 0 for v in sess.run(values_of).values())
        again = sess.run(updates, feed(data[2]))
        for k, v in np_metrics(data[2:]).items():
            np.testing.assert_allclose(again[k], v, rtol=1e-5, err_msg=k)


def test_metric_variables_are_local_named_as_tf1_and_not_global():
    acc, update = tfd.metrics.accuracy([1, 2], tfd.constant([1, 3]), metrics_collections=["m"],
                                       updates_collections=["u"])
    tfd.metrics.accuracy([1], tfd.constant([1]))
    tfd.metrics.recall([1, 0], tfd.constant([1, 1]))
    names = [v.op.name for v in tfd.local_variables()]
    assert names == ["accuracy/total", "accuracy/count", "accuracy_1/total", "accuracy_1/count",
                     "recall/true_positives/count", "recall/false_negatives/count"]
    assert [v.op.name for v in tfd.get_collection(tfd.GraphKeys.METRIC_VARIABLES)] == names
    assert [v.op.name for v in tfd.get_collection(tfd.GraphKeys.LOCAL_VARIABLES)] == names
    assert tfd.global_variables() == [] and tfd.trainable_variables() == []
    assert tfd.get_collection("m") == [acc] and tfd.get_collection("u") == [update]
    assert acc.name == "accuracy/value:0" and update.name == "accuracy/update_op:0"
    with tfd.Session() as sess:
        sess.run(tfd.global_variables_initializer())  # leaves the metrics alone
        with pytest.raises(tfd.errors.FailedPreconditionError):
            sess.run(acc)
        sess.run(tfd.local_variables_initializer())
        assert sess.run(update) == 0.5


def test_metrics_with_squeezable_dimensions_and_a_weight_per_column():
    y = np.array([[1], [0], [1], [1]])
    p = np.array([1, 1, 0, 1])
    acc, update = tfd.metrics.accuracy(y, tfd.constant(p), weights=np.array([[1.0], [1.0],
                                                                             [0.0], [2.0]]))
    mse, mse_update = tfd.metrics.mean_squared_error(
        tfd.constant(np.ones((2, 3))), tfd.constant(np.zeros((2, 3))),
        weights=np.array([[1.0, 0.0, 1.0]]))
    with tfd.Session() as sess:
        sess.run(tfd.local_variables_initializer())
        got = sess.run([update, mse_update])
    np.testing.assert_allclose(got[0], 3.0 / 4.0, rtol=1e-6)
    assert got[1] == 1.0


def np_auc(labels, scores, weights, curve, method, num_thresholds=200):
    """TF1's streaming AUC over thresholds, in float64, point by point."""
    eps = 1e-7
    ts = [-eps] + [(i + 1) / (num_thresholds - 1) for i in range(num_thresholds - 2)] + [1 + eps]
    y = np.asarray(labels) != 0
    c = {k: np.array([np.sum(weights * m(scores > t)) for t in ts]) for k, m in (
        ("tp", lambda a: y & a), ("fn", lambda a: y & ~a), ("tn", lambda a: ~y & ~a),
        ("fp", lambda a: ~y & a))}
    recall = (c["tp"] + 1e-6) / (c["tp"] + c["fn"] + 1e-6)
    if curve == "ROC":
        x, h = c["fp"] / (c["fp"] + c["tn"] + 1e-6), recall
    else:
        x, h = recall, (c["tp"] + 1e-6) / (c["tp"] + c["fp"] + 1e-6)
    pair = {"trapezoidal": (h[:-1] + h[1:]) / 2, "minoring": np.minimum(h[:-1], h[1:]),
            "majoring": np.maximum(h[:-1], h[1:])}[method]
    return np.sum((x[:-1] - x[1:]) * pair)


@pytest.mark.parametrize("curve,method", [("ROC", "trapezoidal"), ("PR", "minoring"),
                                          ("ROC", "majoring")])
def test_auc_streams_over_batches_as_tf1s(curve, method):
    labels = tfd.placeholder(tfd.int64, [None])
    scores = tfd.placeholder(tfd.float32, [None])
    weights = tfd.placeholder(tfd.float32, [None])
    value, update = tfd.metrics.auc(labels, scores, weights=weights, curve=curve,
                                    summation_method=method)
    rng = np.random.RandomState(10)
    ys = rng.randint(0, 2, 300)
    ps = np.clip(0.3 * ys + 0.7 * rng.rand(300), 0, 1).astype(np.float32)
    ws = rng.choice([0.0, 1.0, 2.0], 300).astype(np.float32)
    with tfd.Session() as sess:
        sess.run(tfd.local_variables_initializer())
        for start, end in ((0, 100), (100, 300)):  # two batches, counted together
            batch = slice(start, end)
            got = sess.run(update, {labels: ys[batch], scores: ps[batch], weights: ws[batch]})
            want = np_auc(ys[:end], ps[:end].astype(np.float64), ws[:end], curve, method)
            np.testing.assert_allclose(got, want, rtol=1e-5)
        np.testing.assert_allclose(sess.run(value), want, rtol=1e-5)
    if curve == "ROC" and method == "trapezoidal":  # near the exact area (ranks)
        pos, neg = ps[(ys == 1) & (ws > 0)], ps[(ys == 0) & (ws > 0)]
        wp, wn = ws[(ys == 1) & (ws > 0)], ws[(ys == 0) & (ws > 0)]
        exact = np.sum(wp[:, None] * wn[None, :] * ((pos[:, None] > neg[None, :]) + 0.5 * (
            pos[:, None] == neg[None, :]))) / (wp.sum() * wn.sum())
        assert abs(want - exact) < 0.01
    with pytest.raises(ValueError, match="ROC or PR"):
        tfd.metrics.auc(labels, scores, curve="DET")


def test_precision_and_recall_at_thresholds_stream_per_threshold():
    labels = tfd.placeholder(tfd.int64, [None])
    scores = tfd.placeholder(tfd.float32, [None])
    ts = [0.0, 0.35, 0.5, 0.9, 1.0]
    precision, update_p = tfd.metrics.precision_at_thresholds(labels, scores, ts)
    recall, update_r = tfd.metrics.recall_at_thresholds(labels, scores, ts)
    assert [v.op.name for v in tfd.local_variables()] == [
        "precision_at_thresholds/true_positives", "precision_at_thresholds/false_positives",
        "recall_at_thresholds/true_positives", "recall_at_thresholds/false_negatives"]
    ys = np.array([1, 0, 1, 1, 0, 0, 1])
    ps = np.array([0.9, 0.8, 0.4, 0.3, 0.2, 0.5, 0.95], np.float32)
    with tfd.Session() as sess:
        sess.run(tfd.local_variables_initializer())
        sess.run([update_p, update_r], {labels: ys[:3], scores: ps[:3]})
        sess.run([update_p, update_r], {labels: ys[3:], scores: ps[3:]})
        got_p, got_r = sess.run([precision, recall])
    above = ps[None, :] > np.array(ts)[:, None]
    tp = (above & (ys == 1)).sum(1)
    np.testing.assert_allclose(got_p, tp / (1e-7 + above.sum(1)), rtol=1e-6)
    np.testing.assert_allclose(got_r, tp / (1e-7 + (ys == 1).sum()), rtol=1e-6)
    assert got_p[-1] == 0 and got_r[-1] == 0  # nothing above 1.0
