"""In-process sessions: numpy feeds and fetches of every dtype, TF's fetch
structures, zero-copy where the buffer allows, and each error class raised
by a real failure."""
import collections
import os
import time

import numpy as np
import pytest

import tfd
from process_helpers import start_on_thread

EVERY_DTYPE = [
    (tfd.float32, np.array([[1.5, -np.inf], [np.nan, 1e-40]], np.float32)),
    (tfd.float64, np.array([1e300, -0.0, 5e-324], np.float64)),
    (tfd.int32, np.array([-2**31, 2**31 - 1], np.int32)),
    (tfd.int64, np.array([[-2**63], [2**63 - 1]], np.int64)),
    (tfd.uint8, np.arange(256, dtype=np.uint8).reshape(16, 16)),
    (tfd.bool, np.array([True, False, True])),
    (tfd.string, np.array([b"", b"bytes", "caf\u00e9".encode()], object)),
    (tfd.float32, np.float32(3.25)),  # a scalar
    (tfd.int64, np.zeros((0, 3), np.int64)),  # no elements
]


@pytest.mark.parametrize("dtype,value", EVERY_DTYPE,
                         ids=["%s%s" % (d.name, np.shape(v)) for d, v in EVERY_DTYPE])
def test_feed_and_fetch_every_dtype(dtype, value):
    x = tfd.placeholder(dtype, np.shape(value))
    y = tfd.identity(x)
    with tfd.Session() as sess:
        out = sess.run(y, {x: value})
    assert out.dtype == dtype.as_numpy_dtype or (dtype == tfd.string and out.dtype == object)
    assert out.shape == np.shape(value)
    np.testing.assert_array_equal(out, value)


SERIAL_OPENBLAS = "/usr/lib/x86_64-linux-gnu/openblas-serial/"


@pytest.mark.skipif(not os.path.exists(SERIAL_OPENBLAS + "libopenblas.so.0"),
                    reason="no single-threaded OpenBLAS (libopenblas0-serial) on this host")
def test_matmul_loads_the_single_threaded_openblas_beside_numpys():
    """numpy's threaded OpenBLAS holds the name libopenblas.so.0 in this
    process; tfd's first product loads the single-threaded one by its path
    (kernels/math/openblas.h), not numpy's, and its product is numpy's."""
    rng = np.random.RandomState(3)
    a = rng.uniform(-1, 1, (67, 129)).astype(np.float32)
    b = rng.uniform(-1, 1, (129, 45)).astype(np.float32)
    x = tfd.placeholder(tfd.float32, [None, 129])
    with tfd.Session() as sess:
        out = sess.run(tfd.matmul(x, tfd.constant(b)), {x: a})
    np.testing.assert_allclose(out, a.astype(np.float64) @ b, rtol=1e-5, atol=1e-5)
    with open("/proc/self/maps") as maps:
        mapped = {line.split()[-1] for line in maps if "libopenblas" in line}
    assert any(path.startswith(SERIAL_OPENBLAS) for path in mapped), mapped


def test_computed_values_are_numpys():
    x = tfd.placeholder(tfd.float64, [3])
    with tfd.Session() as sess:
        out = sess.run(tfd.sqrt(x) * 2.0 - 1.0, {x: [4.0, np.inf, 1e-320]})
    np.testing.assert_array_equal(out, np.sqrt(np.array([4.0, np.inf, 1e-320])) * 2.0 - 1.0)


def test_fetch_structures_come_back_in_shape():
    a = tfd.constant(1, name="a")
    b = tfd.constant([2.0, 3.0], name="b")
    noop = tfd.no_op()
    Pair = collections.namedtuple("Pair", "first second")
    with tfd.Session() as sess:
        out = sess.run({"a": a, "nested": [b, (a, Pair(a, b))], "op": noop, "name": "b:0"})
    assert out["a"] == 1
    np.testing.assert_array_equal(out["nested"][0], [2.0, 3.0])
    assert isinstance(out["nested"][1], tuple) and out["nested"][1][0] == 1
    assert isinstance(out["nested"][1][1], Pair) and out["nested"][1][1].first == 1
    assert out["op"] is None
    np.testing.assert_array_equal(out["name"], [2.0, 3.0])


def test_a_read_only_feed_crosses_without_a_copy_and_a_writable_one_is_copied():
    x = tfd.placeholder(tfd.float32, [1024])
    y = tfd.identity(x)
    frozen = np.arange(1024, dtype=np.float32)
    frozen.flags.writeable = False
    writable = np.arange(1024, dtype=np.float32)
    with tfd.Session() as sess:
        out_frozen = sess.run(y, {x: frozen})
        out_writable = sess.run(y, {x: writable})
    assert np.shares_memory(out_frozen, frozen)
    assert not np.shares_memory(out_writable, writable)
    np.testing.assert_array_equal(out_writable, writable)


def test_a_fetched_array_that_shares_a_variable_is_read_only():
    v = tfd.Variable(np.zeros(4, np.float32), name="v")
    with tfd.Session() as sess:
        sess.run(v.initializer)
        held = sess.run(v.value())
        computed = sess.run(v.value() + 1.0)
        assert not held.flags.writeable
        assert computed.flags.writeable
        computed[0] = 7.0  # writing a result of one's own is allowed
        sess.run(v.assign_add(np.ones(4, np.float32)))
        np.testing.assert_array_equal(held, np.zeros(4))  # the old value, not changed under us
        np.testing.assert_array_equal(sess.run(v), np.ones(4))


