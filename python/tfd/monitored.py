"""tf.train.MonitoredTrainingSession and its hooks, over the C++ training
loop that `tfctl train` runs (daemon/client/training): the same session
start (the chief initializes, the others wait), the same stop at a step,
checkpoints, TensorBoard summaries and recovery from a lost or restarted
task. Python hooks (SessionRunHook: begin, after_create_session,
before_run, after_run, end) and the fetches of each run() join the loop's
steps; StopAtStepHook, CheckpointSaverHook and SummarySaverHook configure
its C++ hooks.

    hooks = [tfd.train.StopAtStepHook(last_step=1000)]
    with tfd.train.MonitoredTrainingSession("localhost:2222", hooks=hooks) as sess:
        while not sess.should_stop():
            sess.run(train_op)

The graph speaks docs/training.md's names: MonitoredTrainingSession adds
"train" (the optimizers' updates), "train/global_step" and "init" when the
graph lacks them. Every step runs "train": run(fetches) adds fetches to it.
"""
import collections
import contextlib
import logging
import time

import numpy as np

from . import _tfd, config as config_lib, coordinator, dtypes, errors, framework, monitored_input
from . import session as session_lib, variables

_log = logging.getLogger("tfd")


class SessionRunArgs(collections.namedtuple("SessionRunArgs", ["fetches", "feed_dict", "options"])):
    """What a hook's before_run adds to the step: fetches in any structure
    run() takes, and a feed_dict as run() takes one (a tensor fed by two
    hooks, or by a hook and the user, is TF1's RuntimeError). options, a
    tfd.RunOptions, may ask for a trace, which does not come (after_run's
    run_metadata stays empty); a timeout_in_ms of its own is a ValueError,
    the loop bounding every step alike (step_timeout)."""

    def __new__(cls, fetches, feed_dict=None, options=None):
        return super().__new__(cls, fetches, feed_dict, options)


SessionRunValues = collections.namedtuple("SessionRunValues",
                                          ["results", "options", "run_metadata"])


class SessionRunContext:
    """A step as a hook sees it: the run() arguments, and request_stop()."""

    def __init__(self, original_args, session):
        self.original_args = original_args
        self.session = session
        self._stop_requested = False

    def request_stop(self):
        self._stop_requested = True

    @property
    def stop_requested(self):
        return self._stop_requested


class SessionRunHook:
    """TF's hook interface; each method does nothing unless overridden."""

    def begin(self):
        pass

    def after_create_session(self, session, coord):
        pass

    def before_run(self, run_context):
        return None

    def after_run(self, run_context, run_values):
        pass

    def end(self, session):
        pass


class StopAtStepHook(SessionRunHook):
    """Stops at global step `last_step`, or after `num_steps` more: after
    the step that reaches it, so should_stop() says so at once. The loop's
    own StopAtStepHook (C++) is given last_step as well: a run that starts
    there runs no step."""

    def __init__(self, num_steps=None, last_step=None):
        if (num_steps is None) == (last_step is None):
            raise ValueError("StopAtStepHook takes one of num_steps and last_step")
        self.num_steps, self.last_step = num_steps, last_step
        self._stop_at = last_step

    def before_run(self, run_context):
        return SessionRunArgs(_GLOBAL_STEP)

    def after_run(self, run_context, run_values):
        step = int(run_values.results)
        if self._stop_at is None:  # the first step's: it ran one of num_steps
            self._stop_at = step - 1 + self.num_steps
        if step >= self._stop_at:
            run_context.request_stop()


class CheckpointSaverListener:
    """TF1's: told around the chief's checkpoints, on the loop's thread.
    begin() before the session is made; before_save(session, step) before
    each save, after_save(session, step) after each that succeeded (a true
    return stops the loop after the step, as TF1's may ask), end(session,
    step) after the final one. `session` is the MonitoredTrainingSession,
    for its graph and the like: it runs no step from a listener. An
    exception a listener raises ends the loop and comes out of run() or
    close()."""

    def begin(self):
        pass

    def before_save(self, session, global_step_value):
        pass

    def after_save(self, session, global_step_value):
        pass

    def end(self, session, global_step_value):
        pass


