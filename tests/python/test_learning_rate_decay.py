"""tfd.train's decaying learning rates against TF1's formulas worked out in
float64, at step 0, on either side of each boundary and past the decay, and
a training run whose rate decays: each step moves the variable by that
step's rate (the step read before global_step moves)."""
import math

import numpy as np
import pytest

import tfd

DECAY = 10
STEPS = [0, 1, DECAY - 1, DECAY, DECAY + 1, 2 * DECAY, 3 * DECAY + 2, 1000]


def _exponential(step, rate, stair):
    p = step / DECAY
    return 0.1 * rate ** (math.floor(p) if stair else p)


def _polynomial(step, end, power, cycle):
    steps = DECAY
    if cycle:
        steps = DECAY * max(1, math.ceil(step / DECAY))
    else:
        step = min(step, DECAY)
    return (0.1 - end) * (1 - step / steps) ** power + end


def _sgdr(step, t_mul, m_mul, alpha):
    """SGDR period by period: the period holding `step`, and its peak."""
    start, period, peak = 0.0, DECAY, 1.0
    while step >= start + period:
        start, period, peak = start + period, period * t_mul, peak * m_mul
    done = (step - start) / period
    return 0.1 * ((1 - alpha) * 0.5 * peak * (1 + math.cos(math.pi * done)) + alpha)


def _linear_cosine(step, periods, alpha, beta):
    k = min(step, DECAY)
    cosine = 0.5 * (1 + math.cos(2 * math.pi * periods * k / DECAY))
    return 0.1 * ((alpha + (DECAY - k) / DECAY) * cosine + beta)


SCHEDULES = {
    "exponential": (lambda s: tfd.train.exponential_decay(0.1, s, DECAY, 0.5),
                    lambda k: _exponential(k, 0.5, False)),
    "exponential staircase": (
        lambda s: tfd.train.exponential_decay(0.1, s, DECAY, 0.5, staircase=True),
        lambda k: _exponential(k, 0.5, True)),
    "natural exp": (lambda s: tfd.train.natural_exp_decay(0.1, s, DECAY, 0.3),
                    lambda k: 0.1 * math.exp(-0.3 * k / DECAY)),
    "inverse time staircase": (
        lambda s: tfd.train.inverse_time_decay(0.1, s, DECAY, 0.5, staircase=True),
        lambda k: 0.1 / (1 + 0.5 * math.floor(k / DECAY))),
    "polynomial": (lambda s: tfd.train.polynomial_decay(0.1, s, DECAY, 0.01, power=2.0),
                   lambda k: _polynomial(k, 0.01, 2.0, False)),
    "polynomial cycle": (lambda s: tfd.train.polynomial_decay(0.1, s, DECAY, 0.01, cycle=True),
                         lambda k: _polynomial(k, 0.01, 1.0, True)),
    "cosine": (lambda s: tfd.train.cosine_decay(0.1, s, DECAY, alpha=0.2),
               lambda k: 0.1 * (0.8 * 0.5 * (1 + math.cos(math.pi * min(k, DECAY) / DECAY))
                                + 0.2)),
    "cosine restarts": (
        lambda s: tfd.train.cosine_decay_restarts(0.1, s, DECAY, t_mul=2.0, m_mul=0.5, alpha=0.1),
        lambda k: _sgdr(k, 2.0, 0.5, 0.1)),
    "cosine restarts of one length": (
        lambda s: tfd.train.cosine_decay_restarts(0.1, s, DECAY, t_mul=1.0, m_mul=0.75),
        lambda k: _sgdr(k, 1.0, 0.75, 0.0)),
    "linear cosine": (
        lambda s: tfd.train.linear_cosine_decay(0.1, s, DECAY, num_periods=2, alpha=0.1),
        lambda k: _linear_cosine(k, 2, 0.1, 0.001)),
    "noisy linear cosine, almost no noise": (
        lambda s: tfd.train.noisy_linear_cosine_decay(0.1, s, DECAY, initial_variance=1e-14,
                                                      num_periods=2, alpha=0.1),
        lambda k: _linear_cosine(k, 2, 0.1, 0.001)),
    "piecewise": (lambda s: tfd.train.piecewise_constant(s, [DECAY, 2 * DECAY], [1.0, 0.5, 0.1]),
                  lambda k: 1.0 if k <= DECAY else 0.5 if k <= 2 * DECAY else 0.1),
}


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_a_schedule_is_tf1s_formula(name):
    make, want = SCHEDULES[name]
    step = tfd.placeholder(tfd.int64, [])
    lr = make(step)
    assert lr.dtype == tfd.float32
    with tfd.Session() as sess:
        for k in STEPS:
            got = sess.run(lr, {step: np.int64(k)})
            np.testing.assert_allclose(got, want(k), rtol=2e-6, atol=0,
                                       err_msg="%s at step %d" % (name, k))


