"""tf.layers' functions, TF 1.x's functional layers: dense, conv2d,
max_pooling2d, average_pooling2d, flatten, dropout and batch_normalization.

A layer with variables makes them with get_variable under a variable scope
named for it (`name`, else "dense", "dense_1", ... as TF1 numbers them), so
they are named as TF1's ("dense/kernel", "dense/bias", "conv2d/kernel") and
shared with reuse=True. Kernels default to Glorot uniform, biases to zeros.
Images are NHWC ("channels_last"), the only layout tfd's kernels take.

    h = tfd.layers.conv2d(images, 32, 5, padding="same", activation=tfd.nn.relu)
    h = tfd.layers.max_pooling2d(h, 2, 2)
    logits = tfd.layers.dense(tfd.layers.flatten(h), 10)
"""
import numpy as np

from . import framework, math_ops, nn_ops, variables
from .control_flow_ops import cond
from .op_gen import raw_ops

# Arguments TF1's layers take that tfd's do not: refused unless left unset.
_UNSUPPORTED = ("kernel_regularizer", "bias_regularizer", "activity_regularizer",
                "kernel_constraint", "bias_constraint", "beta_regularizer", "gamma_regularizer",
                "beta_constraint", "gamma_constraint", "renorm_clipping", "virtual_batch_size",
                "adjustment")


def _refuse(layer, extra):
    for key, value in extra.items():
        if key not in _UNSUPPORTED:
            raise TypeError("%s() got an unexpected keyword argument '%s'" % (layer, key))
        if value is not None:
            raise TypeError("tfd.layers.%s: %s is not supported (docs/python.md, "
                            "'Not there yet')" % (layer, key))


def _pair(layer, what, value):
    """An int or a pair of ints as a pair."""
    pair = (value, value) if isinstance(value, (int, np.integer)) else tuple(value)
    if len(pair) != 2 or not all(isinstance(v, (int, np.integer)) and v > 0 for v in pair):
        raise ValueError("tfd.layers.%s: %s must be a positive int or two of them, got %r"
                         % (layer, what, value))
    return int(pair[0]), int(pair[1])


def _padding(layer, padding):
    if not isinstance(padding, str) or padding.lower() not in ("valid", "same"):
        raise ValueError("tfd.layers.%s: padding must be 'valid' or 'same', got %r"
                         % (layer, padding))
    return padding.upper()


def _channels_last(layer, data_format):
    if data_format != "channels_last":
        raise ValueError("tfd.layers.%s: data_format %r is not supported; tfd's kernels are "
                         "NHWC ('channels_last')" % (layer, data_format))


def _last_dim(layer, x):
    dims = x.shape.dims
    if dims is None or not dims or dims[-1] is None:
        raise ValueError("tfd.layers.%s: the last dimension of the input %s must be known, got "
                         "shape %s" % (layer, x.name, x.shape))
    return int(dims[-1])


def _bias_and_activation(y, units, dtype, use_bias, bias_initializer, trainable, activation):
    if use_bias:
        bias = variables.get_variable("bias", [units], dtype=dtype,
                                      initializer=bias_initializer or
                                      variables.zeros_initializer(),
                                      trainable=trainable)
        y = nn_ops.bias_add(y, bias)
    return activation(y) if activation is not None else y


def dense(inputs, units, activation=None, use_bias=True, kernel_initializer=None,
          bias_initializer=None, trainable=True, name=None, reuse=None, **unsupported):
    """inputs @ kernel + bias, then `activation`: kernel [in, units] over the
    last axis (an input of rank 3 or more keeps its other axes)."""
    _refuse("dense", unsupported)
    x = framework.convert_to_tensor(inputs)
    in_dim = _last_dim("dense", x)
    if len(x.shape.dims) < 2:
        raise ValueError("tfd.layers.dense: the input %s must have rank 2 or more (a batch of "
                         "rows), got shape %s" % (x.name, x.shape))
    with variables.variable_scope(name, default_name="dense", reuse=reuse):
        kernel = variables.get_variable("kernel", [in_dim, int(units)], dtype=x.dtype,
                                        initializer=kernel_initializer, trainable=trainable)
        dims = x.shape.dims
        if len(dims) == 2:
            y = math_ops.matmul(x, kernel)
        else:
            flat = math_ops.matmul(math_ops.reshape(x, [-1, in_dim]), kernel)
            if all(d is not None for d in dims[1:]):
                shape = [-1] + [int(d) for d in dims[1:-1]] + [int(units)]
            else:
                shape = math_ops.concat([raw_ops.shape(x)[:-1], [int(units)]], 0)
            y = math_ops.reshape(flat, shape)
        return _bias_and_activation(y, int(units), x.dtype, use_bias, bias_initializer,
                                    trainable, activation)


