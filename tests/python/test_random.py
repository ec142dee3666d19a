"""Random ops seeded as TF1 seeds them: tfd.set_random_seed makes a graph's
random ops reproducible without op seeds, an op seed alone does too, and
tfd.get_seed gives the rule's (seed, seed2)."""
import numpy as np
import pytest

import tfd


def runs(build, graph_seed=None, n=3):
    """n runs of what build() returns, in a fresh session over a fresh graph."""
    g = tfd.Graph()
    with g.as_default():
        if graph_seed is not None:
            tfd.set_random_seed(graph_seed)
        fetch = build()
        with tfd.Session() as sess:
            if tfd.global_variables():
                sess.run(tfd.global_variables_initializer())
            return [sess.run(fetch) for _ in range(n)]


def same(a, b):
    return all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))


def uniform():
    return tfd.random_uniform([64])


def test_get_seed_follows_tf1s_rule():
    assert tfd.get_seed(None) == (None, None)
    assert tfd.get_seed(5) == (87654321, 5)
    assert tfd.get_seed(0) == (87654321, 0)
    assert tfd.get_seed(-1) == (87654321, 2**31 - 2)
    tfd.set_random_seed(1234)
    assert tfd.get_seed(5) == (1234, 5)
    seed, first = tfd.get_seed(None)
    tfd.constant(1.0)
    assert seed == 1234
    assert tfd.get_seed(None) == (1234, first + 1)  # a per-graph counter
    tfd.set_random_seed(2**31 - 1)
    assert tfd.get_seed(0) == (0, 2**31 - 1)  # never (0, 0), which means unseeded
    tfd.reset_default_graph()
    assert tfd.get_seed(None) == (None, None)  # the seed belongs to the graph


def test_a_graph_seed_makes_unseeded_random_ops_reproducible():
    a, b = runs(uniform, 1234), runs(uniform, 1234)
    assert same(a, b)
    assert not np.array_equal(a[0], a[1])  # a sequence, not one value repeated
    assert not np.array_equal(a[1], a[2])
    assert not np.array_equal(a[0], runs(uniform, 4321)[0])


def test_every_random_function_follows_the_graph_seed():
    for fn in (lambda: tfd.random_normal([32]), lambda: tfd.truncated_normal([32]),
               lambda: tfd.random_shuffle(np.arange(32))):
        a, b = runs(fn, 7), runs(fn, 7)
        assert same(a, b)
        assert not np.array_equal(a[0], a[1])
        assert not np.array_equal(a[0], runs(fn, 8)[0])


def test_unseeded_ops_draw_differently_without_a_graph_seed():
    assert not np.array_equal(runs(uniform, n=1)[0], runs(uniform, n=1)[0])


def test_an_op_seed_alone_is_reproducible():
    def seeded():
        return tfd.random_normal([64], seed=3)

    a, b = runs(seeded), runs(seeded)
    assert same(a, b)
    assert not np.array_equal(a[0], a[1])
    assert not np.array_equal(a[0], runs(seeded, 1)[0])  # the graph seed joins in


def test_two_unseeded_ops_of_a_seeded_graph_draw_their_own_streams():
    a, b = runs(lambda: (tfd.random_uniform([64]), tfd.random_uniform([64])), 99, n=1)[0]
    assert not np.array_equal(a, b)


def test_dropout_masks_follow_the_graph_seed():
    def drop():
        return tfd.nn.dropout(tfd.ones([2000]), rate=0.5)

    a, b = runs(drop, 11), runs(drop, 11)
    assert same(a, b)
    assert not np.array_equal(a[0], a[1])
    assert not np.array_equal(a[0], runs(drop, 12)[0])
    kept = a[0] != 0
    assert np.all(a[0][kept] == 2.0)  # kept elements scaled by 1 / (1 - rate)
    assert abs(kept.mean() - 0.5) < 0.05  # 2000 draws: over 4 standard deviations


def test_dropout_takes_rate_or_keep_prob():
    x = tfd.ones([1000])
    with tfd.Session() as sess:
        kept = sess.run(tfd.nn.dropout(x, keep_prob=0.75, seed=1))
    assert set(np.unique(kept)) <= {0.0, np.float32(1 / 0.75)}
    with pytest.raises(tfd.errors.InvalidArgumentError, match="rate"):
        tfd.nn.dropout(x)
    with pytest.raises(tfd.errors.InvalidArgumentError, match="rate"):
        tfd.nn.dropout(x, rate=1.0)


def test_seeded_variable_initializers_are_reproducible():
    def variables():
        w = tfd.get_variable("w", [4, 5], initializer=tfd.random_normal_initializer())
        g = tfd.get_variable("g", [4, 5])  # Glorot uniform, TF's default
        p = tfd.get_variable("p", [6, 3], initializer=tfd.random_uniform_initializer(),
                             partitioner=tfd.fixed_size_partitioner(2))
        v = tfd.Variable(tfd.truncated_normal([3]))
        return [w, g] + list(p) + [v]

    a, b = runs(variables, 3, n=1)[0], runs(variables, 3, n=1)[0]
    assert same(a, b)
    assert not np.array_equal(a[2], a[3])  # the shards draw streams of their own
    assert not any(np.array_equal(x, y) for x, y in zip(a, runs(variables, 4, n=1)[0]))
    seeded = runs(lambda: tfd.get_variable(
        "w", [8], initializer=tfd.random_normal_initializer(seed=5)), n=1)[0]
    assert np.array_equal(seeded, runs(lambda: tfd.get_variable(
        "w", [8], initializer=tfd.random_normal_initializer(seed=5)), n=1)[0])


def test_graph_seed_is_a_property_set_random_seed_sets_and_assigning_it_seeds():
    g = tfd.Graph()
    assert g.seed is None
    with g.as_default():
        tfd.set_random_seed(1234)
    assert g.seed == 1234
    g.seed = 7  # TF1: tf.get_default_graph().seed = 7
    with g.as_default():
        assert tfd.get_seed(None)[0] == 7
    g.seed = None
    assert g.seed is None

    def seeded_by_attribute(seed):
        h = tfd.Graph()
        h.seed = seed
        with h.as_default():
            fetch = tfd.random_uniform([64])
            with tfd.Session() as sess:
                return sess.run(fetch)

    assert np.array_equal(seeded_by_attribute(5), seeded_by_attribute(5))
    assert not np.array_equal(seeded_by_attribute(5), seeded_by_attribute(6))
