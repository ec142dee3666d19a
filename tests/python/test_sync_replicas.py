"""tfd.train.SyncReplicasOptimizer on a real cluster of 1 ps and 2 workers:
each update averages both workers' gradients and moves global_step once."""
import threading

import numpy as np
import pytest

import tfd


def build_replica(cluster, target, use_apply_gradients=False):
    """Worker i pulls w towards its own target; the average pulls it to 3."""
    graph = tfd.Graph()
    with graph.as_default():
        with tfd.device(tfd.train.replica_device_setter(cluster=cluster.spec)):
            step = tfd.train.get_or_create_global_step()
            w = tfd.Variable(np.zeros(2, np.float32), name="w")
            loss = tfd.reduce_sum(tfd.square(w - target), name="loss")
            opt = tfd.train.SyncReplicasOptimizer(tfd.train.GradientDescentOptimizer(0.1),
                                                  replicas_to_aggregate=2,
                                                  total_num_replicas=2)
            if use_apply_gradients:
                opt.apply_gradients(opt.compute_gradients(loss), global_step=step)
            else:
                opt.minimize(loss, global_step=step)
    return graph, opt, w


def train(cluster, task, graph, opt, last_step, out):
    """One worker's loop; is_chief comes from the optimizer's hook."""
    try:
        hooks = [opt.make_session_run_hook(is_chief=task == 0),
                 tfd.train.StopAtStepHook(last_step=last_step)]
        steps = []
        with tfd.train.MonitoredTrainingSession(cluster.address("worker", task), hooks=hooks,
                                                graph=graph, timeout=60) as sess:
            while not sess.should_stop():
                value = sess.run("train/global_step:0")
                if value is not None:
                    steps.append(int(value))
        out[task] = (steps, sess.result)
    except Exception as e:  # noqa: BLE001 (handed to the test's thread)
        out[task] = e


@pytest.mark.parametrize("use_apply_gradients", [False, True])
def test_two_workers_step_and_each_update_averages_both(cluster_factory, use_apply_gradients):
    cluster = cluster_factory({"ps": 1, "worker": 2})
    replicas = [build_replica(cluster, target, use_apply_gradients) for target in (1.0, 5.0)]
    out = {}
    threads = [threading.Thread(target=train, args=(cluster, i, *replicas[i][:2], 4, out),
                                daemon=True) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads)
    for task in range(2):
        assert not isinstance(out[task], Exception), out[task]
    (chief_steps, chief), (other_steps, other) = out[0], out[1]
    # The chief's every step is one update: the global step moves by one.
    assert chief_steps == [1, 2, 3, 4]
    assert chief["chief"] and not other["chief"]
    assert chief["global_step"] == 4 and other["global_step"] == 4
    # The other worker stepped too, and its steps saw the same rounds.
    assert other["local_steps"] >= 1 and set(other_steps) <= {1, 2, 3, 4}
    # Four updates with the average of 2(w - 1) and 2(w - 5): w = 3 - 3 * 0.8^4.
    # (A worker's gradient applied alone would pull w elsewhere.)
    graph, _, w = replicas[0]
    with tfd.Session(cluster.address("worker", 0), graph=graph, timeout=60) as sess:
        np.testing.assert_allclose(sess.run(w), [3 - 3 * 0.8 ** 4] * 2, rtol=1e-5)


def test_sync_replicas_needs_a_global_step_and_its_own_ops():
    w = tfd.Variable(np.zeros(2, np.float32), name="w")
    loss = tfd.reduce_sum(tfd.square(w))
    opt = tfd.train.SyncReplicasOptimizer(tfd.train.GradientDescentOptimizer(0.1), 2)
    with pytest.raises(ValueError, match="global_step"):
        opt.minimize(loss)
    hook = opt.make_session_run_hook(is_chief=True)
    with pytest.raises(ValueError, match="sync/chief_step"):
        hook.begin()
    step = tfd.train.get_or_create_global_step()
    opt.minimize(loss, global_step=step)
    hook.begin()  # the sync ops are there now
    # The hook's is_chief and the session's must agree (checked before connecting).
    with pytest.raises(ValueError, match="disagree"):
        tfd.train.MonitoredTrainingSession("127.0.0.1:1", is_chief=False, hooks=[hook])
    with pytest.raises(tfd.errors.InvalidArgumentError, match="replicas_to_aggregate"):
        tfd.train.SyncReplicasOptimizer(tfd.train.GradientDescentOptimizer(0.1), 3,
                                        total_num_replicas=2).minimize(loss, global_step=step)
