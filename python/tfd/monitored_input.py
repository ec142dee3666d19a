"""The queue runners of a MonitoredTrainingSession, kept filling their
queues across the task restarts the training loop recovers from.

TF1's MonitoredSession starts the graph's queue runners each time it makes
a session, and makes a new one when a step or a runner's thread meets a
preemption (AbortedError or UnavailableError: a task died or restarted).
tfd's loop recovers inside C++, so the runners are restarted beside it:
their threads run under a coordinator of their own, one per generation. A
preemption ends only that generation; a watcher thread then opens a new
session to the loop's task once it answers again, waits until the graph's
variables are initialized there (the loop's recovery does that: a worker
that restarted holds none), and starts a new generation. Any other error
of a runner goes to the coordinator the hooks were given, which ends the
loop and comes out of close(), as before.

A queue on a task that restarted comes back empty: what it held is lost,
as in TF1, where queues are not in checkpoints.
"""
import logging
import threading
import time

from . import coordinator, errors, framework, queue_runner, variables

_log = logging.getLogger("tfd")

# The errors TF1's MonitoredSession recovers from.
PREEMPTION_ERRORS = (errors.AbortedError, errors.UnavailableError)

# How often the watcher looks at the runners' coordinator; a restart
# begins at most this long after a runner's thread met a preemption.
_POLL_SECS = 0.05
# One try at connecting or at waiting for the variables, so that close()
# is not kept waiting for max_wait_secs by a task that is not back.
_TRY_SECS = 5.0


class QueueRunners:
    """The graph's queue runners on sessions that `connect(timeout_secs)`
    opens to the loop's task: started within start_secs (the loop has
    initialized the graph by then), and restarted after a preemption,
    waiting up to wait_secs for the task each time, at most max_restarts
    times; errors (and giving up) are reported to `coord`, whose stop ends
    them."""

    def __init__(self, graph, coord, connect, start_secs, wait_secs, max_restarts, grace_secs):
        self._graph, self._coord, self._connect = graph, coord, connect
        self._wait_secs, self._max_restarts, self._grace_secs = wait_secs, max_restarts, grace_secs
        with graph.as_default():
            self._variables = [v.op.name for v in variables.global_variables()
                               + variables.local_variables()]
        self._closing = threading.Event()
        self.restarts = 0
        # The generation running: its session and coordinator. Set here,
        # then only on the watcher's thread until close() joins it.
        self._session, self._inner = self._start(time.monotonic() + start_secs)
        self._watcher = threading.Thread(target=self._watch, daemon=True,
                                         name="MonitoredTrainingSession queue runners")
        self._watcher.start()

    def close(self):
        """Stops the runners' threads (their cancel ops wake those blocked
        on a full queue) and closes their session; an error one of them met
        first has been handed to the coordinator. Bounded by one try of a
        restart under way and the grace period of the threads."""
        self._closing.set()
        self._watcher.join()
        self._end_generation()

    def _watch(self):
        while True:
            if self._inner.should_stop() and not self._after_stop():
                return
            if self._closing.is_set():
                return
            if self._coord.should_stop():  # a hook's or the user's: the runners stop too
                self._inner.request_stop()
                return
            self._closing.wait(_POLL_SECS)

    def _after_stop(self):
        """The runners' coordinator stopped: True when a new generation
        runs, else False, the error (if any) handed to the coordinator."""
        error = self._inner.preemption or _requested_error(self._inner)
        if not isinstance(error, PREEMPTION_ERRORS):
            self._coord.request_stop(error)  # None: a clean stop (the input's end)
            return False
        if self._closing.is_set():
            return False
        if self.restarts >= self._max_restarts:
            _log.error("queue runners: gave up after %d restarts (max_recoveries): %s",
                       self.restarts, error)
            self._coord.request_stop(error)
            return False
        self.restarts += 1
        _log.info("queue runners lost their task (%s: %s); starting them again once it "
                  "answers", type(error).__name__, error)
        self._end_generation()
        try:
            self._session, self._inner = self._start(time.monotonic() + self._wait_secs)
        except Exception as e:  # noqa: BLE001 (the task did not come back: the loop ends)
            self._session, self._inner = None, _stopped()
            if not self._closing.is_set():  # a close cut the restart short: no error
                self._coord.request_stop(e)
            return False
        return True

    def _start(self, deadline):
        """A new generation, tried until `deadline` while the task is away
        (a preemption error) or its variables are not initialized yet (one
        try's deadline passing); raises the last error past it."""
        delay = 0.05
        while True:
            try:
                return self._generation(deadline)
            except PREEMPTION_ERRORS + (errors.DeadlineExceededError,):
                if time.monotonic() + delay >= deadline or self._closing.is_set():
                    raise
            self._closing.wait(delay)
            delay = min(delay * 2, 1.0)

    def _generation(self, deadline):
        sess = self._connect(_try_secs(deadline))
        try:
            if self._variables:
                sess.wait_initialized(self._variables, _try_secs(deadline))
            inner = _Generation(sess)
            queue_runner.start_queue_runners(sess, inner)
        except BaseException:
            _close_quietly(sess)
            raise
        return sess, inner

    def _end_generation(self):
        """Stops the running generation's threads and closes its session.
        What they report now comes after the stop: only logged."""
        inner, sess = self._inner, self._session
        self._session = None
        inner.request_stop()
        try:
            inner.join(stop_grace_period_secs=self._grace_secs, ignore_live_threads=True)
        except Exception as e:  # noqa: BLE001 (reported already, or a preemption)
            _log.debug("queue runners ended with %s: %s", type(e).__name__, e)
        if sess is not None:
            _close_quietly(sess)


class _Generation(coordinator.Coordinator):
    """The coordinator of one generation of runners. The first preemption
    a runner reports closes the generation's session before the stop wakes
    the runners' cancel threads: their cancel op would otherwise close the
    queue a restarted task made anew (the master registers the graph there
    again), which the loop would take for the input's end. The steps the
    close cancels report errors of their own after it: `preemption` says
    what began it."""

    def __init__(self, session):
        super().__init__()
        self._session = session
        self._preempted_lock = threading.Lock()
        self.preemption = None  # written once, under _preempted_lock

    def request_stop(self, ex=None):
        error = ex[1] if isinstance(ex, tuple) else ex
        if isinstance(error, PREEMPTION_ERRORS):
            with self._preempted_lock:
                first = self.preemption is None and not self.should_stop()
                if first:
                    self.preemption = error
            if first:
                _close_quietly(self._session)
        super().request_stop(ex)


def start(graph, coord, connect, start_secs, wait_secs, max_restarts, grace_secs):
    """QueueRunners for the graph's QUEUE_RUNNERS, started; None when it has none."""
    if not graph.get_collection(framework.GraphKeys.QUEUE_RUNNERS):
        return None
    return QueueRunners(graph, coord, connect, start_secs, wait_secs, max_restarts, grace_secs)


def _requested_error(coord):
    try:
        coord.raise_requested_exception()
    except Exception as e:  # noqa: BLE001 (looked at, not raised)
        return e
    return None


def _stopped():
    coord = _Generation(None)
    coord.request_stop()
    return coord


def _try_secs(deadline):
    return max(0.1, min(_TRY_SECS, deadline - time.monotonic()))


def _close_quietly(sess):
    """Closes a runners' session; one whose task died fails to say goodbye."""
    try:
        sess.close()
    except Exception as e:  # noqa: BLE001
        _log.debug("closing the queue runners' session: %s: %s", type(e).__name__, e)