def conv2d(inputs, filters, kernel_size, strides=(1, 1), padding="valid",
           data_format="channels_last", dilation_rate=(1, 1), activation=None, use_bias=True,
           kernel_initializer=None, bias_initializer=None, trainable=True, name=None,
           reuse=None, **unsupported):
    """A 2-D convolution of NHWC images with `filters` kernels of
    kernel_size, then bias and `activation`: kernel [kh, kw, in, filters]."""
    _refuse("conv2d", unsupported)
    _channels_last("conv2d", data_format)
    x = framework.convert_to_tensor(inputs)
    kh, kw = _pair("conv2d", "kernel_size", kernel_size)
    sh, sw = _pair("conv2d", "strides", strides)
    dh, dw = _pair("conv2d", "dilation_rate", dilation_rate)
    pad = _padding("conv2d", padding)
    in_channels = _last_dim("conv2d", x)
    with variables.variable_scope(name, default_name="conv2d", reuse=reuse):
        kernel = variables.get_variable("kernel", [kh, kw, in_channels, int(filters)],
                                        dtype=x.dtype, initializer=kernel_initializer,
                                        trainable=trainable)
        y = nn_ops.conv2d(x, kernel, [1, sh, sw, 1], pad, dilations=[1, dh, dw, 1])
        return _bias_and_activation(y, int(filters), x.dtype, use_bias, bias_initializer,
                                    trainable, activation)


def _pooling(layer, pool, inputs, pool_size, strides, padding, data_format, name):
    _channels_last(layer, data_format)
    ph, pw = _pair(layer, "pool_size", pool_size)
    sh, sw = _pair(layer, "strides", strides)
    return pool(framework.convert_to_tensor(inputs), [1, ph, pw, 1], [1, sh, sw, 1],
                _padding(layer, padding), name=name)


def max_pooling2d(inputs, pool_size, strides, padding="valid", data_format="channels_last",
                  name=None):
    """The largest value of each pool_size window of NHWC images."""
    return _pooling("max_pooling2d", nn_ops.max_pool, inputs, pool_size, strides, padding,
                    data_format, name)


def average_pooling2d(inputs, pool_size, strides, padding="valid",
                      data_format="channels_last", name=None):
    """The mean of each pool_size window of NHWC images (a 'same' window at
    the border averages the values inside the image only)."""
    return _pooling("average_pooling2d", nn_ops.avg_pool, inputs, pool_size, strides, padding,
                    data_format, name)


def flatten(inputs, name=None, data_format="channels_last"):
    """[batch, everything else]: each example as one row."""
    _channels_last("flatten", data_format)
    x = framework.convert_to_tensor(inputs)
    dims = x.shape.dims
    if dims is None:
        raise ValueError("tfd.layers.flatten: the rank of the input %s must be known" % x.name)
    rest = dims[1:]
    if all(d is not None for d in rest):
        return math_ops.reshape(x, [-1, int(np.prod(rest, dtype=np.int64))], name=name)
    return math_ops.reshape(x, math_ops.stack([raw_ops.shape(x)[0], -1]), name=name)


def dropout(inputs, rate=0.5, noise_shape=None, seed=None, training=False, name=None):
    """With `training`, each element zeroed with probability `rate` and the
    rest scaled by 1 / (1 - rate) (tfd.nn.dropout); without, the inputs as
    they are. `training` may be a boolean tensor (a placeholder fed True
    while training): the choice is then made at each step (tfd.cond)."""
    x = framework.convert_to_tensor(inputs)

    def dropped():
        return nn_ops.dropout(x, rate=rate, noise_shape=noise_shape, seed=seed)

    if training is True:
        return math_ops.identity(dropped(), name=name)
    if training is False or training is None:
        return math_ops.identity(x, name=name)
    return math_ops.identity(cond(training, dropped, lambda: math_ops.identity(x)), name=name)


def _chosen(training, if_training, otherwise):
    """if_training() or otherwise(), by a Python bool or at each step by a
    boolean tensor."""
    if training is True:
        return if_training()
    if training is False or training is None:
        return otherwise()
    return cond(training, if_training, otherwise)