def _refuse(where, why="checkpoints are each task's own, in its --checkpoint-dir, kept per "
            "--checkpoint-keep", **given):
    """ValueError naming the TF1 arguments given that tfd does not take
    (rather than ignore what they would change), and why."""
    named = sorted(k for k, v in given.items() if v is not None)
    if named:
        raise ValueError("%s: %s not supported (%s)" % (where, ", ".join(named), why))


def _grouped(graph, name, op_name):
    """Whether the graph's `name` is a group of `op_name` alone."""
    if not _has(graph, name):
        return False
    node = graph.get_operation_by_name(name)
    return node.type == "NoOp" and [c.name for c in node.control_inputs] == [op_name]


class Scaffold:
    """TF1's tf.train.Scaffold, for MonitoredTrainingSession(scaffold=...)
    and SummarySaverHook: init_op becomes the graph's "init" and
    local_init_op its "local_init" (what the loop runs: the chief's
    initialization, each session's local one), summary_op what the loop's
    summaries write. init_fn, init_feed_dict, ready_op and
    ready_for_local_init_op are refused (the loop initializes and waits for
    the variables itself), as is saver (checkpoints are each task's own)."""

    def __init__(self, init_op=None, init_feed_dict=None, init_fn=None, ready_op=None,
                 ready_for_local_init_op=None, local_init_op=None, summary_op=None, saver=None,
                 copy_from_scaffold=None):
        _refuse("Scaffold", "the training loop initializes the variables and waits for them "
                "itself (docs/training.md)", init_feed_dict=init_feed_dict, init_fn=init_fn,
                ready_op=ready_op, ready_for_local_init_op=ready_for_local_init_op,
                copy_from_scaffold=copy_from_scaffold)
        _refuse("Scaffold", saver=saver)
        self.init_op, self.local_init_op, self.summary_op = init_op, local_init_op, summary_op
        self.init_feed_dict = self.init_fn = self.ready_op = self.saver = None
        self.ready_for_local_init_op = None

    def finalize(self):
        """Nothing is left to make: the loop's graph gets its names when the
        session is made."""
        return self

    def _name_ops(self, graph):
        """init_op as "init" and local_init_op as "local_init", unless the
        graph has them already (then they must be these)."""
        from . import math_ops  # noqa: PLC0415 (math_ops builds on this module's peers)
        for op, name in ((self.init_op, "init"), (self.local_init_op, "local_init")):
            if op is None:
                continue
            op = op if isinstance(op, framework.Operation) else framework._as_graph_element(op).op
            if op.name == name or _grouped(graph, name, op.name):
                continue  # the op itself, or the group a session made of it before
            if _has(graph, name):
                raise ValueError(
                    "the Scaffold's %s_op %r and the graph's op %r are two ops, and the loop "
                    "runs %r by name (docs/training.md): name yours %r, or give the other "
                    "another name (tfd.global_variables_initializer() and "
                    "variables_initializer() are named 'init' unless told)"
                    % (name, op.name, name, name, name))
            with graph.as_default(), graph.name_scope(None):
                math_ops.group(op, name=name)


class CheckpointSaverHook(SessionRunHook):
    """The chief saves a checkpoint of the cluster every save_steps global
    steps or save_secs seconds, and at the end (the C++ loop's
    CheckpointSaverHook), telling `listeners` (CheckpointSaverListener)
    around each save. Each task writes its own variables into its own
    --checkpoint-dir; `checkpoint_dir` and `checkpoint_basename` are only
    TF's arguments, kept; `saver` and `scaffold` are refused."""

    def __init__(self, checkpoint_dir=None, save_secs=None, save_steps=None, saver=None,
                 checkpoint_basename="model.ckpt", scaffold=None, listeners=None):
        if (save_secs is None) == (save_steps is None):
            raise ValueError("CheckpointSaverHook takes one of save_secs and save_steps")
        _refuse("CheckpointSaverHook", saver=saver)
        _refuse("CheckpointSaverHook", "its saver would be the one refused",
                scaffold=scaffold)
        self.save_secs, self.save_steps = save_secs, save_steps
        self.listeners = list(listeners or [])


_GLOBAL_STEP = "train/global_step:0"


