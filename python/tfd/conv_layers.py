"""TF 1.x's other convolution layers (tf.layers.Conv1D, Conv2DTranspose,
SeparableConv2D) and 1-D pooling layers (MaxPooling1D, AveragePooling1D),
and their functions, over tfd.nn's conv1d, conv2d_transpose,
separable_conv2d and the 2-D pools of one row. Their variables are TF1's
("conv1d/kernel"; "separable_conv2d/depthwise_kernel" and
"pointwise_kernel"); channels last only, as every tfd kernel.

    h = tfd.layers.conv1d(sequences, 64, 3, padding="same")              # [batch, width, 64]
    up = tfd.layers.conv2d_transpose(h2, 32, 3, strides=2, padding="same")  # twice as large
"""
from . import math_ops, nn_ops, variables
from . import layers_base as base
from .layers_base import _Affine
from .op_gen import raw_ops


class Conv1D(_Affine):
    """A convolution along the width of [batch, width, channels] inputs
    with `filters` kernels of kernel_size, then bias and `activation`:
    kernel [kernel_size, in, filters]."""

    _default_name = "conv1d"

    def __init__(self, filters, kernel_size, strides=1, padding="valid",
                 data_format="channels_last", dilation_rate=1, activation=None, use_bias=True,
                 kernel_initializer=None, bias_initializer=None, kernel_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, trainable=True, name=None, **kwargs):
        super().__init__(activation, use_bias, kernel_initializer, bias_initializer,
                         kernel_regularizer, bias_regularizer, activity_regularizer,
                         kernel_constraint, bias_constraint, trainable, name, **kwargs)
        base.channels_last("conv1d", data_format)
        self.filters, self.data_format = int(filters), data_format
        self.kernel_size = _one("conv1d", "kernel_size", kernel_size)
        self.strides = _one("conv1d", "strides", strides)
        self.dilation_rate = _one("conv1d", "dilation_rate", dilation_rate)
        self.padding = base.padding("conv1d", padding)

    def build(self, input_shape):
        self._build_weights([self.kernel_size, int(input_shape.dims[-1]), self.filters])

    def call(self, inputs):
        return self._finish(nn_ops.conv1d(inputs, self.kernel, self.strides, self.padding,
                                          dilations=self.dilation_rate))


class Conv2DTranspose(_Affine):
    """The transpose of Conv2D (the gradient of a convolution with respect
    to its input, "deconvolution"), then bias and `activation`: NHWC
    outputs with `filters` channels, strides times as large (with "valid"
    padding, kernel_size - strides more where that is positive); kernel
    [kh, kw, filters, in]."""

    _default_name = "conv2d_transpose"

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid",
                 data_format="channels_last", activation=None, use_bias=True,
                 kernel_initializer=None, bias_initializer=None, kernel_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, trainable=True, name=None, **kwargs):
        super().__init__(activation, use_bias, kernel_initializer, bias_initializer,
                         kernel_regularizer, bias_regularizer, activity_regularizer,
                         kernel_constraint, bias_constraint, trainable, name, **kwargs)
        base.channels_last("conv2d_transpose", data_format)
        self.filters, self.data_format = int(filters), data_format
        self.kernel_size = base.pair("conv2d_transpose", "kernel_size", kernel_size)
        self.strides = base.pair("conv2d_transpose", "strides", strides)
        self.padding = base.padding("conv2d_transpose", padding)

    def _check_input(self, x):
        if x.shape.ndims != 4:
            raise ValueError("tfd.layers.conv2d_transpose: the input %s must be NHWC (rank 4), "
                             "got shape %s" % (x.name, x.shape))
        in_dim = base.last_dim(self._default_name, x)
        if self.kernel is not None and in_dim != self.kernel.shape.dims[-1]:
            raise ValueError("tfd.layers.conv2d_transpose %r: built for %d input channels, got "
                             "%s of shape %s" % (self.name, self.kernel.shape.dims[-1], x.name,
                                                 x.shape))

    def build(self, input_shape):
        shape = list(self.kernel_size) + [self.filters, int(input_shape.dims[-1])]
        self.kernel = self.add_weight("kernel", shape, initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer)
        if self.use_bias:  # over the output channels, the kernel's second last axis
            self.bias = self.add_weight("bias", [self.filters],
                                        initializer=self.bias_initializer or
                                        variables.zeros_initializer(),
                                        regularizer=self.bias_regularizer)

    def call(self, inputs):
        dims, shape = inputs.shape.dims, raw_ops.shape(inputs)
        sizes = [_transposed_length(dims[i] if dims[i] is not None else shape[i], k, s,
                                    self.padding)
                 for i, k, s in ((1, self.kernel_size[0], self.strides[0]),
                                 (2, self.kernel_size[1], self.strides[1]))]
        output_shape = math_ops.stack([shape[0]] + sizes + [self.filters])
        out = nn_ops.conv2d_transpose(inputs, self.kernel, output_shape,
                                      [1, self.strides[0], self.strides[1], 1], self.padding)
        out.set_shape([dims[0]] + [d if isinstance(d, int) else None for d in sizes]
                      + [self.filters])
        return self._finish(out)


