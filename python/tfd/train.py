"""tf.train's names: the optimizers, learning rates that decay,
global_step, replica_device_setter, ClusterSpec. An optimizer here is the C++ one (api/optimizers.h): its update
ops are the same kernels `tfctl train` runs, colocated with each variable.
"""
from . import _tfd, errors, framework, variables
from .learning_rate_decay import (cosine_decay, cosine_decay_restarts,  # noqa: F401
                                  exponential_decay, inverse_time_decay, linear_cosine_decay,
                                  natural_exp_decay, noisy_linear_cosine_decay,
                                  piecewise_constant, polynomial_decay)
from . import queue_runner  # noqa: F401 (tf.train.queue_runner)
from .coordinator import Coordinator, LooperThread  # noqa: F401
from .input_ops import (batch, batch_join, input_producer, limit_epochs,  # noqa: F401
                        match_filenames_once, range_input_producer, shuffle_batch,
                        shuffle_batch_join, slice_input_producer, string_input_producer)
from .server import Server  # noqa: F401
from .queue_runner import QueueRunner, add_queue_runner, start_queue_runners  # noqa: F401
from .monitored import (CheckpointSaverHook, CheckpointSaverListener,  # noqa: F401
                        FeedFnHook, LoggingTensorHook, MonitoredTrainingSession,
                        NanLossDuringTrainingError, NanTensorHook, Scaffold, SessionRunArgs,
                        SessionRunContext, SessionRunHook, SessionRunValues, StepCounterHook,
                        StopAtStepHook, SummarySaverHook)
from .moving_averages import ExponentialMovingAverage  # noqa: F401
from .example_proto import (BytesList, Example, Feature, FeatureList,  # noqa: F401
                            FeatureLists, Features, FloatList, Int64List, SequenceExample)


class Optimizer:
    """minimize(loss) = compute_gradients + apply_gradients, then
    global_step += 1 when one is given."""

    _kind = None

    def __init__(self, **hyper):
        self._hyper = {k: v if isinstance(v, bool) else self._number(k, v)
                       for k, v in hyper.items()}

    def _number(self, arg, value):
        """`value` as the C++ optimizers take it: a float, or for the
        learning rate also a scalar tensor (a decayed rate, a placeholder, a
        variable), as its (node, port), read by each update as the
        variable's dtype. Any other tensor hyperparameter is a TypeError."""
        if isinstance(value, framework.Tensor) or hasattr(value, "_as_tensor"):
            if arg != "learning_rate":
                raise TypeError("%s: a tensor %s is not supported; only the learning rate may "
                                "be a tensor (docs/python.md, 'Not there yet')"
                                % (type(self).__name__, arg))
            t = framework._as_graph_element(value)
            if not t.dtype.is_floating:
                raise TypeError("%s: the learning rate %s is %s, not a floating-point tensor"
                                % (type(self).__name__, t.name, t.dtype.name))
            return t._ref()
        return float(value)

    def compute_gradients(self, loss, var_list=None):
        """[(gradient, variable)] for every trainable variable (or var_list);
        the gradient is None where loss does not depend on the variable, and
        a tfd.IndexedSlices (the rows read) for a variable read only through
        gathers, as an embedding table: apply_gradients updates those rows
        only."""
        g = loss.graph
        pairs = g._builder.compute_gradients(g._context(), self._kind, self._hyper, loss._ref(),
                                             _names(var_list))
        by_name = {v._ref_t._node: v for v in variables.global_variables()
                   + variables.local_variables()}
        return [(framework._gradient_from(g, grad), by_name[var]) for grad, var in pairs]

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """The update of each variable by its gradient: a tensor, or a
        tfd.IndexedSlices, applied by the optimizer's sparse update to its
        rows only (duplicate indices add up)."""
        pairs = _grad_specs(grads_and_vars)
        g = framework.get_default_graph()
        op = g._builder.apply_gradients(g._context(), name or "", self._kind, self._hyper, pairs,
                                        _step_name(global_step))
        return _train_op(g, op)

    def minimize(self, loss, global_step=None, var_list=None, name=None):
        g = loss.graph
        op = g._builder.minimize(g._context(), name or "", self._kind, self._hyper, loss._ref(),
                                 _step_name(global_step), _names(var_list))
        return _train_op(g, op)