class _StepAfter:
    """The global step after each step, as a hook reads it: the graph's
    train/global_step (a sync chief's renamed), else the hook's own count."""

    def __init__(self):
        self._name, self._steps = None, 0

    def begin(self):
        graph = framework.get_default_graph()
        self._name = _GLOBAL_STEP if _has(graph, _GLOBAL_STEP[:-2]) else None

    def ask(self, fetches):
        """`fetches` (a dict) with the global step added as "step"."""
        if self._name is not None:
            fetches["step"] = self._name
        return fetches

    def read(self, results):
        self._steps += 1
        return int(results["step"]) if "step" in results else self._steps


class SummarySaverHook(SessionRunHook):
    """Without summary_op: every summaries/TAG scalar of the graph
    (tfd.summary.scalar), every histogram_summaries/TAG histogram
    (tfd.summary.histogram) and global_step/sec, written to a TensorBoard
    event file in `output_dir` every save_steps steps and after the last
    (the C++ SummaryHook, as `tfctl train --logdir` writes them).

    With summary_op (a summary tensor, such as tfd.summary.merge_all(), or
    a list of them), TF1's way: the op is fetched with the first step and
    then every save_steps global steps, and what it holds is written at
    the global step after that step, to `summary_writer` (a
    tfd.summary.FileWriter) or to output_dir's writer of
    tfd.summary.FileWriterCache. A scaffold's summary_op stands for
    summary_op. save_secs is refused."""

    def __init__(self, save_steps=None, save_secs=None, output_dir=None, summary_writer=None,
                 scaffold=None, summary_op=None):
        if save_secs is not None:
            raise ValueError("SummarySaverHook takes save_steps here, not save_secs")
        if scaffold is not None and summary_op is None:
            summary_op = scaffold.summary_op
        if summary_op is None and (output_dir is None or summary_writer is not None):
            raise ValueError("SummarySaverHook without summary_op writes the graph's summaries "
                             "to an event file of its own: it needs output_dir, not "
                             "summary_writer")
        if summary_op is not None and output_dir is None and summary_writer is None:
            raise ValueError("SummarySaverHook needs output_dir or summary_writer")
        self.save_steps = save_steps or 100
        self.output_dir = None if output_dir is None else str(output_dir)
        self._summary_op, self._writer = summary_op, summary_writer
        self._step, self._written, self._next, self._due = _StepAfter(), None, None, False

    def begin(self):
        if self._summary_op is None:
            return
        self._step.begin()
        if self._writer is None:
            self._writer = _cached_writer(self.output_dir)

    def before_run(self, run_context):
        if self._summary_op is None:
            return None
        self._due = self._written is None or self._next >= self._written + self.save_steps
        return SessionRunArgs(self._step.ask({"summary": self._summary_op} if self._due else {}))

    def after_run(self, run_context, run_values):
        if self._summary_op is None:
            return
        step = self._step.read(run_values.results)
        if self._due:
            written = run_values.results["summary"]
            for s in written if isinstance(written, (list, tuple)) else [written]:
                self._writer.add_summary(s, step)
            self._written = step
        self._next = step + 1


def _cached_writer(logdir):
    from . import summary  # noqa: PLC0415 (summary builds on what this module does)
    return summary.FileWriterCache.get(logdir)


class StepCounterHook(SessionRunHook):
    """TF1's: every `every_n_steps` global steps (or `every_n_secs`
    seconds), the global steps per second since the last time, logged at
    INFO as "global_step/sec: X" and, with `output_dir` or
    `summary_writer`, written as the summary "global_step/sec" at the
    global step. The first step only starts the clock."""

    def __init__(self, every_n_steps=100, every_n_secs=None, output_dir=None,
                 summary_writer=None):
        if (every_n_steps is None) == (every_n_secs is None):
            raise ValueError("StepCounterHook takes one of every_n_steps and every_n_secs")
        self._every_steps, self._every_secs = every_n_steps, every_n_secs
        self._output_dir, self._writer = output_dir, summary_writer
        self._step, self._last = _StepAfter(), None  # (global step, time) last counted

    def begin(self):
        self._step.begin()
        if self._writer is None and self._output_dir is not None:
            self._writer = _cached_writer(self._output_dir)

    def before_run(self, run_context):
        return SessionRunArgs(self._step.ask({}))

    def after_run(self, run_context, run_values):
        step, now = self._step.read(run_values.results), time.time()
        if self._last is None:
            self._last = (step, now)
            return
        steps, secs = step - self._last[0], now - self._last[1]
        due = steps >= self._every_steps if self._every_steps else secs >= self._every_secs
        if not due or secs <= 0:
            return
        rate = steps / secs
        _log.info("global_step/sec: %g", rate)
        if self._writer is not None:
            from . import summary_proto  # noqa: PLC0415 (as _cached_writer)
            self._writer.add_summary(summary_proto.Summary(value=[summary_proto.Summary.Value(
                tag="global_step/sec", simple_value=rate)]), step)
        self._last = (step, now)


