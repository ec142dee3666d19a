"""tf.contrib.layers' most used parts beyond its regularizers:
fully_connected, and the initializers xavier_initializer and
variance_scaling_initializer, as TF 1.15's. fully_connected's variables are
"fully_connected/weights" and "fully_connected/biases" (numbered as TF1's,
"fully_connected_1/..."), also in the "model_variables" collection.

    h = tfd.contrib.layers.fully_connected(x, 256)      # relu by default
    logits = tfd.contrib.layers.fully_connected(h, 10, activation_fn=None)
"""
import math

from . import framework, regularizers
from .layers import Dense
from .nn_ops import nn
from .variables import Initializer, _fans, zeros_initializer

MODEL_VARIABLES = "model_variables"  # TF1's GraphKeys.MODEL_VARIABLES


class _ContribVarianceScaling(Initializer):
    """tf.contrib.layers' variance_scaling_initializer, which differs from
    tf's: a uniform in +-sqrt(3 factor / n), else a normal truncated at two
    standard deviations of stddev sqrt(1.3 factor / n)."""

    def __init__(self, factor, mode, uniform, seed):
        if mode not in ("FAN_IN", "FAN_OUT", "FAN_AVG"):
            raise TypeError("Unknown mode %s [FAN_IN, FAN_OUT, FAN_AVG]" % (mode,))
        super().__init__("uniform" if uniform else "truncated_normal", seed=seed)
        self.factor, self.mode, self.uniform = float(factor), mode.lower(), bool(uniform)

    def spec(self, shape, dtype, name=""):
        n = max(1.0, _fans(shape)[self.mode])
        if self.uniform:
            limit = math.sqrt(3.0 * self.factor / n)
            return ("uniform", -limit, limit, self.seed)
        return ("truncated_normal", math.sqrt(1.3 * self.factor / n), 0.0, self.seed)


def variance_scaling_initializer(factor=2.0, mode="FAN_IN", uniform=False, seed=None, dtype=None):
    return _ContribVarianceScaling(factor, mode, uniform, seed)


def xavier_initializer(uniform=True, seed=None, dtype=None):
    """Glorot's: variance_scaling_initializer(1.0, "FAN_AVG", uniform)."""
    return _ContribVarianceScaling(1.0, "FAN_AVG", uniform, seed)


class _FullyConnected(Dense):
    _default_name = "fully_connected"
    _kernel_name, _bias_name = "weights", "biases"


def fully_connected(inputs, num_outputs, activation_fn=nn.relu, normalizer_fn=None,
                    normalizer_params=None, weights_initializer=None, weights_regularizer=None,
                    biases_initializer=zeros_initializer(), biases_regularizer=None, reuse=None,
                    variables_collections=None, outputs_collections=None, trainable=True,
                    scope=None):
    """inputs @ weights + biases (over the last axis), then activation_fn;
    with a normalizer_fn (tfd.layers.batch_normalization, say) no biases,
    normalizer_fn(outputs, **normalizer_params) before the activation.
    weights are Xavier-initialized unless said. variables_collections and
    outputs_collections: collections the variables and the result go to."""
    layer = _FullyConnected(int(num_outputs), use_bias=normalizer_fn is None and
                            biases_initializer is not None,
                            kernel_initializer=weights_initializer or xavier_initializer(),
                            bias_initializer=biases_initializer,
                            kernel_regularizer=weights_regularizer,
                            bias_regularizer=biases_regularizer, trainable=trainable, name=scope,
                            _reuse=reuse)
    outputs = layer(inputs)
    if normalizer_fn is not None:
        outputs = normalizer_fn(outputs, **(normalizer_params or {}))
    if activation_fn is not None:
        outputs = activation_fn(outputs)
    for v in layer.variables:
        for key in [MODEL_VARIABLES] + list(variables_collections or []):
            if v not in framework.get_collection(key):
                framework.add_to_collection(key, v)
    for key in outputs_collections or []:
        framework.add_to_collection(key, outputs)
    return outputs


# tf.contrib.layers' names, beside its regularizers (regularizers.py).
regularizers.contrib.layers.fully_connected = fully_connected
regularizers.contrib.layers.xavier_initializer = xavier_initializer
regularizers.contrib.layers.xavier_initializer_conv2d = xavier_initializer
regularizers.contrib.layers.variance_scaling_initializer = variance_scaling_initializer