class SeparableConv2D(_Affine):
    """A depthwise convolution (each input channel with depth_multiplier
    kernels of its own) then a 1x1 convolution to `filters` channels, then
    bias and `activation`: depthwise_kernel [kh, kw, in, depth_multiplier],
    pointwise_kernel [1, 1, in * depth_multiplier, filters]."""

    _default_name = "separable_conv2d"

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid",
                 data_format="channels_last", dilation_rate=(1, 1), depth_multiplier=1,
                 activation=None, use_bias=True, depthwise_initializer=None,
                 pointwise_initializer=None, bias_initializer=None, depthwise_regularizer=None,
                 pointwise_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 depthwise_constraint=None, pointwise_constraint=None, bias_constraint=None,
                 trainable=True, name=None, **kwargs):
        super().__init__(activation, use_bias, None, bias_initializer, None, bias_regularizer,
                         activity_regularizer, None, bias_constraint, trainable, name, **kwargs)
        base.refuse("separable_conv2d", depthwise_constraint=depthwise_constraint,
                    pointwise_constraint=pointwise_constraint)
        base.channels_last("separable_conv2d", data_format)
        self.filters, self.data_format = int(filters), data_format
        self.kernel_size = base.pair("separable_conv2d", "kernel_size", kernel_size)
        self.strides = base.pair("separable_conv2d", "strides", strides)
        self.dilation_rate = base.pair("separable_conv2d", "dilation_rate", dilation_rate)
        self.padding = base.padding("separable_conv2d", padding)
        self.depth_multiplier = _one("separable_conv2d", "depth_multiplier", depth_multiplier)
        self.depthwise_initializer, self.pointwise_initializer = (depthwise_initializer,
                                                                   pointwise_initializer)
        self.depthwise_regularizer, self.pointwise_regularizer = (depthwise_regularizer,
                                                                   pointwise_regularizer)
        self.depthwise_kernel = self.pointwise_kernel = None

    def _check_input(self, x):
        in_dim = base.last_dim(self._default_name, x)
        if self.depthwise_kernel is not None and in_dim != self.depthwise_kernel.shape.dims[2]:
            raise ValueError("tfd.layers.separable_conv2d %r: built for %d input channels, got "
                             "%s of shape %s" % (self.name, self.depthwise_kernel.shape.dims[2],
                                                 x.name, x.shape))

    def build(self, input_shape):
        channels = int(input_shape.dims[-1])
        self.depthwise_kernel = self.add_weight(
            "depthwise_kernel", list(self.kernel_size) + [channels, self.depth_multiplier],
            initializer=self.depthwise_initializer, regularizer=self.depthwise_regularizer)
        self.pointwise_kernel = self.add_weight(
            "pointwise_kernel", [1, 1, channels * self.depth_multiplier, self.filters],
            initializer=self.pointwise_initializer, regularizer=self.pointwise_regularizer)
        if self.use_bias:
            self.bias = self.add_weight("bias", [self.filters],
                                        initializer=self.bias_initializer or
                                        variables.zeros_initializer(),
                                        regularizer=self.bias_regularizer)

    def call(self, inputs):
        (sh, sw), rate = self.strides, list(self.dilation_rate)
        return self._finish(nn_ops.separable_conv2d(inputs, self.depthwise_kernel,
                                                    self.pointwise_kernel, [1, sh, sw, 1],
                                                    self.padding, rate=rate))


