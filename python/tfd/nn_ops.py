"""TensorFlow 1.x's tf.nn (tfd.nn): activations, convolutions and pools,
normalizations, losses, dropout and top_k, over the generated op functions
(op_gen.py) and the functions of math_ops.py, with TF1's signatures.
"""
import builtins
import collections
import types

from . import _tfd, dtypes, errors, framework
from .math_ops import (_c, _is_tensor, _random, _t, add, cast, expand_dims, greater_equal,
                       maximum, multiply,
                       negative, reduce_mean, reduce_sum, squeeze, squared_difference,
                       stop_gradient, subtract, transpose, truediv, where, zeros_like)
from .op_gen import raw_ops as _raw

TopKV2 = collections.namedtuple("TopKV2", ["values", "indices"])


def _last_axis(op, logits, axis, name):
    """op (which works on the last axis) applied along axis, as TF1's
    _softmax: axis swapped with the last one, and back."""
    logits = _t(logits)
    rank = logits.shape.ndims
    if axis is None or axis == -1 or (rank is not None and axis == rank - 1):
        return op(logits, name=name)
    if rank is None:
        raise ValueError("softmax along axis %d needs the rank of %s" % (axis, logits.name))
    if not -rank <= axis < rank:
        raise errors.InvalidArgumentError("axis %d is out of range for rank %d" % (axis, rank))
    perm = list(builtins.range(rank))
    perm[axis], perm[-1] = perm[-1], perm[axis]
    return transpose(op(transpose(logits, perm)), perm, name=name)


def softmax(logits, axis=None, name=None, dim=None):
    """TF1's tf.nn.softmax: exp(x) / sum(exp(x)) along axis (the last by
    default; dim is TF1's older name)."""
    return _last_axis(_raw.softmax, logits, dim if axis is None else axis, name)


def log_softmax(logits, axis=None, name=None, dim=None):
    """TF1's tf.nn.log_softmax: x - log(sum(exp(x))) along axis (the last by
    default; dim is TF1's older name)."""
    return _last_axis(_raw.log_softmax, logits, dim if axis is None else axis, name)


def bias_add(value, bias, name=None):
    return _raw.bias_add(_t(value), _t(bias), name=name)


def leaky_relu(features, alpha=0.2, name=None):
    return _raw.leaky_relu(_t(features), alpha=alpha, name=name)


def conv2d(input, filter, strides, padding, name=None, **attrs):  # noqa: A002
    return _raw.conv2d(_t(input), _t(filter), strides=list(strides), padding=padding,
                       name=name, **attrs)


def conv2d_transpose(value, filter, output_shape, strides, padding="SAME",  # noqa: A002
                     data_format="NHWC", name=None):
    """TF1's tf.nn.conv2d_transpose: the gradient of conv2d with respect to
    its input (Conv2DBackpropInput). filter is [rows, cols, out_channels,
    in_channels]; value's channels must be in_channels; output_shape is the
    4-D NHWC output's."""
    value, filter = _t(value), _t(filter)
    if value.shape.ndims == 4 and filter.shape.ndims == 4 and None not in (
            value.shape[3], filter.shape[3]) and value.shape[3] != filter.shape[3]:
        raise ValueError("conv2d_transpose: value has %d channels but filter takes %d"
                         % (value.shape[3], filter.shape[3]))
    sizes = output_shape if _is_tensor(output_shape) else _c(list(output_shape), dtype=dtypes.int32)
    return _raw.conv2d_backprop_input(sizes, filter, value, strides=list(strides),
                                      padding=padding, data_format=data_format, name=name)


def depthwise_conv2d_native(input, filter, strides, padding, data_format="NHWC",  # noqa: A002
                            dilations=(1, 1, 1, 1), name=None):
    """TF1's tf.nn.depthwise_conv2d_native: input channel c convolved with
    filter[:, :, c, m] gives output channel c * multiplier + m."""
    return _raw.depthwise_conv2d_native(_t(input), _t(filter), strides=list(strides),
                                        padding=padding, data_format=data_format,
                                        dilations=list(dilations), name=name)


