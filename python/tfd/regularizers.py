"""Weight regularizers, as tf.contrib.layers' (l1, l2, l1_l2, sum), and the
tfd.contrib namespace that holds them.

A regularizer is a function of a weight returning a scalar loss, or None:
a scale of 0 turns it off, as in TF1. Given to get_variable or to a layer
(kernel_regularizer=, ...), its loss of each variable made goes to
GraphKeys.REGULARIZATION_LOSSES, which tfd.losses.get_regularization_loss
sums:

    reg = tfd.contrib.layers.l2_regularizer(1e-4)
    logits = tfd.layers.dense(h, 10, kernel_regularizer=reg)
    loss = cross_entropy + tfd.losses.get_regularization_loss()
"""
import numbers
import types

from . import framework, math_ops
from .op_gen import raw_ops


def _scale_is_on(what, scale):
    """TF1's checks of a scale: an int (a likely typo for a float) or a
    negative number is a ValueError; a number 0 turns the regularizer off.
    A tensor is taken as it is."""
    if isinstance(scale, numbers.Integral):
        raise ValueError("%s: scale must be a float, got the integer %r" % (what, scale))
    if isinstance(scale, numbers.Real):
        if scale < 0:
            raise ValueError("%s: scale must not be negative, got %g" % (what, scale))
        return scale != 0
    return True


def _scaled(what, scale, scope, penalty):
    """A regularizer of scale * penalty(weights), its ops in a name scope
    `scope` (else `what`); one of no effect when the scale is 0."""
    if not _scale_is_on(what, scale):
        return lambda weights: None

    def regularizer(weights):
        w = framework.convert_to_tensor(weights)
        with framework.name_scope(scope, default_name=what):
            factor = framework.convert_to_tensor(scale, dtype=w.dtype, name="scale")
            return math_ops.multiply(factor, penalty(w))

    return regularizer


def l1_regularizer(scale, scope=None):
    """A regularizer of scale * sum(|weights|), which drives weights to
    exactly 0 (sparsity)."""
    return _scaled("l1_regularizer", scale, scope,
                   lambda w: math_ops.reduce_sum(raw_ops.abs(w)))


def l2_regularizer(scale, scope=None):
    """A regularizer of scale * sum(weights ** 2) / 2 (tfd.nn.l2_loss):
    weight decay."""
    return _scaled("l2_regularizer", scale, scope, raw_ops.l2_loss)


def sum_regularizer(regularizer_list, scope=None):
    """A regularizer of the sum of those given (None where none is left,
    leaving out the None ones and, unlike TF1's, None losses too)."""
    regularizers = [r for r in regularizer_list if r is not None]
    if not regularizers:
        return None

    def regularizer(weights):
        with framework.name_scope(scope, default_name="sum_regularizer"):
            losses = [loss for loss in (r(weights) for r in regularizers) if loss is not None]
            return math_ops.add_n(losses) if losses else None

    return regularizer


def l1_l2_regularizer(scale_l1=1.0, scale_l2=1.0, scope=None):
    """l1_regularizer(scale_l1) + l2_regularizer(scale_l2); a part whose
    scale is 0 is left out, as in TF1's last releases."""
    l1_on = _scale_is_on("l1_l2_regularizer", scale_l1)
    l2_on = _scale_is_on("l1_l2_regularizer", scale_l2)
    if not l1_on:
        return l2_regularizer(scale_l2, scope)
    if not l2_on:
        return l1_regularizer(scale_l1, scope)
    return sum_regularizer([l1_regularizer(scale_l1), l2_regularizer(scale_l2)],
                           scope=scope or "l1_l2_regularizer")


# tf.contrib: only the regularizers of tf.contrib.layers.
contrib = types.SimpleNamespace(layers=types.SimpleNamespace(
    l1_regularizer=l1_regularizer, l2_regularizer=l2_regularizer,
    l1_l2_regularizer=l1_l2_regularizer, sum_regularizer=sum_regularizer))
