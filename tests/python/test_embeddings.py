"""Partitioned variables, embedding lookups and the sparse optimizers from
Python: lookups against numpy's gather, and sparse updates that touch only
the rows a step read, in process and over 2 ps tasks."""
import numpy as np
import pytest

import tfd


def table(name="emb", rows=10, width=3, shards=3, **kw):
    return tfd.get_variable(name, [rows, width],
                            initializer=tfd.random_normal_initializer(seed=5),
                            partitioner=tfd.fixed_size_partitioner(shards), **kw)


def test_a_partitioned_variable_splits_rows_as_tensorflow():
    emb = table()
    assert isinstance(emb, tfd.PartitionedVariable)
    assert [v.name for v in emb] == ["emb/part_0:0", "emb/part_1:0", "emb/part_2:0"]
    assert [v.shape.dims for v in emb] == [[4, 3], [3, 3], [3, 3]]
    assert emb.row_ranges == [(0, 4), (4, 3), (7, 3)]
    assert emb._get_partitions() == [3, 1]
    with tfd.variable_scope("layer"):
        big = tfd.get_variable("big", [100, 1024], initializer=tfd.zeros_initializer(),
                               partitioner=tfd.min_max_variable_partitioner(
                                   max_partitions=8, min_slice_size=100 << 10))
    assert len(big) == 4  # 400 KiB in slices of at least 100 KiB
    assert big.name == "layer/big" and list(big)[0].name == "layer/big/part_0:0"
    with tfd.variable_scope("layer", reuse=True):
        assert tfd.get_variable("big") is big
    with tfd.Session() as sess:
        sess.run(tfd.global_variables_initializer())
        whole, parts = sess.run([emb.as_tensor(), list(emb)])
    np.testing.assert_array_equal(whole, np.concatenate(parts))


def test_a_partitioner_is_checked():
    with pytest.raises(ValueError, match="axis 0"):
        tfd.fixed_size_partitioner(2, axis=1)
    with pytest.raises(tfd.errors.InvalidArgumentError):
        table(rows=2, shards=3)  # a shard would be empty


@pytest.mark.parametrize("strategy", ["mod", "div"])
def test_lookups_equal_numpy_gather(strategy):
    emb = table()
    ids = tfd.placeholder(tfd.int64, [None, 2], name="ids")
    rows = tfd.nn.embedding_lookup(emb, ids, partition_strategy=strategy)
    batch = np.array([[0, 9], [4, 4], [7, 3]], np.int64)
    with tfd.Session() as sess:
        sess.run(tfd.global_variables_initializer())
        parts, got = sess.run([list(emb), rows], {ids: batch})
    if strategy == "div":
        whole = np.concatenate(parts)
    else:  # id i is row i // 3 of shard i % 3
        whole = np.stack([parts[i % 3][i // 3] for i in range(10)])
    np.testing.assert_array_equal(got, whole[batch])
    with pytest.raises(tfd.errors.InvalidArgumentError, match="10"):
        with tfd.Session() as sess:
            sess.run(tfd.global_variables_initializer())
            sess.run(rows, {ids: np.array([[10, 0]], np.int64)})


def test_sparse_lookup_combines_each_row():
    emb = table(shards=2)
    sp = tfd.SparseTensor(indices=[[0, 0], [0, 1], [2, 0]], values=np.array([1, 6, 2], np.int64),
                          dense_shape=[3, 2])
    weights = tfd.SparseTensor(indices=[[0, 0], [0, 1], [2, 0]],
                               values=np.array([1.0, 3.0, 2.0], np.float32), dense_shape=[3, 2])
    summed = tfd.nn.embedding_lookup_sparse(emb, sp, weights, combiner="sum",
                                            partition_strategy="div")
    mean = tfd.nn.embedding_lookup_sparse(emb, sp, None, partition_strategy="div")
    with tfd.Session() as sess:
        sess.run(tfd.global_variables_initializer())
        whole, got_sum, got_mean = sess.run([emb.as_tensor(), summed, mean])
    np.testing.assert_allclose(got_sum, [whole[1] + 3 * whole[6], np.zeros(3), 2 * whole[2]],
                               rtol=1e-6)
    np.testing.assert_allclose(got_mean, [(whole[1] + whole[6]) / 2, np.zeros(3), whole[2]],
                               rtol=1e-6)


def test_strings_hash_to_buckets_of_a_table():
    words = tfd.constant(["cat", "dog", "cat", ""])
    buckets = tfd.strings.to_hash_bucket_fast(words, 7)
    with tfd.Session() as sess:
        got = sess.run(buckets)
    assert got.dtype == np.int64 and got[0] == got[2]
    assert all(0 <= b < 7 for b in got)


@pytest.mark.parametrize("make, sparse_op", [
    (lambda: tfd.train.AdagradOptimizer(0.5), "SparseApplyAdagrad"),
    (lambda: tfd.train.FtrlOptimizer(0.5), "SparseApplyFtrl"),
    (lambda: tfd.train.RMSPropOptimizer(0.5), "SparseApplyRMSProp"),
    (lambda: tfd.train.AdamOptimizer(0.5), "SparseApplyLazyAdam"),
])
def test_optimizers_update_only_the_rows_looked_up(make, sparse_op):
    emb = table(shards=2)
    rows = tfd.nn.embedding_lookup(emb, tfd.constant(np.array([1, 8, 8], np.int64)),
                                   partition_strategy="div")
    train = make().minimize(tfd.reduce_sum(tfd.square(rows)))
    assert sparse_op in {op.type for op in tfd.get_default_graph().get_operations()}
    with tfd.Session() as sess:
        sess.run(tfd.global_variables_initializer())
        before = sess.run(emb.as_tensor())
        for _ in range(3):
            sess.run(train)
        after = sess.run(emb.as_tensor())
    changed = sorted({int(i) for i in np.nonzero(before != after)[0]})
    assert changed == [1, 8]


def test_adagrad_on_a_table_over_two_ps_tasks(cluster_factory):
    cluster = cluster_factory({"ps": 2, "worker": 1})
    with tfd.device(tfd.train.replica_device_setter(cluster=cluster.spec)):
        emb = table(rows=10, width=4, shards=2)
        ids = np.array([1, 7, 7], np.int64)
        rows = tfd.nn.embedding_lookup(emb, tfd.constant(ids), partition_strategy="div")
        train = tfd.train.AdagradOptimizer(0.5).minimize(tfd.reduce_sum(tfd.square(rows)))
    assert ["/job:ps/task:0" in v.device for v in emb] == [True, False]
    assert ["/job:ps/task:1" in v.device for v in emb] == [False, True]
    with tfd.Session(cluster.address("worker", 0), timeout=60) as sess:
        sess.run(tfd.global_variables_initializer())
        want = sess.run(emb.as_tensor()).astype(np.float64)
        accum = np.full_like(want, 0.1)
        for _ in range(3):
            sess.run(train)
            grad = np.zeros_like(want)
            for i in ids:  # duplicate ids add their gradients, as TF's
                grad[i] += 2 * want[i]
            touched = sorted(set(ids))
            accum[touched] += grad[touched] ** 2
            want[touched] -= 0.5 * grad[touched] / np.sqrt(accum[touched])
        got = sess.run(emb.as_tensor())
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
