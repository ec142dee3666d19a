"""tfd's initializers as TF1's: constant_initializer (a scalar fills the
variable, a list or numpy array gives its values, plain and partitioned; a
value that does not fit is a ValueError naming the variable and both
shapes), and the variance scaling family's variances and bounds."""
import numpy as np
import pytest

import tfd


def test_a_scalar_fills_and_a_list_or_array_gives_the_values():
    filled = tfd.get_variable("filled", [2, 2], initializer=tfd.constant_initializer(1.5))
    listed = tfd.get_variable("listed", [2, 3],
                              initializer=tfd.constant_initializer([[1, 2, 3], [4, 5, 6]]))
    array = np.arange(6, dtype=np.float64).reshape(3, 2)
    arrayed = tfd.get_variable("arrayed", [3, 2], dtype=tfd.int32,
                               initializer=tfd.constant_initializer(array))
    flat = tfd.get_variable("flat", [2, 2], initializer=tfd.constant_initializer([1, 2, 3, 4]))
    # TF1: fewer values than elements, without verify_shape: the last repeats.
    padded = tfd.get_variable("padded", [2, 2], initializer=tfd.constant_initializer([7, 8]))
    with tfd.Session() as sess:
        sess.run(tfd.global_variables_initializer())
        got = sess.run([filled, listed, arrayed, flat, padded])
    np.testing.assert_array_equal(got[0], np.full((2, 2), 1.5, np.float32))
    np.testing.assert_array_equal(got[1], [[1, 2, 3], [4, 5, 6]])
    assert got[2].dtype == np.int32
    np.testing.assert_array_equal(got[2], array.astype(np.int32))
    np.testing.assert_array_equal(got[3], [[1, 2], [3, 4]])
    np.testing.assert_array_equal(got[4], [[7, 8], [8, 8]])


def test_a_partitioned_variable_takes_its_rows_of_the_values():
    values = np.arange(10, dtype=np.float32).reshape(5, 2)
    v = tfd.get_variable("table", [5, 2], initializer=tfd.constant_initializer(values),
                         partitioner=tfd.fixed_size_partitioner(2))
    with tfd.Session() as sess:
        sess.run(tfd.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(v.as_tensor()), values)


def test_a_value_that_does_not_fit_names_the_variable_and_both_shapes():
    with tfd.variable_scope("layer"):
        with pytest.raises(ValueError, match=r"layer/w.*\[5\].*\[2, 2\]"):
            tfd.get_variable("w", [2, 2], initializer=tfd.constant_initializer([1, 2, 3, 4, 5]))
        with pytest.raises(ValueError, match=r"layer/v.*\[4\].*\[2, 2\].*verify_shape"):
            tfd.get_variable("v", [2, 2],
                             initializer=tfd.constant_initializer([1, 2, 3, 4], verify_shape=True))
        with pytest.raises(ValueError, match=r"layer/t.*\[5\].*\[2, 2\]"):
            tfd.get_variable("t", [2, 2], initializer=tfd.constant_initializer(np.ones(5)),
                             partitioner=tfd.fixed_size_partitioner(2))


@pytest.mark.parametrize("make, variance, bound", [
    # [5, 5, 40, 60]: fan in 1000, fan out 1500 (the 5x5 window counted)
    (lambda: tfd.initializers.he_normal(seed=1), 2.0 / 1000, 2 * (2.0 / 1000) ** 0.5 / 0.8796),
    (lambda: tfd.initializers.lecun_uniform(seed=1), 1.0 / 1000, (3.0 / 1000) ** 0.5),
    (lambda: tfd.glorot_normal_initializer(seed=1), 1.0 / 1250, 2 * (1.0 / 1250) ** 0.5 / 0.8796),
    (lambda: tfd.variance_scaling_initializer(3.0, "fan_out", "untruncated_normal", seed=1),
     3.0 / 1500, None),
])
def test_variance_scaling_draws_the_variance_its_fans_give(make, variance, bound):
    v = tfd.get_variable("kernel", [5, 5, 40, 60], initializer=make())
    with tfd.Session() as sess:
        sess.run(tfd.initializers.global_variables())
        got = sess.run(v)
    assert abs(got.mean()) < 0.05 * variance ** 0.5
    assert abs(got.var() / variance - 1) < 0.03  # 60,000 draws
    if bound is not None:
        assert np.abs(got).max() <= bound * (1 + 1e-6)


def test_variance_scaling_refuses_what_tf1_refuses():
    with pytest.raises(ValueError, match="mode"):
        tfd.variance_scaling_initializer(mode="fan_sum")
    with pytest.raises(ValueError, match="distribution"):
        tfd.initializers.variance_scaling(distribution="cauchy")