class FeedFnHook(SessionRunHook):
    """TF1's: feeds each step what `feed_fn()` returns (a feed_dict)."""

    def __init__(self, feed_fn):
        self.feed_fn = feed_fn

    def before_run(self, run_context):
        return SessionRunArgs(fetches=None, feed_dict=self.feed_fn())


class LoggingTensorHook(SessionRunHook):
    """Logs the values of `tensors` (a list of tensors or names, or a dict
    of tag: tensor) every `every_n_iter` steps or `every_n_secs` seconds, at
    INFO on the "tfd" logger, as "tag = value, ...", or as formatter(dict)."""

    def __init__(self, tensors, every_n_iter=None, every_n_secs=None, at_end=False,
                 formatter=None):
        if not at_end and (every_n_iter is None) == (every_n_secs is None):
            raise ValueError("LoggingTensorHook takes one of every_n_iter and every_n_secs")
        if not isinstance(tensors, dict):
            tensors = {_name_of(t): t for t in tensors}
        self._tensors, self._formatter = tensors, formatter
        self._every_n_iter, self._every_n_secs, self._at_end = every_n_iter, every_n_secs, at_end
        self._iter, self._last_time, self._last_values = 0, None, None

    def _due(self):
        if self._every_n_iter is not None:
            return self._iter % self._every_n_iter == 0
        if self._every_n_secs is not None:
            return self._last_time is None or time.time() - self._last_time >= self._every_n_secs
        return False

    def before_run(self, run_context):
        self._should_log = self._due()
        if self._should_log or self._at_end:
            return SessionRunArgs(self._tensors)
        return None

    def after_run(self, run_context, run_values):
        if run_values.results is not None:
            self._last_values = run_values.results
        if self._should_log:
            self._log(run_values.results)
            self._last_time = time.time()
        self._iter += 1

    def end(self, session):
        if self._at_end and self._last_values is not None:
            self._log(self._last_values)

    def _log(self, values):
        if self._formatter is not None:
            _log.info("%s", self._formatter(values))
        else:
            _log.info("%s", ", ".join("%s = %s" % (k, values[k]) for k in self._tensors))


class NanLossDuringTrainingError(RuntimeError):
    """What NanTensorHook raises when the loss became NaN."""

    def __str__(self):
        return "NaN loss during training."


class NanTensorHook(SessionRunHook):
    """Fetches `loss_tensor` with every step and, when it is NaN, raises
    NanLossDuringTrainingError (fail_on_nan_loss) or logs and asks the loop
    to stop, as TF1's."""

    def __init__(self, loss_tensor, fail_on_nan_loss=True):
        self._loss, self._fail = loss_tensor, fail_on_nan_loss

    def before_run(self, run_context):
        return SessionRunArgs(self._loss)

    def after_run(self, run_context, run_values):
        if not np.isnan(run_values.results):
            return
        if self._fail:
            _log.error("the model diverged: the loss is NaN")
            raise NanLossDuringTrainingError()
        _log.warning("the model diverged: the loss is NaN; stopping")
        run_context.request_stop()


def _name_of(t):
    return t if isinstance(t, str) else framework._as_graph_element(t).name