def _train_op(graph, name):
    """The update op, remembered as TF's TRAIN_OP collection does: what
    MonitoredTrainingSession runs as "train" when no op has that name."""
    op = graph.get_operation_by_name(name)
    graph.add_to_collection("train_op", op)
    return op


def _grad_specs(grads_and_vars):
    return [(framework._gradient_spec(grad, var), var._ref_t._node)
            for grad, var in grads_and_vars]


def _names(var_list):
    return [v._ref_t._node for v in var_list] if var_list else []


def _step_name(global_step):
    return "" if global_step is None else global_step._ref_t._node


class GradientDescentOptimizer(Optimizer):
    _kind = "GradientDescent"

    def __init__(self, learning_rate, use_locking=False, name="GradientDescent"):
        super().__init__(learning_rate=learning_rate)


class MomentumOptimizer(Optimizer):
    _kind = "Momentum"

    def __init__(self, learning_rate, momentum, use_locking=False, name="Momentum",
                 use_nesterov=False):
        super().__init__(learning_rate=learning_rate, momentum=momentum,
                         use_nesterov=bool(use_nesterov))


class AdamOptimizer(Optimizer):
    _kind = "Adam"

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 use_locking=False, name="Adam"):
        super().__init__(learning_rate=learning_rate, beta1=beta1,
                         beta2=beta2, epsilon=epsilon)


class AdagradOptimizer(Optimizer):
    """accum += grad^2; var -= lr * grad / sqrt(accum). A gradient of
    gathered rows updates those rows only."""
    _kind = "Adagrad"

    def __init__(self, learning_rate, initial_accumulator_value=0.1, use_locking=False,
                 name="Adagrad"):
        super().__init__(learning_rate=learning_rate,
                         initial_accumulator_value=initial_accumulator_value)


class RMSPropOptimizer(Optimizer):
    _kind = "RMSProp"

    def __init__(self, learning_rate, decay=0.9, momentum=0.0, epsilon=1e-10, use_locking=False,
                 centered=False, name="RMSProp"):
        if centered:
            raise ValueError("RMSPropOptimizer: centered=True is not there yet")
        super().__init__(learning_rate=learning_rate, decay=decay,
                         momentum=momentum, epsilon=epsilon)


class FtrlOptimizer(Optimizer):
    """FTRL-Proximal; a non-zero l2_shrinkage_regularization_strength runs
    the V2 kernels, as TF's."""
    _kind = "Ftrl"

    def __init__(self, learning_rate, learning_rate_power=-0.5, initial_accumulator_value=0.1,
                 l1_regularization_strength=0.0, l2_regularization_strength=0.0,
                 use_locking=False, name="Ftrl", accum_name=None, linear_name=None,
                 l2_shrinkage_regularization_strength=0.0):
        super().__init__(
            learning_rate=learning_rate, learning_rate_power=learning_rate_power,
            initial_accumulator_value=initial_accumulator_value,
            l1_regularization_strength=l1_regularization_strength,
            l2_regularization_strength=l2_regularization_strength,
            l2_shrinkage_regularization_strength=l2_shrinkage_regularization_strength)


