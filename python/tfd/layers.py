"""tf.layers, TF 1.x's layers: the classes Dense, Conv2D, MaxPooling2D,
AveragePooling2D, Flatten, Dropout and BatchNormalization (and their base,
Layer; Conv1D, Conv2DTranspose, SeparableConv2D and the 1-D pools come
from conv_layers.py), and the functions of the same layers, each of which makes one
object and calls it once: tfd.layers.dense(x, 4) is Dense(4)(x).

A layer object makes its variables at its first call with get_variable,
under a variable scope named for it (`name`, else "dense", "dense_1", ...
as TF1 numbers them), so they are named as TF1's ("dense/kernel",
"dense/bias", "conv2d/kernel"); its later calls use the same variables.
The functions' variables are shared with reuse=True, as TF1's. Kernels
default to Glorot uniform, biases to zeros. Images are NHWC
("channels_last"), the only layout tfd's kernels take.

    h = tfd.layers.conv2d(images, 32, 5, padding="same", activation=tfd.nn.relu)
    h = tfd.layers.max_pooling2d(h, 2, 2)
    logits = tfd.layers.dense(tfd.layers.flatten(h), 10)
"""
import numpy as np

from . import layers_base as base
from . import math_ops, nn_ops
from .conv_layers import (AveragePooling1D, Conv1D, Conv2DTranspose, MaxPooling1D,
                          SeparableConv2D, average_pooling1d, conv1d, conv2d_transpose,
                          max_pooling1d, separable_conv2d)
from .layers_base import Layer, _Affine
from .normalization import BatchNormalization, batch_normalization
from .op_gen import raw_ops

__all__ = ["Layer", "Dense", "Conv1D", "Conv2D", "Conv2DTranspose", "SeparableConv2D",
           "MaxPooling1D", "AveragePooling1D", "MaxPooling2D", "AveragePooling2D", "Flatten",
           "Dropout", "BatchNormalization", "dense", "conv1d", "conv2d", "conv2d_transpose",
           "separable_conv2d", "max_pooling1d", "average_pooling1d", "max_pooling2d",
           "average_pooling2d", "flatten", "dropout", "batch_normalization"]


class Dense(_Affine):
    """inputs @ kernel + bias, then `activation`: kernel [in, units] over the
    last axis (an input of rank 3 or more keeps its other axes)."""

    _default_name = "dense"

    def __init__(self, units, activation=None, use_bias=True, kernel_initializer=None,
                 bias_initializer=None, kernel_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, bias_constraint=None,
                 trainable=True, name=None, **kwargs):
        super().__init__(activation, use_bias, kernel_initializer, bias_initializer,
                         kernel_regularizer, bias_regularizer, activity_regularizer,
                         kernel_constraint, bias_constraint, trainable, name, **kwargs)
        self.units = int(units)

    def _check_input(self, x):
        super()._check_input(x)
        if len(x.shape.dims) < 2:
            raise ValueError("tfd.layers.dense: the input %s must have rank 2 or more (a batch "
                             "of rows), got shape %s" % (x.name, x.shape))

    def build(self, input_shape):
        self._build_weights([int(input_shape.dims[-1]), self.units])

    def call(self, inputs):
        dims = inputs.shape.dims
        if len(dims) == 2:
            return self._finish(math_ops.matmul(inputs, self.kernel))
        in_dim = int(dims[-1])
        flat = math_ops.matmul(math_ops.reshape(inputs, [-1, in_dim]), self.kernel)
        if all(d is not None for d in dims[1:]):
            shape = [-1] + [int(d) for d in dims[1:-1]] + [self.units]
        else:
            shape = math_ops.concat([raw_ops.shape(inputs)[:-1], [self.units]], 0)
        return self._finish(math_ops.reshape(flat, shape))


class Conv2D(_Affine):
    """A 2-D convolution of NHWC images with `filters` kernels of
    kernel_size, then bias and `activation`: kernel [kh, kw, in, filters]."""

    _default_name = "conv2d"

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid",
                 data_format="channels_last", dilation_rate=(1, 1), activation=None,
                 use_bias=True, kernel_initializer=None, bias_initializer=None,
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, trainable=True, name=None,
                 **kwargs):
        super().__init__(activation, use_bias, kernel_initializer, bias_initializer,
                         kernel_regularizer, bias_regularizer, activity_regularizer,
                         kernel_constraint, bias_constraint, trainable, name, **kwargs)
        base.channels_last("conv2d", data_format)
        self.filters, self.data_format = int(filters), data_format
        self.kernel_size = base.pair("conv2d", "kernel_size", kernel_size)
        self.strides = base.pair("conv2d", "strides", strides)
        self.dilation_rate = base.pair("conv2d", "dilation_rate", dilation_rate)
        self.padding = base.padding("conv2d", padding)

    def build(self, input_shape):
        self._build_weights(list(self.kernel_size) + [int(input_shape.dims[-1]), self.filters])

    def call(self, inputs):
        (sh, sw), (dh, dw) = self.strides, self.dilation_rate
        return self._finish(nn_ops.conv2d(inputs, self.kernel, [1, sh, sw, 1], self.padding,
                                          dilations=[1, dh, dw, 1]))


