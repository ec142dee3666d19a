"""tf.layers.BatchNormalization and tf.layers.batch_normalization (exported
by tfd.layers), over the last (channel) axis, NHWC."""
from . import framework, math_ops, nn_ops, variables
from . import layers_base as base
from .op_gen import raw_ops


class BatchNormalization(base.Layer):
    """(x - mean) / sqrt(variance + epsilon) * gamma + beta over the last
    (channel) axis. Called with training=True: the batch's mean and
    variance, and two update ops (.updates, also added to
    GraphKeys.UPDATE_OPS) that move moving_mean and moving_variance toward
    them by 1 - momentum (run them with the train op:
    tfd.control_dependencies(tfd.get_collection(tfd.GraphKeys.UPDATE_OPS)));
    otherwise the moving averages. As TF1's, the moving variance of a 4-D
    input takes the batch's unbiased variance (its fused kernel's), of
    other ranks or with fused=False the biased one. `training` may be a
    boolean tensor: the updates then move the averages only on steps it is
    True."""

    _default_name = "batch_normalization"

    def __init__(self, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                 beta_initializer=None, gamma_initializer=None, moving_mean_initializer=None,
                 moving_variance_initializer=None, beta_regularizer=None, gamma_regularizer=None,
                 beta_constraint=None, gamma_constraint=None, renorm=False, renorm_clipping=None,
                 renorm_momentum=0.99, fused=None, trainable=True, virtual_batch_size=None,
                 adjustment=None, name=None, **kwargs):
        super().__init__(trainable=trainable, name=name, **kwargs)
        base.refuse("batch_normalization", beta_constraint=beta_constraint,
                    gamma_constraint=gamma_constraint, renorm=renorm or None,
                    renorm_clipping=renorm_clipping, virtual_batch_size=virtual_batch_size,
                    adjustment=adjustment)
        self.axis, self.momentum, self.epsilon = axis, float(momentum), epsilon
        self.center, self.scale, self.fused = center, scale, fused
        self.beta_initializer, self.gamma_initializer = beta_initializer, gamma_initializer
        self.moving_mean_initializer = moving_mean_initializer
        self.moving_variance_initializer = moving_variance_initializer
        self.beta_regularizer, self.gamma_regularizer = beta_regularizer, gamma_regularizer
        self.gamma = self.beta = self.moving_mean = self.moving_variance = None

    def _check_input(self, x):
        rank = len(x.shape.dims)
        if self.axis not in (-1, rank - 1):
            raise ValueError("tfd.layers.batch_normalization: axis %r is not supported; tfd "
                             "normalizes the last (channel) axis, NHWC" % (self.axis,))
        if self.fused and rank != 4:
            raise ValueError("tfd.layers.batch_normalization: fused=True needs a 4-D input, "
                             "got rank %d" % rank)
        channels = base.last_dim("batch_normalization", x)
        if self.moving_mean is not None and channels != self.moving_mean.shape.dims[0]:
            raise ValueError("tfd.layers.batch_normalization %r: built for %d channels, got %s "
                             "of shape %s" % (self.name, self.moving_mean.shape.dims[0], x.name,
                                              x.shape))

    def build(self, input_shape):
        """gamma and beta (trainable, when scale and center), moving_mean
        and moving_variance (not trained; also in MOVING_AVERAGE_VARIABLES)."""
        channels = [int(input_shape.dims[-1])]
        ones, zeros = variables.ones_initializer(), variables.zeros_initializer()
        if self.scale:
            self.gamma = self.add_weight("gamma", channels,
                                         initializer=self.gamma_initializer or ones,
                                         regularizer=self.gamma_regularizer)
        if self.center:
            self.beta = self.add_weight("beta", channels,
                                        initializer=self.beta_initializer or zeros,
                                        regularizer=self.beta_regularizer)
        self.moving_mean = self.add_weight("moving_mean", channels, trainable=False,
                                           initializer=self.moving_mean_initializer or zeros)
        self.moving_variance = self.add_weight(
            "moving_variance", channels, trainable=False,
            initializer=self.moving_variance_initializer or ones)
        key = framework.GraphKeys.MOVING_AVERAGE_VARIABLES
        for v in (self.moving_mean, self.moving_variance):
            if not any(v.name == held.name for held in framework.get_collection(key)):  # reused
                framework.add_to_collection(key, v)

    def call(self, inputs, training=False):
        def normalized(mean, variance):
            return nn_ops.batch_normalization(inputs, mean, variance, self.beta, self.gamma,
                                              self.epsilon)

        def by_moving_averages():
            return normalized(self.moving_mean, self.moving_variance)

        if training is False or training is None:
            return by_moving_averages()
        rank = len(inputs.shape.dims)
        mean, variance = nn_ops.moments(inputs, list(range(rank - 1)))
        y = base.chosen(training, lambda: normalized(mean, variance), by_moving_averages)
        if rank == 4 and self.fused is not False:
            variance = _unbiased(inputs, variance, self.moving_mean.shape.dims[0])
        self._add_moving_updates(mean, variance, training)
        return y

    def _add_moving_updates(self, mean, variance, training):
        """moving -= (moving - batch) * (1 - momentum); by 0 on steps a
        `training` tensor is False."""
        decay = 1.0 - self.momentum
        if training is not True:
            decay = math_ops.cast(training, mean.dtype) * decay
        for moving, batch in ((self.moving_mean, mean), (self.moving_variance, variance)):
            self.add_update(moving.assign_sub((moving - batch) * decay).op)


def _unbiased(x, variance, channels):
    """The batch variance times n / (n - 1), n the values per channel."""
    n = math_ops.cast(raw_ops.size(x), x.dtype) / float(channels)
    return variance * (n / math_ops.maximum(n - 1.0, 1.0))


def batch_normalization(inputs, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                        beta_initializer=None, gamma_initializer=None,
                        moving_mean_initializer=None, moving_variance_initializer=None,
                        beta_regularizer=None, gamma_regularizer=None, beta_constraint=None,
                        gamma_constraint=None, training=False, trainable=True, name=None,
                        reuse=None, renorm=False, renorm_clipping=None, renorm_momentum=0.99,
                        fused=None, virtual_batch_size=None, adjustment=None):
    """BatchNormalization(...)(inputs, training=training), its variables
    shared with `reuse`."""
    layer = BatchNormalization(
        axis=axis, momentum=momentum, epsilon=epsilon, center=center, scale=scale,
        beta_initializer=beta_initializer, gamma_initializer=gamma_initializer,
        moving_mean_initializer=moving_mean_initializer,
        moving_variance_initializer=moving_variance_initializer,
        beta_regularizer=beta_regularizer, gamma_regularizer=gamma_regularizer,
        beta_constraint=beta_constraint, gamma_constraint=gamma_constraint, renorm=renorm,
        renorm_clipping=renorm_clipping, renorm_momentum=renorm_momentum, fused=fused,
        trainable=trainable, virtual_batch_size=virtual_batch_size, adjustment=adjustment,
        name=name, _reuse=reuse)
    return layer(inputs, training=training)
