"""tf.train's learning rates that decay with the global step, as TF1's
learning_rate_decay module computes them: each returns a scalar tensor of the
learning rate's dtype (float32 for a Python number), worked out at every step
from `global_step`, which an optimizer takes as its learning_rate.

    lr = tfd.train.exponential_decay(0.1, step, decay_steps=1000, decay_rate=0.96)
    train = tfd.train.GradientDescentOptimizer(lr).minimize(loss, global_step=step)
"""
import math

from . import framework, math_ops
from .op_gen import raw_ops


def _rate_and_step(learning_rate, global_step, what):
    """The learning rate as a float tensor, and global_step as that dtype."""
    if global_step is None:
        raise ValueError("%s requires global_step" % what)
    # A Python number is float32, as TF1's; a tensor or variable as it is.
    lr = framework.convert_to_tensor(learning_rate if not isinstance(learning_rate, int)
                                     else float(learning_rate))
    if not lr.dtype.is_floating:
        raise TypeError("%s: the learning rate %s is %s, not a floating-point tensor"
                        % (what, lr.name, lr.dtype.name))
    return lr, _as(framework.convert_to_tensor(global_step), lr.dtype)


def _as(x, dtype):
    return x if x.dtype == dtype else raw_ops.cast(x, DstT=dtype.name)


def _scalar(value, dtype):
    return framework.constant(float(value), dtype=dtype)


def _positive(what, name, value):
    if not value > 0:
        raise ValueError("%s: %s must be positive, got %r" % (what, name, value))


def _progress(step, decay_steps, staircase, dtype):
    """global_step / decay_steps, floored when `staircase`."""
    p = raw_ops.div(step, _scalar(decay_steps, dtype))
    return raw_ops.floor(p) if staircase else p


def exponential_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False,
                      name=None):
    """learning_rate * decay_rate ^ (global_step / decay_steps); with
    `staircase` the exponent is floored, so the rate drops every
    decay_steps steps."""
    _positive("exponential_decay", "decay_steps", decay_steps)
    with framework.name_scope(name, "ExponentialDecay"):
        lr, step = _rate_and_step(learning_rate, global_step, "exponential_decay")
        p = _progress(step, decay_steps, staircase, lr.dtype)
        return raw_ops.mul(lr, raw_ops.pow(_scalar(decay_rate, lr.dtype), p))


def natural_exp_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False,
                      name=None):
    """learning_rate * exp(-decay_rate * global_step / decay_steps)
    (the quotient floored with `staircase`)."""
    _positive("natural_exp_decay", "decay_steps", decay_steps)
    with framework.name_scope(name, "NaturalExpDecay"):
        lr, step = _rate_and_step(learning_rate, global_step, "natural_exp_decay")
        p = _progress(step, decay_steps, staircase, lr.dtype)
        return raw_ops.mul(lr, raw_ops.exp(raw_ops.mul(_scalar(-decay_rate, lr.dtype), p)))


def inverse_time_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False,
                       name=None):
    """learning_rate / (1 + decay_rate * global_step / decay_steps) (the
    quotient floored with `staircase`)."""
    _positive("inverse_time_decay", "decay_steps", decay_steps)
    with framework.name_scope(name, "InverseTimeDecay"):
        lr, step = _rate_and_step(learning_rate, global_step, "inverse_time_decay")
        p = _progress(step, decay_steps, staircase, lr.dtype)
        denominator = raw_ops.add(_scalar(1, lr.dtype), raw_ops.mul(_scalar(decay_rate, lr.dtype), p))
        return raw_ops.div(lr, denominator)


def polynomial_decay(learning_rate, global_step, decay_steps, end_learning_rate=0.0001,
                     power=1.0, cycle=False, name=None):
    """(learning_rate - end) * (1 - step / decay_steps) ^ power + end, where
    step stops at decay_steps; with `cycle` decay_steps instead grows to the
    first multiple of itself not below global_step (1 at step 0)."""
    _positive("polynomial_decay", "decay_steps", decay_steps)
    with framework.name_scope(name, "PolynomialDecay"):
        lr, step = _rate_and_step(learning_rate, global_step, "polynomial_decay")
        dtype = lr.dtype
        steps = _scalar(decay_steps, dtype)
        if cycle:
            multiplier = raw_ops.maximum(raw_ops.ceil(raw_ops.div(step, steps)),
                                         _scalar(1, dtype))
            steps = raw_ops.mul(steps, multiplier)
        else:
            step = raw_ops.minimum(step, steps)
        end = _as(framework.convert_to_tensor(end_learning_rate, dtype=dtype)
                  if isinstance(end_learning_rate, framework.Tensor)
                  else _scalar(end_learning_rate, dtype), dtype)
        left = raw_ops.sub(_scalar(1, dtype), raw_ops.div(step, steps))
        return raw_ops.add(raw_ops.mul(raw_ops.sub(lr, end),
                                       raw_ops.pow(left, _scalar(power, dtype))), end)


def cosine_decay(learning_rate, global_step, decay_steps, alpha=0.0, name=None):
    """learning_rate * ((1 - alpha) * (1 + cos(pi * step / decay_steps)) / 2
    + alpha), where step stops at decay_steps (SGDR's schedule without
    restarts)."""
    _positive("cosine_decay", "decay_steps", decay_steps)
    with framework.name_scope(name, "CosineDecay"):
        lr, step = _rate_and_step(learning_rate, global_step, "cosine_decay")
        dtype = lr.dtype
        steps = _scalar(decay_steps, dtype)
        done = raw_ops.div(raw_ops.minimum(step, steps), steps)
        cosine = raw_ops.mul(_scalar(0.5, dtype), raw_ops.add(
            _scalar(1, dtype), raw_ops.cos(raw_ops.mul(_scalar(math.pi, dtype), done))))
        decayed = raw_ops.add(raw_ops.mul(_scalar(1 - alpha, dtype), cosine), _scalar(alpha, dtype))
        return raw_ops.mul(lr, decayed)