class _Pooling2D(Layer):
    """A window reduction of NHWC images; `_pool` is the tfd.nn op."""

    def __init__(self, pool_size, strides, padding="valid",
                 data_format="channels_last", name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        base.channels_last(self._default_name, data_format)
        self.pool_size = base.pair(self._default_name, "pool_size", pool_size)
        self.strides = base.pair(self._default_name, "strides", strides)
        self.padding = base.padding(self._default_name, padding)
        self.data_format = data_format

    def call(self, inputs):
        (ph, pw), (sh, sw) = self.pool_size, self.strides
        return type(self)._pool(inputs, [1, ph, pw, 1], [1, sh, sw, 1], self.padding)


class MaxPooling2D(_Pooling2D):
    """The largest value of each pool_size window of NHWC images."""

    _default_name = "max_pooling2d"
    _pool = nn_ops.max_pool


class AveragePooling2D(_Pooling2D):
    """The mean of each pool_size window of NHWC images (a 'same' window at
    the border averages the values inside the image only)."""

    _default_name = "average_pooling2d"
    _pool = nn_ops.avg_pool


class Flatten(Layer):
    """[batch, everything else]: each example as one row."""

    _default_name = "flatten"

    def __init__(self, data_format="channels_last", **kwargs):
        super().__init__(**kwargs)
        base.channels_last("flatten", data_format)
        self.data_format = data_format

    def _check_input(self, x):
        if x.shape.dims is None:
            raise ValueError("tfd.layers.flatten: the rank of the input %s must be known"
                             % x.name)

    def call(self, inputs):
        rest = inputs.shape.dims[1:]
        if all(d is not None for d in rest):
            return math_ops.reshape(inputs, [-1, int(np.prod(rest, dtype=np.int64))])
        return math_ops.reshape(inputs, math_ops.stack([raw_ops.shape(inputs)[0], -1]))


class Dropout(Layer):
    """Called with `training`, each element zeroed with probability `rate`
    and the rest scaled by 1 / (1 - rate) (tfd.nn.dropout); without, the
    inputs as they are. `training` may be a boolean tensor (a placeholder
    fed True while training): the choice is then made at each step."""

    _default_name = "dropout"

    def __init__(self, rate=0.5, noise_shape=None, seed=None, name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.rate, self.noise_shape, self.seed = rate, noise_shape, seed

    def call(self, inputs, training=False):
        return base.chosen(training,
                           lambda: nn_ops.dropout(inputs, rate=self.rate,
                                                  noise_shape=self.noise_shape, seed=self.seed),
                           lambda: math_ops.identity(inputs))


# The functions: one object each, called once ----------------------------------
def dense(inputs, units, activation=None, use_bias=True, kernel_initializer=None,
          bias_initializer=None, kernel_regularizer=None, bias_regularizer=None,
          activity_regularizer=None, kernel_constraint=None, bias_constraint=None,
          trainable=True, name=None, reuse=None):
    """Dense(units, ...)(inputs), its variables shared with `reuse`."""
    return Dense(units, activation=activation, use_bias=use_bias,
                 kernel_initializer=kernel_initializer, bias_initializer=bias_initializer,
                 kernel_regularizer=kernel_regularizer, bias_regularizer=bias_regularizer,
                 activity_regularizer=activity_regularizer, kernel_constraint=kernel_constraint,
                 bias_constraint=bias_constraint, trainable=trainable, name=name,
                 _reuse=reuse)(inputs)


def conv2d(inputs, filters, kernel_size, strides=(1, 1), padding="valid",
           data_format="channels_last", dilation_rate=(1, 1), activation=None, use_bias=True,
           kernel_initializer=None, bias_initializer=None, kernel_regularizer=None,
           bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
           bias_constraint=None, trainable=True, name=None, reuse=None):
    """Conv2D(filters, kernel_size, ...)(inputs), its variables shared with
    `reuse`."""
    return Conv2D(filters, kernel_size, strides=strides, padding=padding,
                  data_format=data_format, dilation_rate=dilation_rate, activation=activation,
                  use_bias=use_bias, kernel_initializer=kernel_initializer,
                  bias_initializer=bias_initializer, kernel_regularizer=kernel_regularizer,
                  bias_regularizer=bias_regularizer, activity_regularizer=activity_regularizer,
                  kernel_constraint=kernel_constraint, bias_constraint=bias_constraint,
                  trainable=trainable, name=name, _reuse=reuse)(inputs)


def max_pooling2d(inputs, pool_size, strides, padding="valid",
                  data_format="channels_last", name=None):
    """MaxPooling2D(pool_size, strides, ...)(inputs)."""
    return MaxPooling2D(pool_size, strides, padding=padding, data_format=data_format,
                        name=name)(inputs)


def average_pooling2d(inputs, pool_size, strides, padding="valid",
                      data_format="channels_last", name=None):
    """AveragePooling2D(pool_size, strides, ...)(inputs)."""
    return AveragePooling2D(pool_size, strides, padding=padding, data_format=data_format,
                            name=name)(inputs)


def flatten(inputs, name=None, data_format="channels_last"):
    """Flatten()(inputs)."""
    return Flatten(data_format=data_format, name=name)(inputs)


def dropout(inputs, rate=0.5, noise_shape=None, seed=None, training=False, name=None):
    """Dropout(rate, ...)(inputs, training=training)."""
    return Dropout(rate, noise_shape=noise_shape, seed=seed, name=name)(inputs,
                                                                        training=training)