class SyncReplicasOptimizer:
    """Synchronous data-parallel training (api/sync_replicas.h): each update
    averages the gradients of replicas_to_aggregate replicas, applied once
    by the chief, and global_step moves once per update. The other replicas
    push their gradients and wait for the round to end.

        opt = tfd.train.SyncReplicasOptimizer(tfd.train.GradientDescentOptimizer(0.1),
                                              replicas_to_aggregate=2, total_num_replicas=2)
        train_op = opt.minimize(loss, global_step=step)
        hook = opt.make_session_run_hook(is_chief=task == 0)
        with tfd.train.MonitoredTrainingSession(target, hooks=[hook]) as sess: ...

    The chief's step, its initializer and the release of parked replicas
    are nodes of the graph (docs/training.md's sync/ names) that
    MonitoredTrainingSession runs; there is no queue runner. Run the
    replicas with MonitoredTrainingSession (or `tfctl train`): a bare
    Session running train_op waits for a round no chief runs.
    """

    def __init__(self, opt, replicas_to_aggregate, total_num_replicas=None,
                 variable_averages=None, variables_to_average=None, use_locking=False,
                 name="sync_replicas"):
        if not isinstance(opt, Optimizer):
            raise TypeError("SyncReplicasOptimizer wraps a tfd.train optimizer, not %r" % (opt,))
        if variable_averages is not None:
            raise ValueError("SyncReplicasOptimizer: variable_averages is not there yet")
        self._opt = opt
        self._replicas_to_aggregate = int(replicas_to_aggregate)
        self._total_num_replicas = int(total_num_replicas or replicas_to_aggregate)

    def compute_gradients(self, loss, var_list=None):
        return self._opt.compute_gradients(loss, var_list=var_list)

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        pairs = _grad_specs(grads_and_vars)
        return self._update(framework.get_default_graph(), name, None, pairs, global_step)

    def minimize(self, loss, global_step=None, var_list=None, name=None):
        if var_list:
            return self.apply_gradients(self.compute_gradients(loss, var_list), global_step,
                                        name)
        return self._update(loss.graph, name, loss._ref(), [], global_step)

    def _update(self, g, name, loss, pairs, global_step):
        if global_step is None:
            raise ValueError("SyncReplicasOptimizer needs global_step: it counts the updates")
        op = g._builder.sync_replicas_update(
            g._context(), name or "", self._opt._kind, self._opt._hyper,
            self._replicas_to_aggregate, self._total_num_replicas, loss, pairs,
            _step_name(global_step))
        return _train_op(g, op)

    def make_session_run_hook(self, is_chief, num_tokens=-1):
        """The hook for MonitoredTrainingSession: it checks the graph has
        the sync ops, and tells the session whether it is the chief (the
        one that aggregates) when is_chief is not given there."""
        return _SyncReplicasHook(bool(is_chief))


class _SyncReplicasHook(SessionRunHook):
    """MonitoredTrainingSession reads _sync_is_chief (monitored._chief)."""

    def __init__(self, is_chief):
        self.is_chief = self._sync_is_chief = is_chief

    def begin(self):
        g = framework.get_default_graph()
        try:
            g.get_operation_by_name("sync/chief_step")
        except errors.NotFoundError:
            raise ValueError("SyncReplicasOptimizer's hook: the graph has no sync/chief_step; "
                             "call the optimizer's minimize or apply_gradients first") from None


def get_or_create_global_step(graph=None):
    """The int64 variable "global_step", made (0, not trainable) if absent."""
    g = graph or framework.get_default_graph()
    info = g._builder.global_step(g._context())
    known = getattr(g, "_variables", {})
    return known.get(info[0][0]) or variables.Variable(_info=info, _graph=g)


create_global_step = get_or_create_global_step


def get_global_step(graph=None):
    g = graph or framework.get_default_graph()
    return getattr(g, "_variables", {}).get("global_step")


class ClusterSpec:
    """Job name -> list of "host:port", as TF's."""

    def __init__(self, cluster):
        self._jobs = {k: list(v) for k, v in (
            cluster.as_dict() if isinstance(cluster, ClusterSpec) else cluster).items()}

    def as_dict(self):
        return {k: list(v) for k, v in self._jobs.items()}

    @property
    def jobs(self):
        return list(self._jobs)

    def num_tasks(self, job):
        return len(self._jobs[job])

    def job_tasks(self, job):
        return list(self._jobs[job])


class GreedyLoadBalancingStrategy:
    """Each variable on the ps task holding the fewest bytes so far."""


def replica_device_setter(ps_tasks=0, ps_device="/job:ps", worker_device="/job:worker",
                          cluster=None, ps_ops=None, ps_strategy=None):
    """For `with tfd.device(...)`: variables on the ps tasks (round robin,
    or by bytes with GreedyLoadBalancingStrategy), everything else on
    worker_device."""
    if cluster is not None:
        spec = ClusterSpec(cluster).as_dict()
        ps_tasks = len(spec.get("ps", []))
    return _tfd.replica_device_setter(int(ps_tasks), ps_device, worker_device,
                                      list(ps_ops or ["VariableV2"]),
                                      isinstance(ps_strategy, GreedyLoadBalancingStrategy))