def test_a_feed_of_the_wrong_shape_is_refused_before_running():
    x = tfd.placeholder(tfd.float32, [2])
    with tfd.Session() as sess:
        with pytest.raises(ValueError, match="shape"):
            sess.run(tfd.identity(x), {x: np.zeros(3, np.float32)})


def test_ops_added_after_a_run_run_in_the_same_session():
    a = tfd.constant(2.0)
    with tfd.Session() as sess:
        assert sess.run(a) == 2.0
        b = a * 3.0
        assert sess.run(b) == 6.0


def test_eval_and_run_use_the_default_session():
    a = tfd.constant([1, 2])
    with tfd.Session():
        np.testing.assert_array_equal(a.eval(), [1, 2])


def test_make_callable_repeats_a_step():
    x = tfd.placeholder(tfd.float32, [])
    step = None
    with tfd.Session() as sess:
        step = sess.make_callable(x * 2.0, [x])
        assert [step(1.0), step(2.5)] == [2.0, 5.0]


# Each error class, raised by a real failure --------------------------------
def test_invalid_argument_names_the_unfed_placeholder():
    x = tfd.placeholder(tfd.float32, [2], name="needs_feeding")
    with tfd.Session() as sess:
        with pytest.raises(tfd.errors.InvalidArgumentError) as e:
            sess.run(tfd.identity(x))
    assert "needs_feeding" in e.value.message
    assert e.value.code == "INVALID_ARGUMENT"


def test_failed_precondition_for_an_uninitialized_variable():
    v = tfd.Variable(np.zeros(2, np.float32), name="never_initialized")
    with tfd.Session() as sess:
        with pytest.raises(tfd.errors.FailedPreconditionError) as e:
            sess.run(v.value())
    assert "never_initialized" in str(e.value)


def test_deadline_exceeded_for_a_dequeue_that_never_ends():
    q = tfd.raw_ops.fifo_queue(component_types=[tfd.float32], shapes=[[]], name="q")
    with tfd.Session() as sess:
        with pytest.raises(tfd.errors.DeadlineExceededError) as e:
            sess.run(tfd.raw_ops.queue_dequeue(q, component_types=[tfd.float32]), timeout=0.2)
    assert e.value.code == "DEADLINE_EXCEEDED"


def test_out_of_range_for_a_closed_empty_queue():
    q = tfd.raw_ops.fifo_queue(component_types=[tfd.float32], shapes=[[]], name="q")
    with tfd.Session() as sess:
        sess.run(tfd.raw_ops.queue_close(q))
        with pytest.raises(tfd.errors.OutOfRangeError):
            sess.run(tfd.raw_ops.queue_dequeue(q, component_types=[tfd.float32]), timeout=30)


def test_close_on_another_thread_cancels_a_blocked_run():
    """TF1's Session.close on an in-process session: a run blocked in a
    dequeue from an empty queue raises CancelledError at once rather than at
    its deadline, and the closed session runs nothing more."""
    q = tfd.raw_ops.fifo_queue(component_types=[tfd.float32], shapes=[[]], name="q")
    [take] = tfd.raw_ops.queue_dequeue(q, component_types=[tfd.float32])
    size = tfd.raw_ops.queue_size(q)
    sess = tfd.Session()
    runner = sess._runner  # the run below holds it as run() does
    assert sess.run(size) == 0
    join = start_on_thread(lambda: sess.run(take, timeout=120))  # not what ends it
    time.sleep(1.0)  # the dequeue is waiting by then
    started = time.monotonic()
    sess.close()
    ended = join(60)
    assert time.monotonic() - started < 30
    assert isinstance(ended, tfd.errors.CancelledError), repr(ended)
    assert "closed" in str(ended)
    with pytest.raises(tfd.errors.FailedPreconditionError):
        runner.run(sess.graph._builder, [], [], ["q"], 0.0)


def test_a_scalar_comes_back_as_tf1s_does_a_numpy_scalar_or_bytes():
    f, i, s, v = (tfd.constant(1.5), tfd.constant(3, tfd.int64), tfd.constant("hi"),
                  tfd.constant([1.0, 2.0]))
    with tfd.Session() as sess:
        got_f, got_i, got_s, got_v = sess.run([f, i, s, v])
        call = sess.make_callable([f, s])
        assert [type(x) for x in call()] == [np.float32, bytes]
    assert type(got_f) is np.float32 and got_f == 1.5
    assert type(got_i) is np.int64 and got_i == 3
    assert got_s == b"hi"
    assert isinstance(got_v, np.ndarray) and got_v.shape == (2,)


def test_string_constants_keep_trailing_nul_bytes():
    """numpy's fixed-width bytes drop them; a serialized record often ends in one."""
    values = [b"ab\x00", b"\x00", b"c\x00\x00d\x00"]
    with tfd.Session() as sess:
        got = sess.run([tfd.constant(values), tfd.constant(values[0])])
    assert list(got[0]) == values and got[1] == values[0]