def depthwise_conv2d(input, filter, strides, padding, rate=None, name=None,  # noqa: A002
                     data_format=None):
    """TF1's tf.nn.depthwise_conv2d: depthwise_conv2d_native with rate as the
    dilation ([rate_rows, rate_cols]); as in TF1, strides must be 1 when a
    rate is above 1. NHWC only."""
    rate = [1, 1] if rate is None else list(rate)
    if max(rate) > 1 and any(s != 1 for s in strides):
        raise ValueError("depthwise_conv2d: strides above 1 with a rate above 1")
    return depthwise_conv2d_native(input, filter, strides, padding,
                                   data_format=data_format or "NHWC",
                                   dilations=[1, rate[0], rate[1], 1], name=name)


def conv1d(value, filters, stride, padding, use_cudnn_on_gpu=None, data_format=None, name=None,
           dilations=None):
    """TF1's tf.nn.conv1d: value [batch, width, in] with filters [width, in,
    out], as a conv2d of one row (NWC only)."""
    if data_format not in (None, "NWC"):
        raise ValueError("conv1d: data_format %r is not supported; tfd's kernels are NWC"
                         % (data_format,))
    rows = expand_dims(_t(value), 1)
    kernel = expand_dims(_t(filters), 0)
    out = conv2d(rows, kernel, [1, 1, int(stride), 1], padding,
                 dilations=[1, 1, int(dilations or 1), 1])
    return squeeze(out, [1], name=name)


def separable_conv2d(input, depthwise_filter, pointwise_filter, strides, padding,  # noqa: A002
                     rate=None, name=None, data_format=None):
    """TF1's tf.nn.separable_conv2d: depthwise_conv2d (depthwise_filter
    [rows, cols, in, multiplier]) then a 1x1 conv2d mixing its in *
    multiplier channels (pointwise_filter [1, 1, in * multiplier, out])."""
    depthwise = depthwise_conv2d(input, depthwise_filter, strides, padding, rate=rate,
                                 data_format=data_format)
    return conv2d(depthwise, pointwise_filter, [1, 1, 1, 1], "VALID", name=name)


def max_pool(value, ksize, strides, padding, name=None):
    return _raw.max_pool(_t(value), ksize=list(ksize), strides=list(strides),
                         padding=padding, name=name)


def avg_pool(value, ksize, strides, padding, name=None):
    return _raw.avg_pool(_t(value), ksize=list(ksize), strides=list(strides),
                         padding=padding, name=name)


def local_response_normalization(input, depth_radius=5, bias=1, alpha=1, beta=0.5,  # noqa: A002
                                 name=None):
    """TF1's tf.nn.lrn: input[d] / (bias + alpha * sum of input[d']^2 for
    |d' - d| <= depth_radius along the last axis)^beta, of a 4-D input."""
    return _raw.lrn(_t(input), depth_radius=int(depth_radius), bias=float(bias),
                    alpha=float(alpha), beta=float(beta), name=name)


def fused_batch_norm(x, scale, offset, mean=None, variance=None, epsilon=0.001,
                     data_format="NHWC", is_training=True, name=None):
    """TF1's tf.nn.fused_batch_norm: (y, batch_mean, batch_var) per channel
    of NHWC x. Training: the batch's statistics normalize x, and batch_var
    is their unbiased variance, as TF1's; else mean and variance (required)
    do. epsilon is at least 1.001e-5, as TF1 makes it."""
    x = _t(x)
    if mean is None or variance is None:
        if not is_training:
            raise ValueError("fused_batch_norm: mean and variance are required when "
                             "is_training is False")
        mean, variance = (_c([], dtype=x.dtype) for _ in "mv")
    y, batch_mean, batch_var, _, _ = _raw.fused_batch_norm(
        x, scale, offset, mean, variance, epsilon=builtins.max(float(epsilon), 1.001e-5),
        data_format=data_format, is_training=is_training, name=name)
    return y, batch_mean, batch_var


def batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None):
    """TF1's tf.nn.batch_normalization, its formula from elementwise ops:
    x * inv + (offset - mean * inv), inv = scale / sqrt(variance + epsilon)
    (offset and scale may be None)."""
    x = _t(x)
    inv = _raw.rsqrt(add(variance, variance_epsilon))
    if scale is not None:
        inv = multiply(inv, scale)
    shift = subtract(offset, multiply(mean, inv)) if offset is not None else -multiply(mean, inv)
    return add(multiply(x, cast(inv, x.dtype)), cast(shift, x.dtype), name=name)


def moments(x, axes, shift=None, name=None, keep_dims=None, keepdims=None):
    """TF1's tf.nn.moments: (mean, variance) over axes, the variance biased
    (divided by the count), computed as TF1: mean of the squared distance to
    the (gradient-stopped) mean. shift is ignored, as in TF1."""
    x = _t(x)
    keep = bool(keep_dims if keep_dims is not None else keepdims)
    axes = [axes] if isinstance(axes, int) else list(axes)
    mean = reduce_mean(x, axes, keepdims=True)
    variance = reduce_mean(squared_difference(x, stop_gradient(mean)), axes, keepdims=True)
    if not keep and axes:
        mean, variance = squeeze(mean, axes), squeeze(variance, axes)
    return mean, variance


def top_k(input, k=1, sorted=True, name=None):  # noqa: A002
    """TF1's tf.nn.top_k: (values, indices) of the k largest entries of each
    row (the last axis), largest first; indices int32."""
    values, indices = _raw.top_kv2(_t(input), _c(k, dtype=dtypes.int32), sorted=sorted,
                                   name=name)
    return TopKV2(values, indices)


def in_top_k(predictions, targets, k, name=None):
    """TF1's tf.nn.in_top_k: for each row, whether predictions[row,
    targets[row]] is among the row's k largest (ties count as in)."""
    targets = _t(targets)
    return _raw.in_top_kv2(_t(predictions), targets, _c(k, dtype=targets.dtype), name=name)


def _softmax_xent(op, labels, logits, name):
    logits = _t(logits)
    return op(logits, _c(labels, dtype=None if _is_tensor(labels) else logits.dtype),
              name=name)[0]


def softmax_cross_entropy_with_logits(labels=None, logits=None, name=None):
    return _softmax_xent(_raw.softmax_cross_entropy_with_logits, labels, logits, name)


def sparse_softmax_cross_entropy_with_logits(labels=None, logits=None, name=None):
    logits = _t(logits)
    return _raw.sparse_softmax_cross_entropy_with_logits(logits, _t(labels), name=name)[0]


def sigmoid_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None, name=None):
    """TF1's: the cross entropy of sigmoid(logits) and labels z, as
    max(x, 0) - x z + log(1 + exp(-|x|)) for logits x, which overflows for
    no x. The last term is Softplus of -|x|: its kernel uses log1p, which the
    registry lacks as an op, so it keeps full precision where exp(-|x|) is
    tiny. The halves are chosen by Select on x >= 0, as TF1's, so the
    gradient at x = 0 is sigmoid(0) - z (Relu's and Abs's would give -z)."""
    if _sentinel is not None:
        raise ValueError("sigmoid_cross_entropy_with_logits takes labels= and logits= by name")
    if labels is None or logits is None:
        raise ValueError("sigmoid_cross_entropy_with_logits needs both labels and logits")
    with framework.name_scope(name, "logistic_loss"):
        logits = _t(logits)
        labels = _c(labels, dtype=logits.dtype) if not _is_tensor(labels) else _t(labels)
        _check_same_shape(logits, labels)
        zeros = zeros_like(logits)
        positive = greater_equal(logits, zeros)
        relu_logits = where(positive, logits, zeros)
        neg_abs_logits = where(positive, negative(logits), logits)
        return add(subtract(relu_logits, multiply(logits, labels)),
                   _raw.softplus(neg_abs_logits))