class _TaskSetting:
    """The default of a Saver argument that each task's flags decide."""

    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return self.text


_TASKS_KEEP = _TaskSetting("<each task's --checkpoint-keep>")
_NO_HOURLY = _TaskSetting("<none kept by age>")


class Saver:
    """Checkpoints of a cluster's variables, as tfd keeps them: each task
    writes its own variables into its --checkpoint-dir (the files
    `tfctl checkpoint` lists and tfd restores from on start), through the
    master of a remote session. There is no save_path: where the files go
    is each task's choice.

        saver = tfd.train.Saver()
        step = saver.save(sess, global_step=100)
        saver.restore(sess)            # the newest step that verifies everywhere

    TF1's arguments are taken. How many checkpoints are kept is each task's
    --checkpoint-keep (TFD_CHECKPOINT_KEEP, 5 by default), so max_to_keep is
    refused rather than ignored, and so is every argument that would change
    what is saved or kept (var_list, keep_checkpoint_every_n_hours, reshape,
    saver_def, builder, pad_step_number, filename): ValueError saying what
    decides it in tfd. sharded (a task's checkpoint is always its own
    file), name, restore_sequentially, defer_build, allow_empty,
    write_version and save_relative_paths change nothing here.
    """

    def __init__(self, var_list=None, reshape=False, sharded=False, max_to_keep=_TASKS_KEEP,
                 keep_checkpoint_every_n_hours=_NO_HOURLY, name=None,
                 restore_sequentially=False, saver_def=None, builder=None, defer_build=False,
                 allow_empty=False, write_version=2, pad_step_number=False,
                 save_relative_paths=False, filename=None):
        refused = [
            (var_list is not None, "var_list is not taken: every variable of every task is "
                                   "saved"),
            (max_to_keep is not _TASKS_KEEP,
             "max_to_keep=%r cannot be honoured here: how many checkpoints a task keeps is its "
             "--checkpoint-keep flag (TFD_CHECKPOINT_KEEP, 5 by default); drop max_to_keep and "
             "start each tfd daemon with --checkpoint-keep N" % (max_to_keep,)),
            (keep_checkpoint_every_n_hours not in (_NO_HOURLY, 10000.0),
             "keep_checkpoint_every_n_hours cannot be honoured: a task keeps its newest "
             "--checkpoint-keep checkpoints, none by age"),
            (reshape, "reshape=True is not taken: a checkpoint restores variables of its shapes"),
            (saver_def is not None or builder is not None,
             "saver_def and builder are not taken: the tasks write their own checkpoints"),
            (pad_step_number, "pad_step_number is not taken: a task's checkpoint is "
                              "<--checkpoint-dir>/<job>-<task>/ckpt-N.tfdckpt"),
            (filename is not None, "filename is not taken: checkpoints go to each task's "
                                   "--checkpoint-dir"),
        ]
        for is_refused, why in refused:
            if is_refused:
                raise ValueError("tfd.train.Saver: " + why)

    @staticmethod
    def _remote(sess):
        runner = getattr(sess, "_runner", None)
        if not hasattr(runner, "save_checkpoint"):
            raise ValueError("tfd.train.Saver needs a session on a cluster (a target): an "
                             "in-process session has no checkpoint directory")
        return runner

    def save(self, sess, save_path=None, global_step=None):
        """Saves at `global_step` (an int or the global_step variable; None:
        global_step's value, 0 without one) and returns the step saved."""
        if save_path is not None:
            raise ValueError("tfd's checkpoints go to each task's --checkpoint-dir; save_path "
                             "is not taken")
        if global_step is not None and not isinstance(global_step, int):
            global_step = int(sess.run(global_step))
        tasks = self._remote(sess).save_checkpoint(-1 if global_step is None else global_step)
        return _step_of(tasks)

    def restore(self, sess, save_path=None):
        """Restores step `save_path` (an int), or the newest step that
        verifies on every task (None); returns the step restored."""
        step = -1 if save_path is None else int(save_path)
        return _step_of(self._remote(sess).restore_checkpoint(step))


def _step_of(tasks):
    steps = {step for _, directory, files in tasks if directory for step, _ in files}
    return max(steps) if steps else None