class _Pooling1D(base.Layer):
    """A window reduction along the width of [batch, width, channels]
    inputs, as a 2-D pool of one row; `_pool` is the tfd.nn op."""

    def __init__(self, pool_size, strides, padding="valid", data_format="channels_last",
                 name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        base.channels_last(self._default_name, data_format)
        self.pool_size = _one(self._default_name, "pool_size", pool_size)
        self.strides = _one(self._default_name, "strides", strides)
        self.padding = base.padding(self._default_name, padding)
        self.data_format = data_format

    def _check_input(self, x):
        if x.shape.ndims != 3:
            raise ValueError("tfd.layers.%s: the input %s must be [batch, width, channels], "
                             "got shape %s" % (self._default_name, x.name, x.shape))

    def call(self, inputs):
        rows = math_ops.expand_dims(inputs, 1)
        pooled = type(self)._pool(rows, [1, 1, self.pool_size, 1], [1, 1, self.strides, 1],
                                  self.padding)
        return math_ops.squeeze(pooled, [1])


class MaxPooling1D(_Pooling1D):
    """The largest value of each pool_size window along the width."""

    _default_name = "max_pooling1d"
    _pool = nn_ops.max_pool


class AveragePooling1D(_Pooling1D):
    """The mean of each pool_size window along the width (a 'same' window
    at the border averages the values inside only)."""

    _default_name = "average_pooling1d"
    _pool = nn_ops.avg_pool


def _one(layer, what, value):
    """A positive int, or a sequence of one."""
    if isinstance(value, (list, tuple)) and len(value) == 1:
        value = value[0]
    if not isinstance(value, int) or value <= 0:
        raise ValueError("tfd.layers.%s: %s must be a positive int, got %r" % (layer, what, value))
    return value


def _transposed_length(length, kernel, stride, padding):
    """TF1's deconv_output_length: length * stride, plus kernel - stride
    (when positive) with "VALID" padding; an int, or a scalar tensor."""
    out = length * stride
    return out + max(kernel - stride, 0) if padding == "VALID" else out


# The functions: one object each, called once ----------------------------------
def conv1d(inputs, filters, kernel_size, strides=1, padding="valid", data_format="channels_last",
           dilation_rate=1, activation=None, use_bias=True, kernel_initializer=None,
           bias_initializer=None, kernel_regularizer=None, bias_regularizer=None,
           activity_regularizer=None, kernel_constraint=None, bias_constraint=None,
           trainable=True, name=None, reuse=None):
    """Conv1D(filters, kernel_size, ...)(inputs), its variables shared with
    `reuse`."""
    return _call_once(Conv1D, locals())


def conv2d_transpose(inputs, filters, kernel_size, strides=(1, 1), padding="valid",
                     data_format="channels_last", activation=None, use_bias=True,
                     kernel_initializer=None, bias_initializer=None, kernel_regularizer=None,
                     bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                     bias_constraint=None, trainable=True, name=None, reuse=None):
    """Conv2DTranspose(filters, kernel_size, ...)(inputs), its variables
    shared with `reuse`."""
    return _call_once(Conv2DTranspose, locals())


def separable_conv2d(inputs, filters, kernel_size, strides=(1, 1), padding="valid",
                     data_format="channels_last", dilation_rate=(1, 1), depth_multiplier=1,
                     activation=None, use_bias=True, depthwise_initializer=None,
                     pointwise_initializer=None, bias_initializer=None,
                     depthwise_regularizer=None, pointwise_regularizer=None,
                     bias_regularizer=None, activity_regularizer=None,
                     depthwise_constraint=None, pointwise_constraint=None,
                     bias_constraint=None, trainable=True, name=None, reuse=None):
    """SeparableConv2D(filters, kernel_size, ...)(inputs), its variables
    shared with `reuse`."""
    return _call_once(SeparableConv2D, locals())


def _call_once(cls, args):
    """cls made with a layer function's arguments (`reuse` its _reuse) and
    called once on its `inputs`."""
    args = dict(args)
    inputs = args.pop("inputs")
    args["_reuse"] = args.pop("reuse")
    return cls(**args)(inputs)


def max_pooling1d(inputs, pool_size, strides, padding="valid", data_format="channels_last",
                  name=None):
    """MaxPooling1D(pool_size, strides, ...)(inputs)."""
    return MaxPooling1D(pool_size, strides, padding=padding, data_format=data_format,
                        name=name)(inputs)


def average_pooling1d(inputs, pool_size, strides, padding="valid", data_format="channels_last",
                      name=None):
    """AveragePooling1D(pool_size, strides, ...)(inputs)."""
    return AveragePooling1D(pool_size, strides, padding=padding, data_format=data_format,
                            name=name)(inputs)