def _check_same_shape(logits, labels):
    """TF1's check that labels fit logits, on what the static shapes say."""
    if not logits.shape.is_compatible_with(labels.shape):
        raise ValueError("logits and labels must have the same shape (%s vs %s)"
                         % (logits.shape.dims, labels.shape.dims))


def l2_normalize(x, axis=None, epsilon=1e-12, name=None, dim=None):
    """TF1's: x / sqrt(max(sum(x^2), epsilon)) along axis (all axes when
    None; dim is TF1's older name). A zero vector stays zero. As TF1's, a
    float32 vector whose squares overflow (|x| above ~1.8e19) gives zeros:
    the sum is inf and its rsqrt 0."""
    with framework.name_scope(name, "l2_normalize"):
        x = _t(x)
        square_sum = reduce_sum(_raw.square(x), dim if axis is None else axis, keepdims=True)
        return multiply(x, _raw.rsqrt(maximum(square_sum, _c(epsilon, dtype=x.dtype))))


def dropout(x, keep_prob=None, noise_shape=None, seed=None, name=None, rate=None):
    """TF1's dropout: each element kept with probability 1 - rate and scaled
    by 1 / (1 - rate), or zeroed; the mask seeded as random_uniform. Give rate
    or (TF1's older) keep_prob. A Python number makes api/ops.h's Dropout; a
    tensor (a fed keep_prob) TF1's formula, x / keep * floor(keep + uniform)."""
    if (rate is None) == (keep_prob is None):
        raise errors.InvalidArgumentError(
            "dropout takes exactly one of rate and keep_prob; got rate=%r, keep_prob=%r"
            % (rate, keep_prob))
    if noise_shape is not None:
        raise errors.InvalidArgumentError(
            "dropout: noise_shape is not supported; got %r" % (noise_shape,))
    x = _t(x)
    if _is_tensor(keep_prob) or _is_tensor(rate):
        keep = cast(keep_prob, x.dtype) if rate is None else 1 - cast(rate, x.dtype)
        mask = _raw.floor(keep + _random(_raw.random_uniform, _raw.shape(x), x.dtype, seed))
        return multiply(truediv(x, keep), mask, name=name)
    rate = 1.0 - float(keep_prob) if rate is None else float(rate)
    g = x.graph
    return g._tensor(_tfd.dropout(g._builder, g._context(), name or "", x._ref(), rate,
                                  None if seed is None else int(seed)))


nn = types.SimpleNamespace(
    relu=_raw.relu, relu6=_raw.relu6, elu=_raw.elu, selu=_raw.selu, softplus=_raw.softplus,
    sigmoid=_raw.sigmoid, tanh=_raw.tanh, l2_loss=_raw.l2_loss,
    softmax=softmax, log_softmax=log_softmax, bias_add=bias_add, leaky_relu=leaky_relu,
    conv1d=conv1d, conv2d=conv2d, conv2d_transpose=conv2d_transpose,
    depthwise_conv2d=depthwise_conv2d, separable_conv2d=separable_conv2d,
    depthwise_conv2d_native=depthwise_conv2d_native, max_pool=max_pool, avg_pool=avg_pool,
    lrn=local_response_normalization, local_response_normalization=local_response_normalization,
    fused_batch_norm=fused_batch_norm, batch_normalization=batch_normalization, moments=moments,
    top_k=top_k, in_top_k=in_top_k,
    softmax_cross_entropy_with_logits=softmax_cross_entropy_with_logits,
    softmax_cross_entropy_with_logits_v2=softmax_cross_entropy_with_logits,
    sparse_softmax_cross_entropy_with_logits=sparse_softmax_cross_entropy_with_logits,
    sigmoid_cross_entropy_with_logits=sigmoid_cross_entropy_with_logits,
    l2_normalize=l2_normalize, dropout=dropout)
