"""tf.train.Coordinator: lets a group of threads stop together and hands the
first error one of them hit to the thread that joins them.

    coord = tfd.train.Coordinator()
    threads = tfd.train.start_queue_runners(sess, coord)
    try:
        while not coord.should_stop():
            sess.run(train_op)
    finally:
        coord.request_stop()
        coord.join(threads)          # re-raises a runner's error

Any thread may call any method. A thread the coordinator waits for must
look at should_stop() (or wait_for_stop) often, or be woken some other way
(queue runners: closing their queue, which the stop does); join() waits for
it no longer than its grace period, then names it in a RuntimeError.
coord.loop(secs, fn) (a LooperThread) calls fn every secs seconds until
the stop.
"""
import contextlib
import logging
import sys
import threading
import time

from . import errors

_log = logging.getLogger("tfd")

# How often join() looks whether its threads have all ended, while no stop
# has been requested (a stop wakes it at once).
_POLL_SECS = 0.05


class Coordinator:
    """TF1's Coordinator. clean_stop_exception_types: the errors that stop
    the threads without being an error (the end of the input); by default
    tfd.errors.OutOfRangeError."""

    def __init__(self, clean_stop_exception_types=None):
        if clean_stop_exception_types is None:
            clean_stop_exception_types = (errors.OutOfRangeError,)
        self._clean_stop_exception_types = tuple(clean_stop_exception_types)
        self._lock = threading.Lock()
        self._stop_event = threading.Event()
        # Guarded by _lock:
        self._exception = None  # the first error reported, raised by join()
        self._joined = False
        self._registered_threads = set()

    def should_stop(self):
        return self._stop_event.is_set()

    def request_stop(self, ex=None):
        """Asks every thread to stop. `ex` (an exception, or sys.exc_info()
        of one) is kept for join() to raise, unless an error came first or
        it is a clean stop. After join(), an error here is raised at once:
        no one is left to see it."""
        ex = self._error(ex)
        with self._lock:
            if self._joined and ex is not None:
                raise ex
            if self._stop_event.is_set():
                return
            if ex is not None and self._exception is None:
                _log.info("Error reported to Coordinator: %s: %s", type(ex).__name__, ex)
                self._exception = ex
            self._stop_event.set()

    def _error(self, ex):
        """The exception of `ex`, None for a clean stop."""
        if isinstance(ex, tuple):
            ex = ex[1]
        if ex is not None and not isinstance(ex, BaseException):
            raise TypeError("request_stop takes an exception or sys.exc_info(), not %r" % (ex,))
        if isinstance(ex, self._clean_stop_exception_types):
            return None
        return ex

    def clear_stop(self):
        """Forgets the stop, its error and the last join, for a new start."""
        with self._lock:
            self._joined = False
            self._exception = None
            self._stop_event.clear()

    def wait_for_stop(self, timeout=None):
        """True once a stop is requested; False when `timeout` (seconds)
        passes first."""
        return self._stop_event.wait(timeout)

    @contextlib.contextmanager
    def stop_on_exception(self):
        """A block whose exception becomes request_stop(exception) rather
        than propagating, for a thread's body:

            with coord.stop_on_exception():
                while not coord.should_stop(): ...
        """
        try:
            yield
        except Exception:  # noqa: BLE001 (handed to the coordinator, raised by join)
            self.request_stop(sys.exc_info())

    def register_thread(self, thread):
        """A thread join() waits for even when not given it."""
        with self._lock:
            self._registered_threads.add(thread)

    @property
    def joined(self):
        return self._joined

    def raise_requested_exception(self):
        """Raises the error a thread reported, if any."""
        with self._lock:
            ex = self._exception
        if ex is not None:
            raise ex

    def loop(self, timer_interval_secs, target, args=None, kwargs=None):
        """Starts and returns a LooperThread calling target(*args, **kwargs)
        every timer_interval_secs seconds (None: back to back) until the
        stop."""
        looper = LooperThread(self, timer_interval_secs, target, args, kwargs)
        looper.start()
        return looper

    def join(self, threads=None, stop_grace_period_secs=120, ignore_live_threads=False):
        """Waits for `threads` and the registered ones: until they all end or
        a stop is requested, then up to stop_grace_period_secs more for
        those still running. Raises the first error reported to
        request_stop; else, with threads still running, RuntimeError naming
        them (a log line instead with ignore_live_threads)."""
        with self._lock:
            threads = list(self._registered_threads.union(threads or ()))
        threads = [t for t in threads if t is not threading.current_thread()]
        while _alive(threads) and not self._stop_event.wait(_POLL_SECS):
            pass
        deadline = time.monotonic() + max(0.0, float(stop_grace_period_secs))
        for t in _alive(threads):
            t.join(max(0.0, deadline - time.monotonic()))
        stragglers = [t.name for t in _alive(threads)]
        with self._lock:
            self._joined = True
            self._registered_threads = set()
            ex = self._exception
        if ex is not None:
            raise ex
        if stragglers:
            if not ignore_live_threads:
                raise RuntimeError("Coordinator stopped with threads still running: %s"
                                   % " ".join(stragglers))
            _log.info("Coordinator stopped with threads still running: %s", " ".join(stragglers))


def _alive(threads):
    return [t for t in threads if t.is_alive()]


class LooperThread(threading.Thread):
    """TF1's: a daemon thread, registered with `coord`, that runs
    run_loop() (target(*args, **kwargs), or a subclass's) every
    timer_interval_secs seconds, the first time at once, or back to back
    when that is None, until the coordinator stops; start_loop() and
    stop_loop() run around the loop. An exception goes to the
    coordinator (join() raises it)."""

    def __init__(self, coord, timer_interval_secs, target=None, args=None, kwargs=None):
        if not isinstance(coord, Coordinator):
            raise ValueError("'coord' argument must be a Coordinator: %s" % (coord,))
        if target is None and (args or kwargs):
            raise ValueError("'args' and 'kwargs' argument require that you also pass 'target'")
        super().__init__(daemon=True)
        self._coord, self._interval = coord, timer_interval_secs
        self._loop_target, self._loop_args = target, (tuple(args or ()), dict(kwargs or {}))
        coord.register_thread(self)

    @staticmethod
    def loop(coord, timer_interval_secs, target, args=None, kwargs=None):
        """Starts and returns a LooperThread (Coordinator.loop)."""
        return coord.loop(timer_interval_secs, target, args, kwargs)

    def run(self):
        with self._coord.stop_on_exception():
            self.start_loop()
            if self._interval is None:
                while not self._coord.should_stop():
                    self.run_loop()
            else:
                due = time.monotonic()
                while not self._coord.wait_for_stop(max(0.0, due - time.monotonic())):
                    due += self._interval
                    self.run_loop()
            self.stop_loop()

    def start_loop(self):
        """Runs once, before the loop."""

    def stop_loop(self):
        """Runs once, after the loop (not after an exception)."""

    def run_loop(self):
        """One round: target(*args, **kwargs)."""
        if self._loop_target is not None:
            self._loop_target(*self._loop_args[0], **self._loop_args[1])
