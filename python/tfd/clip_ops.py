"""TF1's gradient clipping, tfd.clip_by_norm, tfd.clip_by_average_norm,
tfd.global_norm and tfd.clip_by_global_norm, over existing ops:

    grads, variables = zip(*opt.compute_gradients(loss))
    grads, norm = tfd.clip_by_global_norm(grads, 5.0)
    train = opt.apply_gradients(zip(grads, variables))

A tfd.IndexedSlices (an embedding's gradient) is clipped in its values and
stays sparse; its norm is that of its values, so rows of a repeated index
count apart, as in TF1. None entries (no gradient) pass through.
"""
import collections.abc
import contextlib

from . import framework, math_ops
from .op_gen import raw_ops as _raw


def _dense(t):
    """What is clipped of t: an IndexedSlices' values, else t as a tensor."""
    return t.values if isinstance(t, framework.IndexedSlices) else math_ops._t(t)


def _like(t, values):
    """values in t's form: an IndexedSlices of t's rows when t is one."""
    if isinstance(t, framework.IndexedSlices):
        return framework.IndexedSlices(values, t.indices, t.dense_shape)
    return values


def _beside(t):
    """Ops made inside go on t's device, as TF1's colocate_with: a gradient
    held on a ps task is reduced there, not sent whole to the worker."""
    if not t.device:
        return contextlib.nullcontext()
    return framework.device(t.device)


def _as_list(t_list):
    if not isinstance(t_list, collections.abc.Sequence) or isinstance(t_list, str):
        raise TypeError("t_list should be a sequence")
    return list(t_list)


def clip_by_norm(t, clip_norm, axes=None, name=None):
    """TF1's: t * clip_norm / max(||t||, clip_norm), the L2 norm taken over
    axes (all when None), so t is unchanged when its norm is at most
    clip_norm. A zero t stays zero with a finite gradient."""
    with framework.name_scope(name, "clip_by_norm"):
        values = _dense(t)
        l2sum = math_ops.reduce_sum(math_ops.multiply(values, values), axes, keepdims=True)
        positive = math_ops.greater(l2sum, 0)
        # sqrt's gradient at 0 is inf, and Select's other branch would carry
        # inf * 0 = NaN back: take the root of 1 there instead.
        safe = math_ops.where(positive, l2sum, math_ops.ones_like(l2sum))
        l2norm = math_ops.where(positive, _raw.sqrt(safe), l2sum)
        scaled = math_ops.multiply(values, clip_norm)
        clipped = math_ops.identity(math_ops.truediv(scaled, math_ops.maximum(l2norm, clip_norm)))
        return _like(t, clipped)


def clip_by_average_norm(t, clip_norm, name=None):
    """TF1's: t * clip_norm / max(||t|| / t's size, clip_norm), the L2 norm
    of all of t averaged over its elements, so t is unchanged while that
    is at most clip_norm."""
    with framework.name_scope(name, "clip_by_average_norm"):
        t = math_ops._t(t)
        size = math_ops.cast(_raw.size(t), t.dtype)
        inverse = _raw.rsqrt(math_ops.reduce_sum(math_ops.multiply(t, t)))
        return math_ops.identity(t * clip_norm * math_ops.minimum(inverse * size,
                                                                  1.0 / clip_norm))


def global_norm(t_list, name=None):
    """TF1's: sqrt(sum of ||t||^2 over the tensors of t_list), None entries
    skipped; each square taken where its tensor lives (L2Loss, doubled)."""
    tensors = [_dense(t) for t in _as_list(t_list) if t is not None]
    if not tensors:
        raise ValueError("global_norm: t_list holds no tensor")
    with framework.name_scope(name, "global_norm"):
        halves = []
        for v in tensors:
            with _beside(v):
                halves.append(_raw.l2_loss(v))
        half_squared = math_ops.reduce_sum(math_ops.stack(halves))
        return _raw.sqrt(math_ops.multiply(half_squared, 2.0), name="global_norm")


def clip_by_global_norm(t_list, clip_norm, use_norm=None, name=None):
    """TF1's: (each t * clip_norm / max(global_norm, clip_norm), the global
    norm), None entries kept as None and IndexedSlices as IndexedSlices.
    use_norm, when given, stands for the global norm. As TF1's, a global
    norm of inf or NaN makes every clipped value NaN, so that a diverging
    step shows instead of being scaled to zeros."""
    t_list = _as_list(t_list)
    if use_norm is None:
        use_norm = global_norm(t_list, name)
    use_norm = math_ops._t(use_norm)
    with framework.name_scope(name, "clip_by_global_norm") as scope:
        one = framework.convert_to_tensor(1.0, dtype=use_norm.dtype)
        scale_if_finite = math_ops.multiply(clip_norm, math_ops.minimum(
            math_ops.truediv(one, use_norm), math_ops.truediv(one, clip_norm)))
        nan = framework.convert_to_tensor(float("nan"), dtype=use_norm.dtype)
        scale = math_ops.where(_raw.is_finite(use_norm), scale_if_finite, nan)
        clipped = []
        for i, t in enumerate(t_list):
            if t is None:
                clipped.append(None)
                continue
            v = _dense(t)
            with _beside(v):
                c = math_ops.identity(math_ops.multiply(v, math_ops.cast(scale, v.dtype)),
                                      name="%s_%d" % (scope.rstrip("/").rpartition("/")[2], i))
            clipped.append(_like(t, c))
    return clipped, use_norm