def test_a_float64_rate_decays_in_float64():
    step = tfd.placeholder(tfd.int64, [])
    lr = tfd.train.exponential_decay(tfd.constant(0.1, tfd.float64), step, 3, 0.1)
    assert lr.dtype == tfd.float64
    with tfd.Session() as sess:
        assert sess.run(lr, {step: np.int64(7)}) == pytest.approx(0.1 * 0.1 ** (7 / 3),
                                                                  rel=1e-15)


def test_training_with_a_decaying_rate_moves_by_each_steps_rate():
    step = tfd.train.get_or_create_global_step()
    w = tfd.Variable(np.float32(0), name="w")
    lr = tfd.train.exponential_decay(0.5, step, 1, 0.5)  # 0.5, 0.25, 0.125, ...
    train = tfd.train.GradientDescentOptimizer(lr).minimize(tfd.identity(w), global_step=step)
    with tfd.Session() as sess:
        sess.run(tfd.global_variables_initializer())
        for _ in range(4):
            sess.run(train)
        assert sess.run(step) == 4
        assert sess.run(w) == np.float32(-(0.5 + 0.25 + 0.125 + 0.0625))


def test_bad_arguments_say_what_is_wrong():
    step = tfd.train.get_or_create_global_step()
    with pytest.raises(ValueError, match="exponential_decay requires global_step"):
        tfd.train.exponential_decay(0.1, None, 10, 0.5)
    with pytest.raises(ValueError, match="decay_steps must be positive, got 0"):
        tfd.train.polynomial_decay(0.1, step, 0)
    with pytest.raises(ValueError, match="2 boundaries need 3 values, got 2"):
        tfd.train.piecewise_constant(step, [1, 2], [0.1, 0.2])
    with pytest.raises(ValueError, match="not increasing"):
        tfd.train.piecewise_constant(step, [5, 2], [0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match="not all of one dtype"):
        tfd.train.piecewise_constant(step, [5], [1, 0.5])
    with pytest.raises(TypeError, match="int32, not a floating-point"):
        tfd.train.cosine_decay(tfd.constant(1), step, 10)


def test_a_decaying_rate_on_a_cluster(cluster_factory):
    """The rate worked out on the worker (replica_device_setter leaves ops
    without variables there) reaches the updates on the ps."""
    cluster = cluster_factory({"ps": 1, "worker": 1})
    with tfd.device(tfd.train.replica_device_setter(cluster=cluster.spec)):
        step = tfd.train.get_or_create_global_step()
        w = tfd.Variable(np.float32(0), name="w")
        lr = tfd.train.piecewise_constant(step, [1], [0.5, 0.25])  # 0.5 at steps 0, 1
        train = tfd.train.GradientDescentOptimizer(lr).minimize(tfd.identity(w),
                                                               global_step=step)
    assert lr.op.device.startswith("/job:worker")
    with tfd.Session(cluster.address("worker", 0), timeout=60) as sess:
        sess.run(tfd.global_variables_initializer())
        for _ in range(3):
            sess.run(train)
        assert sess.run(w) == np.float32(-(0.5 + 0.5 + 0.25))


def test_the_noisy_decay_draws_new_noise_each_step():
    lr = tfd.train.noisy_linear_cosine_decay(0.1, tfd.constant(np.int64(3)), DECAY)
    with tfd.Session() as sess:
        draws = {float(sess.run(lr)) for _ in range(4)}
    assert len(draws) == 4