def cosine_decay_restarts(learning_rate, global_step, first_decay_steps, t_mul=2.0, m_mul=1.0,
                          alpha=0.0, name=None):
    """SGDR (Loshchilov & Hutter): cosine_decay over first_decay_steps,
    then again from the top over t_mul times as many steps, each period's
    peak m_mul times the last one's, as TF1's."""
    _positive("cosine_decay_restarts", "first_decay_steps", first_decay_steps)
    _positive("cosine_decay_restarts", "t_mul", t_mul)
    with framework.name_scope(name, "SGDRDecay"):
        lr, step = _rate_and_step(learning_rate, global_step, "cosine_decay_restarts")
        dtype = lr.dtype
        done = step / _scalar(first_decay_steps, dtype)  # in first periods
        if t_mul == 1.0:
            restarts = raw_ops.floor(done)
            done = done - restarts
        else:  # period k is t_mul^k long: sum_{k<i} t_mul^k = (1 - t_mul^i) / (1 - t_mul)
            t = _scalar(t_mul, dtype)
            restarts = raw_ops.floor(raw_ops.log(1.0 - done * (1.0 - t_mul)) / math.log(t_mul))
            before = (1.0 - raw_ops.pow(t, restarts)) / (1.0 - t_mul)
            done = (done - before) / raw_ops.pow(t, restarts)
        peak = raw_ops.pow(_scalar(m_mul, dtype), restarts)
        cosine = 0.5 * peak * (1.0 + raw_ops.cos(math.pi * done))
        return raw_ops.mul(lr, (1.0 - alpha) * cosine + alpha)


def linear_cosine_decay(learning_rate, global_step, decay_steps, num_periods=0.5, alpha=0.0,
                        beta=0.001, name=None):
    """learning_rate * ((alpha + linear) * cosine + beta), linear falling
    from 1 to 0 over decay_steps and cosine making num_periods periods
    (Bello et al., Neural Optimizer Search), as TF1's."""
    _positive("linear_cosine_decay", "decay_steps", decay_steps)
    with framework.name_scope(name, "LinearCosineDecay"):
        lr, step = _rate_and_step(learning_rate, global_step, "linear_cosine_decay")
        linear, cosine = _linear_and_cosine(step, decay_steps, num_periods, lr.dtype)
        return raw_ops.mul(lr, (alpha + linear) * cosine + beta)


def noisy_linear_cosine_decay(learning_rate, global_step, decay_steps, initial_variance=1.0,
                              variance_decay=0.55, num_periods=0.5, alpha=0.0, beta=0.001,
                              name=None):
    """linear_cosine_decay with normal noise on its linear part, of
    variance initial_variance / (1 + step) ** variance_decay, drawn anew at
    every step, as TF1's."""
    _positive("noisy_linear_cosine_decay", "decay_steps", decay_steps)
    with framework.name_scope(name, "NoisyLinearCosineDecay"):
        lr, step = _rate_and_step(learning_rate, global_step, "noisy_linear_cosine_decay")
        dtype = lr.dtype
        linear, cosine = _linear_and_cosine(step, decay_steps, num_periods, dtype)
        steps = raw_ops.minimum(step, _scalar(decay_steps, dtype))
        variance = initial_variance / raw_ops.pow(1.0 + steps, _scalar(variance_decay, dtype))
        noise = math_ops.random_normal([], dtype=dtype) * raw_ops.sqrt(variance)
        return raw_ops.mul(lr, (alpha + linear + noise) * cosine + beta)


def _linear_and_cosine(step, decay_steps, num_periods, dtype):
    """What the linear cosine decays share, of step stopped at
    decay_steps: (decay_steps - step) / decay_steps, and
    (1 + cos(2 pi num_periods step / decay_steps)) / 2."""
    steps = _scalar(decay_steps, dtype)
    step = raw_ops.minimum(step, steps)
    done = step / steps
    return (steps - step) / steps, 0.5 * (1.0 + raw_ops.cos(2.0 * math.pi * num_periods * done))


def piecewise_constant(x, boundaries, values, name=None):
    """values[0] while x <= boundaries[0], values[i] while boundaries[i-1] <
    x <= boundaries[i], values[-1] once x > boundaries[-1]. Needs one more
    value than boundaries, in increasing order; the values all of one dtype
    (a Python float is float32, an int int32)."""
    boundaries, values = list(boundaries), list(values)
    if len(values) != len(boundaries) + 1:
        raise ValueError("piecewise_constant: %d boundaries need %d values, got %d"
                         % (len(boundaries), len(boundaries) + 1, len(values)))
    if any(b >= c for b, c in zip(boundaries, boundaries[1:])):
        raise ValueError("piecewise_constant: the boundaries %r are not increasing"
                         % (boundaries,))
    with framework.name_scope(name, "PiecewiseConstant"):
        x = framework._as_graph_element(x)
        tensors = [framework.convert_to_tensor(v) for v in values]
        dtype = tensors[0].dtype
        if any(t.dtype != dtype for t in tensors):
            raise ValueError("piecewise_constant: the values are not all of one dtype")
        out = tensors[-1]
        for b, v in reversed(list(zip(boundaries, tensors))):
            out = raw_ops.select(raw_ops.less_equal(x, framework.constant(b, dtype=x.dtype)), v,
                                 out)
        return out