def batch_normalization(inputs, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                        beta_initializer=None, gamma_initializer=None,
                        moving_mean_initializer=None, moving_variance_initializer=None,
                        training=False, trainable=True, name=None, reuse=None, renorm=False,
                        renorm_momentum=0.99, fused=None, **unsupported):
    """(x - mean) / sqrt(variance + epsilon) * gamma + beta over the last
    (channel) axis. Training: the batch's mean and variance, and two update
    ops added to GraphKeys.UPDATE_OPS that move moving_mean and
    moving_variance toward them by 1 - momentum (run them with the train
    op: tfd.control_dependencies(tfd.get_collection(tfd.GraphKeys.UPDATE_OPS)));
    otherwise the moving averages. As TF1's, the moving variance of a 4-D
    input takes the batch's unbiased variance (its fused kernel's), of other
    ranks or with fused=False the biased one. `training` may be a boolean
    tensor: the updates then move the averages only on steps it is True."""
    _refuse("batch_normalization", unsupported)
    if renorm:
        raise TypeError("tfd.layers.batch_normalization: renorm is not supported "
                        "(docs/python.md, 'Not there yet')")
    x = framework.convert_to_tensor(inputs)
    rank = len(x.shape.dims)
    if axis not in (-1, rank - 1):
        raise ValueError("tfd.layers.batch_normalization: axis %r is not supported; tfd "
                         "normalizes the last (channel) axis, NHWC" % (axis,))
    if fused and rank != 4:
        raise ValueError("tfd.layers.batch_normalization: fused=True needs a 4-D input, got "
                         "rank %d" % rank)
    channels = _last_dim("batch_normalization", x)
    with variables.variable_scope(name, default_name="batch_normalization", reuse=reuse):
        stats = _BatchNormVariables(x.dtype, channels, center, scale, trainable,
                                    beta_initializer, gamma_initializer,
                                    moving_mean_initializer, moving_variance_initializer)
        mean, variance = nn_ops.moments(x, list(range(rank - 1)))
        y = _chosen(training,
                    lambda: nn_ops.batch_normalization(x, mean, variance, stats.beta, stats.gamma,
                                                       epsilon),
                    lambda: nn_ops.batch_normalization(x, stats.moving_mean,
                                                       stats.moving_variance, stats.beta,
                                                       stats.gamma, epsilon))
        if training is not False and training is not None:
            if rank == 4 and fused is not False:
                variance = _unbiased(x, variance, channels)
            stats.add_updates(mean, variance, momentum, training)
        return y


def _unbiased(x, variance, channels):
    """The batch variance times n / (n - 1), n the values per channel."""
    n = math_ops.cast(raw_ops.size(x), x.dtype) / float(channels)
    return variance * (n / math_ops.maximum(n - 1.0, 1.0))


class _BatchNormVariables:
    """gamma and beta (trainable, when scale and center), moving_mean and
    moving_variance (not trained; also in MOVING_AVERAGE_VARIABLES)."""

    def __init__(self, dtype, channels, center, scale, trainable, beta_init, gamma_init,
                 mean_init, variance_init):
        def var(name, init, default, trained):
            return variables.get_variable(name, [channels], dtype=dtype,
                                          initializer=init or default, trainable=trained)
        self.gamma = var("gamma", gamma_init, variables.ones_initializer(), trainable) \
            if scale else None
        self.beta = var("beta", beta_init, variables.zeros_initializer(), trainable) \
            if center else None
        self.moving_mean = var("moving_mean", mean_init, variables.zeros_initializer(), False)
        self.moving_variance = var("moving_variance", variance_init,
                                   variables.ones_initializer(), False)
        key = framework.GraphKeys.MOVING_AVERAGE_VARIABLES
        for v in (self.moving_mean, self.moving_variance):
            if not any(v.name == held.name for held in framework.get_collection(key)):  # reused
                framework.add_to_collection(key, v)

    def add_updates(self, mean, variance, momentum, training):
        """moving -= (moving - batch) * (1 - momentum), in UPDATE_OPS; by 0
        on steps a `training` tensor is False."""
        decay = 1.0 - float(momentum)
        if training is not True:
            decay = math_ops.cast(training, mean.dtype) * decay
        for moving, batch in ((self.moving_mean, mean), (self.moving_variance, variance)):
            update = moving.assign_sub((moving - batch) * decay)
            framework.add_to_collection(framework.GraphKeys.UPDATE_OPS, update.op)
