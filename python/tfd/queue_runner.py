"""tf.train.QueueRunner: threads that keep a queue filled, by running its
enqueue ops on a session over and over.

    qr = tfd.train.QueueRunner(q, [enqueue] * 4)    # four threads
    tfd.train.add_queue_runner(qr)
    coord = tfd.train.Coordinator()
    threads = tfd.train.start_queue_runners(sess, coord)

Each thread runs its enqueue op until the queue closes or the input runs
out (one of queue_closed_exception_types, OutOfRangeError by default), the
coordinator asks to stop, or another error happens, which it reports to
the coordinator (coord.join() raises it). The last of a runner's threads to
end because the queue closed runs close_op, so consumers drain the queue
and then get OutOfRangeError. A stop runs cancel_op on a thread of its own:
it closes the queue cancelling the enqueues waiting for room, which wakes
threads blocked in sess.run.
"""
import logging
import threading
import weakref

from . import errors, framework, session as session_lib

_log = logging.getLogger("tfd")


class QueueRunner:
    """The enqueue ops of one queue, each to be run by a thread of its own
    (create_threads). close_op and cancel_op default to queue.close() and
    queue.close(cancel_pending_enqueues=True)."""

    def __init__(self, queue=None, enqueue_ops=None, close_op=None, cancel_op=None,
                 queue_closed_exception_types=None):
        if queue is None or not enqueue_ops:
            raise ValueError("QueueRunner needs a queue and its enqueue_ops")
        self._queue = queue
        self._enqueue_ops = list(enqueue_ops)
        self._close_op = close_op if close_op is not None else queue.close()
        self._cancel_op = cancel_op if cancel_op is not None else queue.close(
            cancel_pending_enqueues=True)
        self._queue_closed_exception_types = _exception_types(queue_closed_exception_types)
        self._lock = threading.Lock()
        # Guarded by _lock: the threads still running per session, and what
        # threads without a coordinator raised.
        self._runs_per_session = weakref.WeakKeyDictionary()
        self._exceptions_raised = []

    @property
    def queue(self):
        return self._queue

    @property
    def enqueue_ops(self):
        return list(self._enqueue_ops)

    @property
    def close_op(self):
        return self._close_op

    @property
    def cancel_op(self):
        return self._cancel_op

    @property
    def queue_closed_exception_types(self):
        return self._queue_closed_exception_types

    @property
    def exceptions_raised(self):
        """The errors of threads run without a coordinator."""
        with self._lock:
            return list(self._exceptions_raised)

    @property
    def name(self):
        return self._queue.name

    def create_threads(self, sess, coord=None, daemon=False, start=False):
        """A thread per enqueue op running it on `sess`, and with `coord` one
        more that runs cancel_op when a stop is requested; all registered
        with coord. None while this runner's threads still run on sess."""
        with self._lock:
            if self._runs_per_session.get(sess, 0) > 0:
                return []
            self._runs_per_session[sess] = len(self._enqueue_ops)
            self._exceptions_raised = []
        threads = [threading.Thread(target=self._run, args=(sess, op, coord),
                                    name="QueueRunner(%s) enqueue %d" % (self.name, i))
                   for i, op in enumerate(self._enqueue_ops)]
        if coord is not None:
            threads.append(threading.Thread(target=self._cancel_on_stop, args=(sess, coord),
                                            name="QueueRunner(%s) cancel on stop" % self.name))
        for t in threads:
            if coord is not None:
                coord.register_thread(t)
            t.daemon = daemon
            if start:
                t.start()
        return threads

    def _run(self, sess, enqueue_op, coord):
        """A thread's loop: enqueue until the queue closes, a stop, or an error."""
        queue_closed = False
        try:
            # A callable: the step is prepared once, not planned per run. A
            # step of the input pipeline, which may wait on a full queue for
            # as long as training pauses: checkpoints do not wait for it.
            enqueue = sess.make_callable(enqueue_op, _input_pipeline=True)
            while coord is None or not coord.should_stop():
                enqueue()
        except self._queue_closed_exception_types:
            queue_closed = True
        except Exception as e:  # noqa: BLE001 (reported, as TF1's runners do)
            self._report(e, coord)
        finally:
            self._thread_ended(sess, queue_closed)

    def _report(self, e, coord):
        if coord is not None:
            coord.request_stop(e)
            return
        _log.error("Exception in QueueRunner(%s): %s", self.name, e)
        with self._lock:
            self._exceptions_raised.append(e)
        raise e

    def _thread_ended(self, sess, queue_closed):
        """The last thread to end because the queue closed closes it for the
        consumers (pending enqueues kept), as TF1's runners do."""
        with self._lock:
            self._runs_per_session[sess] -= 1
            last = self._runs_per_session[sess] == 0
        if last and queue_closed:
            _run_quietly(sess, self._close_op, "close")

    def _cancel_on_stop(self, sess, coord):
        coord.wait_for_stop()  # woken by request_stop
        _run_quietly(sess, self._cancel_op, "cancel")


def _run_quietly(sess, op, what):
    """Runs op; an error (the session closed, the queue gone) is only logged:
    nothing is left to report it to."""
    try:
        sess.run(op)
    except Exception as e:  # noqa: BLE001
        _log.debug("QueueRunner's %s op %s failed: %s", what, op.name, e)


def _exception_types(types):
    if types is None:
        return (errors.OutOfRangeError,)
    types = tuple(types)
    for t in types:
        if not (isinstance(t, type) and issubclass(t, errors.OpError)):
            raise TypeError("queue_closed_exception_types takes tfd.errors classes, not %r" % (t,))
    return types


def add_queue_runner(qr, collection=framework.GraphKeys.QUEUE_RUNNERS):
    """Adds qr to the default graph's `collection`, for start_queue_runners."""
    framework.add_to_collection(collection, qr)


def start_queue_runners(sess=None, coord=None, daemon=True, start=True,
                        collection=framework.GraphKeys.QUEUE_RUNNERS):
    """Starts the threads of every QueueRunner in sess.graph's `collection`
    on `sess` (the default session when None) and returns them."""
    if sess is None:
        sess = session_lib.get_default_session()
        if sess is None:
            raise ValueError("start_queue_runners: no default session; pass sess= or call it "
                             "inside `with sess.as_default():`")
    if not isinstance(sess, session_lib.Session):
        raise TypeError("start_queue_runners runs its threads on a tfd.Session, not %s (a "
                        "MonitoredTrainingSession runs one step at a time on its own thread: "
                        "open a tfd.Session for the runners)" % type(sess).__name__)
    runners = sess.graph.get_collection(collection)
    if not runners:
        _log.warning("start_queue_runners: the graph's %s collection has no queue runners",
                     collection)
    threads = []
    for qr in runners:
        threads.extend(qr.create_threads(sess, coord=coord, daemon=daemon, start=start))
    return threads