class MonitoredTrainingSession:
    """TF's MonitoredTrainingSession on a tfd cluster: `master` is the
    task ("host:port", or "grpc://host:port") whose master runs this
    worker's steps. Made, it has connected, waited for the cluster and
    initialized (the chief) or waited for the initialization (the others).
    Without a master it trains where TF1's trains in process: on a
    one-task cluster ("local") served by a tfd daemon it starts (`config`
    gives the daemon its flags, as tfd.train.Server's), which keeps its
    checkpoints in checkpoint_dir and restores the latest when it starts,
    and which close() stops.

    is_chief: None (the default) lets the loop decide by TF's rule (chief:0,
    else worker:0); True or False says it. chief_only_hooks are added when
    is_chief is True. checkpoint_dir turns on the chief's checkpoints (every
    save_checkpoint_steps steps, else every save_checkpoint_secs; each task
    saves into its own --checkpoint-dir) and, unless summary_dir says
    elsewhere, TensorBoard summaries every save_summaries_steps
    (save_summaries_secs is a ValueError).

    run(fetches) runs one step ("train" with `fetches`) and returns their
    values; when the loop has ended before the step (a hook's stop, the
    input's end) it runs none, returns None, and should_stop() is True. A
    step failing because a task died or restarted is recovered from inside
    run(), as `tfctl train` does: the step runs again on a new session.

    step_timeout (seconds, 60 by default) bounds every step; a `config`
    (tfd.ConfigProto) with operation_timeout_in_ms says it instead.

    As TF1's, it starts the graph's queue runners (tfd.train.QueueRunner)
    once made, with a tfd.train.Coordinator that hooks' after_create_session
    is given: their threads run the enqueues on a tfd.Session of their own
    to the same task, each step bounded by step_timeout too. A runner
    meeting a task's restart (AbortedError, UnavailableError) is started
    again once the task answers, as TF1's recovery does (at most
    max_recoveries times); another error stops the coordinator.
    should_stop() is True once the coordinator has stopped; close() stops
    the threads, waits up to stop_grace_period_secs for them, and raises
    the first error one of them reported.
    """

    def __init__(self, master="", is_chief=None, checkpoint_dir=None, scaffold=None, hooks=None,
                 chief_only_hooks=None, save_checkpoint_secs=600, save_summaries_steps=100,
                 save_summaries_secs=None, config=None, stop_grace_period_secs=120,
                 log_step_count_steps=100, max_wait_secs=7200, save_checkpoint_steps=None,
                 summary_dir=None, token_file="", tls=None, timeout=30.0, step_timeout=None,
                 max_recoveries=10, graph=None):
        if save_summaries_secs:
            raise ValueError("MonitoredTrainingSession writes summaries every "
                             "save_summaries_steps; save_summaries_secs is not supported")
        step_timeout = _step_timeout(config, step_timeout)
        self.graph = graph or framework.get_default_graph()
        if scaffold is not None:
            if not isinstance(scaffold, Scaffold):
                raise TypeError("scaffold is a tfd.train.Scaffold, not %r" % (scaffold,))
            scaffold._name_ops(self.graph)
        _prepare_graph(self.graph)
        target = master[len("grpc://"):] if master.startswith("grpc://") else master
        self._local_server = None
        if not target:
            self._local_server = _local_server(config, checkpoint_dir)
            target = self._local_server.target[len("grpc://"):]
            is_chief = True if is_chief is None else is_chief
        # A daemon this session started goes with it, also when opening fails.
        with _stopped_on_error(self._local_server):
            is_chief = _chief(hooks, is_chief)
            self._hooks = list(hooks or []) + (list(chief_only_hooks or []) if is_chief else [])
            options = _options(self._hooks, target, token_file, tls, timeout, step_timeout,
                               max_wait_secs, is_chief, max_recoveries)
            saver_hooks = [h for h in self._hooks if isinstance(h, CheckpointSaverHook)]
            if checkpoint_dir and not saver_hooks:
                if save_checkpoint_steps:
                    options["checkpoint_steps"] = int(save_checkpoint_steps)
                elif save_checkpoint_secs:
                    options["checkpoint_secs"] = float(save_checkpoint_secs)
            self._hooks += _summary_hooks(self.graph, scaffold, summary_dir or checkpoint_dir,
                                          save_summaries_steps, options)
            self._args, self._asked, self._last = None, [], (None, None)
            self._run_metadata = None  # run()'s, or a new one: what after_run is given
            self._fed, self._hook_args = set(), {}
            self._renamed = {}
            self._closed, self.result = False, None
            self._listeners = [lst for h in saver_hooks for lst in h.listeners]
            with self.graph.as_default():  # TF's hooks begin() with the session's graph
                for h in self._hooks:
                    h.begin()
                for listener in self._listeners:
                    listener.begin()
            # Without Python hooks, no callback (and no GIL) on the loop's thread.
            self._runner = _tfd.MonitoredRunner(self.graph._builder, options,
                                                self._before_run if self._hooks else None,
                                                self._after_run if self._hooks else None,
                                                self._on_checkpoint if self._listeners else None)
            # A sync chief runs its own step, where "train/global_step" (a
            # replica's wait in the sync round) must not run: the step after the
            # chief's is sync/chief_global_step (docs/training.md).
            self._renamed = {}
            if self._runner.chief and _has(self.graph, "sync/chief_global_step"):
                self._renamed = {"train/global_step": "sync/chief_global_step"}
            self._coord = coordinator.Coordinator()
            self._stop_grace_period_secs = stop_grace_period_secs
            try:
                self._inputs = _start_queue_runners(self.graph, self._coord, options,
                                                    stop_grace_period_secs)
            except BaseException:
                self._closed = True
                self._runner.close()
                raise
            for h in self._hooks:
                h.after_create_session(self, self._coord)

    @property
    def task(self):
        return self._runner.task

    def should_stop(self):
        return self._closed or self._runner.stop_requested() or self._coord.should_stop()

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        if self._closed:
            raise RuntimeError("run() on a closed MonitoredTrainingSession")
        if self._runner.stop_requested():
            raise RuntimeError("run() called after should_stop() became True")
        immutable = isinstance(fetches, (str, framework.Tensor, framework.Operation))
        if not (immutable and self._last[0] is fetches):  # a loop's "train" is planned once
            self._last = (fetches, session_lib._Fetches(self.graph, fetches))
        plan = self._last[1]
        _check_run_options(options, run_metadata)
        self._args = SessionRunArgs(fetches, feed_dict, options)
        self._run_metadata = run_metadata or config_lib.RunMetadata()
        feeds = session_lib._feeds(self.graph, feed_dict)
        self._fed = {name for name, _ in feeds}
        values = self._runner.step(self._names(plan.names),
                                   [t for t in plan.targets if t != "train"], feeds)
        return None if values is None else plan.rebuild(values)

    def run_step_fn(self, step_fn):
        return step_fn(self)

    def close(self):
        """Ends the loop and drops the connection. On another thread than the
        one that made it: FailedPreconditionError, and it stays open for that
        thread to close."""
        if self._closed:
            return
        self._runner.check_thread()
        self._closed = True
        try:
            self.result = self._runner.close()  # None when a failed step closed it
        finally:
            try:
                self._stop_queue_runners()
            finally:
                try:
                    for h in self._hooks:
                        h.end(None)
                finally:
                    if self._local_server is not None:
                        self._local_server.stop()

    def _stop_queue_runners(self):
        """Stops the queue runners' threads (their cancel ops wake those
        blocked on a full queue) and the hooks' threads, and raises the
        first error one reported; threads still running after the grace
        period are logged, as TF1's."""
        try:
            if self._inputs is not None:
                self._inputs.close()
        finally:
            self._coord.request_stop()
            self._coord.join(stop_grace_period_secs=self._stop_grace_period_secs,
                             ignore_live_threads=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if exc[0] is None:
            self.close()
        else:
            try:
                self.close()
            except Exception:  # the first error is the one to see
                pass
        return False

    # The loop's callbacks (python/src/monitored.h), on its thread with the GIL.
    def _before_run(self):
        self._context = SessionRunContext(self._args, self)
        self._asked = []
        self._hook_args = {}
        for h in self._hooks:
            args = h.before_run(self._context)
            if args is not None:
                _check_run_options(args.options, None)
            self._hook_args[id(h)] = args
            plan = None
            if args is not None and args.fetches is not None:
                plan = session_lib._Fetches(self.graph, args.fetches)
            self._asked.append((h, plan))
        names, targets = [], []
        for _, plan in self._asked:
            if plan is not None:
                names += plan.names
                targets += [t for t in plan.targets if t != "train" and t not in targets]
        return self._names(names), targets, self._context.stop_requested, self._hook_feeds()

    def _hook_feeds(self):
        """What the hooks' SessionRunArgs feed, after checking that no tensor
        is fed twice (TF1's RuntimeError)."""
        feeds, fed = [], set(self._fed)
        for h in self._hooks:
            args = self._hook_args.get(id(h))
            if args is None or not args.feed_dict:
                continue
            mine = session_lib._feeds(self.graph, args.feed_dict)
            twice = sorted(n if ":" in n else n + ":0"
                           for n in fed.intersection(name for name, _ in mine))
            if twice:
                raise RuntimeError("Same tensor is fed by a SessionRunHook and user, or by two "
                                   "hooks. Conflict(s): %s" % ", ".join(twice))
            fed.update(name for name, _ in mine)
            feeds += mine
        return feeds

    def _on_checkpoint(self, event, step):
        """The chief's saver around a save: each listener's before_save,
        after_save (True: stop) or end, in order."""
        stop = False
        for listener in self._listeners:
            stop = bool(getattr(listener, event)(self, int(step))) or stop
        return stop if event == "after_save" else False

    def _names(self, names):
        return [self._renamed.get(n, n) for n in names] if self._renamed else names

    def _after_run(self, values):
        at = 0
        for hook, plan in self._asked:
            mine = None
            if plan is not None:
                mine = plan.rebuild(values[at:at + len(plan.names)])
                at += len(plan.names)
            hook.after_run(self._context, SessionRunValues(mine, self._args.options,
                                                           self._run_metadata))
        return self._context.stop_requested


def _start_queue_runners(graph, coord, options, grace_secs):
    """The graph's queue runners, started on tfd.Sessions of their own to
    the loop's task (its steps run in C++, not on a session Python holds)
    and restarted after a task's restart (monitored_input.py); None when
    the graph has none."""
    config = config_lib.ConfigProto(operation_timeout_in_ms=int(options["step_timeout"] * 1000))
    tls = (options["cert"], options["key"], options["ca"])

    def connect(secs):
        return session_lib.Session(options["target"], graph=graph, config=config,
                                   token_file=options["token_file"], tls=tls, timeout=secs)

    return monitored_input.start(graph, coord, connect, start_secs=options["timeout"],
                                 wait_secs=options["init_timeout"],
                                 max_restarts=options["max_recoveries"], grace_secs=grace_secs)


def _has(graph, name):
    try:
        graph.get_operation_by_name(name)
        return True
    except errors.NotFoundError:
        return False


def _step_timeout(config, step_timeout):
    """Each step's timeout in seconds: step_timeout, or the config's
    operation_timeout_in_ms (giving both is ambiguous), else 60."""
    config_lib.checked(config, config_lib.ConfigProto, "config")
    ms = config.operation_timeout_in_ms if config is not None else 0
    if step_timeout is not None and ms > 0:
        raise ValueError("MonitoredTrainingSession was given both step_timeout=%r and "
                         "config.operation_timeout_in_ms=%r: give one" % (step_timeout, ms))
    if step_timeout is not None:
        return step_timeout
    return config_lib.seconds(ms) or 60.0


def _check_run_options(options, run_metadata):
    """The loop bounds every step by one timeout, set when it starts: a
    step's own timeout_in_ms cannot take effect, so it is refused."""
    config_lib.checked(options, config_lib.RunOptions, "options")
    config_lib.checked(run_metadata, config_lib.RunMetadata, "run_metadata")
    if options is not None and options.timeout_in_ms > 0:
        raise ValueError("MonitoredTrainingSession steps take no timeout_in_ms of their own "
                         "(%r): every step has step_timeout, or the config's "
                         "operation_timeout_in_ms" % options.timeout_in_ms)


def _chief(hooks, is_chief):
    """is_chief, or the one a SyncReplicasOptimizer hook was made with when
    it is None; a hook that disagrees with it is an error."""
    said = {h._sync_is_chief for h in hooks or [] if hasattr(h, "_sync_is_chief")}
    if len(said) > 1 or (said and is_chief is not None and said != {bool(is_chief)}):
        raise ValueError("MonitoredTrainingSession(is_chief=%s) and the SyncReplicasOptimizer "
                         "hooks (is_chief=%s) disagree" % (is_chief, sorted(said)))
    return said.pop() if said and is_chief is None else is_chief


def _options(hooks, target, token_file, tls, timeout, step_timeout, max_wait_secs, is_chief,
             max_recoveries):
    cert, key, ca = session_lib._tls_files(tls)
    o = dict(target=target, token_file=token_file or "", cert=cert, key=key, ca=ca,
             timeout=float(timeout), step_timeout=float(step_timeout),
             init_timeout=float(min(max_wait_secs, 7200)), is_chief=is_chief, last_step=0,
             checkpoint_steps=0, checkpoint_secs=0.0, summary_dir="", summary_steps=100,
             max_recoveries=int(max_recoveries))
    for h in hooks:
        if isinstance(h, StopAtStepHook) and h.last_step is not None:
            o["last_step"] = min(o["last_step"] or h.last_step, int(h.last_step))
        elif isinstance(h, CheckpointSaverHook):
            o["checkpoint_steps"] = int(h.save_steps or 0)
            o["checkpoint_secs"] = float(h.save_secs or 0)
        elif isinstance(h, SummarySaverHook) and h._summary_op is None:
            o["summary_dir"], o["summary_steps"] = h.output_dir, int(h.save_steps)
    return o


@contextlib.contextmanager
def _stopped_on_error(server):
    try:
        yield
    except BaseException:
        if server is not None:
            server.stop()
        raise


def _local_server(config, checkpoint_dir):
    """TF1's MonitoredTrainingSession without a master trains in process;
    tfd's trains on a one-task cluster served by a tfd daemon of this
    process's own (tfd.train.Server.create_local_server), which keeps its
    checkpoints in checkpoint_dir and restores them when it starts."""
    from . import server  # noqa: PLC0415 (server is only needed here)
    args = ["--checkpoint-dir", str(checkpoint_dir)] if checkpoint_dir else []
    return server.Server.create_local_server(config=config, extra_args=args)


def _summary_hooks(graph, scaffold, summary_dir, steps, options):
    """What writes the session's summaries to summary_dir every `steps`,
    with the Python hooks that takes. A scaffold's summary_op alone, as
    TF1's. Otherwise the loop's own summary hook (options' summary_dir,
    unless a SummarySaverHook set it) writes the summaries/TAG scalars and
    histogram_summaries/TAG histograms, and the image summaries of the
    SUMMARIES collection (tfd.summary.image) go to the same directory by a
    SummarySaverHook of their own, as TF1's merged summaries would."""
    if not (summary_dir and steps):
        summary_dir = None
    if scaffold is not None and scaffold.summary_op is not None:
        return [SummarySaverHook(steps, output_dir=summary_dir,
                                 summary_op=scaffold.summary_op)] if summary_dir else []
    if summary_dir and not options["summary_dir"]:
        options["summary_dir"], options["summary_steps"] = str(summary_dir), int(steps)
    images = [s for s in graph.get_collection(framework.GraphKeys.SUMMARIES)
              if s.op.type == "ImageSummary"]
    if not images or not options["summary_dir"]:
        return []
    return [SummarySaverHook(options["summary_steps"], output_dir=options["summary_dir"],
                             summary_op=images)]


def _prepare_graph(graph):
    """Gives the graph the names the C++ loop drives (docs/training.md) when
    it lacks them: "train" (every optimizer update made so far), the global
    step after it, "init", and "local_init" when it has local variables."""
    from . import math_ops, train
    have = {op.name for op in graph.get_operations()}
    with graph.as_default(), graph.name_scope(None):
        if "train" not in have:
            updates = graph.get_collection("train_op")
            if not updates:
                raise ValueError("the graph has no train op: make one with an optimizer's "
                                 "minimize or apply_gradients, or name your update 'train'")
            with _beside(graph, updates[0]):
                math_ops.group(*updates, name="train")
        # The global step after the step: the update that increments it
        # returns it (minimize(..., global_step=...)).
        after = [op.outputs[0] for op in [graph.get_operation_by_name("train")]
                 + graph.get_collection("train_op")
                 if op.outputs and op.outputs[0].dtype == dtypes.int64]
        if after and "train/global_step" not in have:
            with _beside(graph, after[0].op), graph.name_scope("train/"):
                math_ops.identity(after[0], name="global_step")
        if "init" not in have:
            variables.global_variables_initializer(name="init")
        if "local_init" not in have and variables.local_variables():
            # Run by every worker in each session it opens (TF1's local_init_op).
            variables.variables_initializer(variables.local_variables(), name="local_init")


@contextlib.contextmanager
def _beside(graph, op):
    """Ops made inside go on `op`'s device. A node with no device runs on
    the master's own task (daemon/runtime/placement.h); on `op`'s device
    it stays beside the update it reads."""
    with graph.device(None):
        if op.device:
            with graph.device(op.device):
                yield
        else:
            yield
