"""tf.summary as TF1 scripts use it: summary ops fetched with the step,
merged, and written by a FileWriter to an event file TensorBoard reads
(read back here record by record), on one process and across tasks."""
import numpy as np
import pytest

import tfd
from tfd import example_proto  # its wire reader: (number, wire type, value)


def _events_of(path):
    """(step, the Event's fields) of each record of an event file."""
    events = []
    for record in tfd.python_io.tf_record_iterator(str(path)):
        fields = {n: v for n, _, v in example_proto._fields(record)}
        events.append((fields.get(2, 0), fields))
    return events


def _events(logdir):
    """The path of logdir's one event file, and its events."""
    [path] = logdir.glob("events.out.tfevents.*")
    return path, _events_of(path)


def _summaries(events):
    """{step: {tag: simple_value or HistogramProto}} of the summary events."""
    out = {}
    for step, fields in events:
        if 5 in fields:
            for v in tfd.Summary.FromString(fields[5]).value:
                out.setdefault(step, {})[v.tag] = v.histo if v.HasField("histo") else v.simple_value
    return out


def test_merge_all_and_a_file_writer_log_each_step(tmp_path):
    x = tfd.placeholder(tfd.float32, [])
    w = tfd.Variable([1.0, 2.0, 4.0], name="w")
    with tfd.name_scope("train"):
        tfd.summary.scalar("loss", x * x)
    tfd.summary.histogram("w", w)  # tagged "w_1": the name "w" is the variable's, as in TF1
    merged = tfd.summary.merge_all()
    assert merged.dtype == tfd.string and merged.shape.as_list() == []
    with tfd.Session() as sess:
        sess.run(tfd.global_variables_initializer())
        with tfd.summary.FileWriter(tmp_path / "logs", sess.graph) as writer:
            for step in range(3):
                writer.add_summary(sess.run(merged, {x: step + 0.5}), step)
            writer.add_summary(tfd.Summary(value=[tfd.Summary.Value(tag="eval/acc",
                                                                    simple_value=0.25)]), 9)
    _, events = _events(tmp_path / "logs")
    assert events[0][1][3] == b"brain.Event:2"  # the file_version record first
    nodes = {}  # then the graph: NodeDef name (1) -> its op (2) and inputs (3)
    for _, _, node in example_proto._fields(events[1][1][4]):
        fields = list(example_proto._fields(node))
        nodes[fields[0][2]] = [v for n, _, v in fields if n in (2, 3)]
    assert nodes[b"w"][0] == b"VariableV2"
    assert nodes[b"Merge/MergeSummary"] == [b"MergeSummary", b"train/loss/ScalarSummary",
                                            b"w_1/HistogramSummary"]
    got = _summaries(events)
    assert sorted(got) == [0, 1, 2, 9]
    for step in range(3):
        assert got[step]["train/loss"] == pytest.approx((step + 0.5) ** 2)
        h = got[step]["w_1"]
        assert (h.num, h.min, h.max, h.sum, h.sum_squares) == (3, 1, 4, 7, 21)
        assert sum(h.bucket) == 3 and len(h.bucket) == len(h.bucket_limit)
    assert got[9] == {"eval/acc": 0.25}


def test_tags_and_collections_are_tf1s():
    x = tfd.constant(2.0)
    a = tfd.summary.scalar("loss", x)
    b = tfd.summary.scalar("loss", x)  # a name taken: the next, as a name scope's
    with tfd.name_scope("eval"):
        c = tfd.summary.scalar("acc", x, family="metrics")
    d = tfd.summary.scalar("lr", x, collections=["mine"])
    e = tfd.summary.scalar("off", x, collections=[])
    assert tfd.get_collection(tfd.GraphKeys.SUMMARIES) == [a, b, c]
    with tfd.Session() as sess:
        tags = [v.tag for v in tfd.Summary.FromString(sess.run(tfd.summary.merge_all())).value]
        assert tags == ["loss", "loss_1", "metrics/eval/metrics/acc"]
        assert [v.tag for v in tfd.Summary.FromString(
            sess.run(tfd.summary.merge_all("mine"))).value] == ["lr"]
        assert tfd.Summary.FromString(sess.run(e)).value[0].simple_value == 2.0
        # The training loop's hook reads the same tags from summaries/TAG.
        assert sess.run("summaries/metrics/eval/metrics/acc:0") == 2.0
    assert tfd.summary.merge_all("nothing here") is None
    assert d in tfd.get_collection("mine")


def test_bad_summaries_fail_the_step_naming_them():
    w = tfd.placeholder(tfd.float32, [None])
    h = tfd.summary.histogram("weights", w)
    s = tfd.summary.scalar("s", tfd.constant(1.0))
    with tfd.Session() as sess:
        with pytest.raises(tfd.errors.InvalidArgumentError, match="weights"):
            sess.run(h, {w: np.array([1.0, np.nan], np.float32)})
        # IEEE specials are a scalar summary's to keep, as TF1's.
        assert np.isinf(tfd.Summary.FromString(
            sess.run(tfd.summary.scalar("inf", tfd.constant(np.inf)))).value[0].simple_value)
        with pytest.raises(tfd.errors.InvalidArgumentError, match="'s'"):
            sess.run(tfd.summary.merge([s, s]))  # a tag twice
    with pytest.raises(ValueError):
        tfd.summary.merge([])


def test_file_writer_errors_suffix_and_reopen(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(tfd.errors.InvalidArgumentError):
        tfd.summary.FileWriter(blocker / "logs")
    with pytest.raises(tfd.errors.InvalidArgumentError):
        tfd.summary.FileWriter(tmp_path / "a", filename_suffix="/up")
    with pytest.raises(ValueError):
        tfd.summary.FileWriter(tmp_path / "a", session=object())
    with pytest.raises(TypeError):
        tfd.summary.FileWriter(tmp_path / "b").add_summary(3.5)

    writer = tfd.summary.FileWriter(tmp_path / "c", filename_suffix=".eval")
    assert writer.get_logdir() == str(tmp_path / "c")
    writer.close()
    for _ in range(2):  # a closed writer refuses every write, not just the first
        with pytest.raises(tfd.errors.FailedPreconditionError):
            writer.add_summary(tfd.Summary())
    writer.reopen()
    writer.add_summary(tfd.Summary(value=[tfd.Summary.Value(tag="t", simple_value=1)]), 5)
    writer.close()
    files = sorted(p.name for p in (tmp_path / "c").iterdir())
    assert len(files) == 2 and all(f.endswith(".eval") for f in files)


def test_summaries_of_a_ps_variable_across_tasks(cluster_factory):
    cluster = cluster_factory({"ps": 1, "worker": 1})
    with tfd.device("/job:ps/task:0"):
        w = tfd.Variable(np.arange(6, dtype=np.float32).reshape(2, 3), name="w")
        tfd.summary.histogram("weights", w)
    with tfd.device("/job:worker/task:0"):
        tfd.summary.scalar("norm", tfd.reduce_sum(w * w))
    merged = tfd.summary.merge_all()
    with tfd.Session(cluster.address("worker", 0)) as sess:
        sess.run(tfd.global_variables_initializer())
        values = {v.tag: v for v in tfd.Summary.FromString(sess.run(merged)).value}
    assert values["norm"].simple_value == 55.0
    assert (values["weights"].histo.num, values["weights"].histo.max) == (6, 5)


def test_summary_saver_hook_writes_a_summary_op_as_tf1s(cluster_factory, tmp_path):
    """With summary_op, the hook fetches it with the first step and every
    save_steps global steps after, writing it at the global step."""
    cluster = cluster_factory({"ps": 1, "worker": 1})
    with tfd.device(tfd.train.replica_device_setter(cluster=cluster.spec)):
        global_step = tfd.train.get_or_create_global_step()
        w = tfd.Variable(np.zeros(2, np.float32), name="w")
        loss = tfd.reduce_sum(tfd.square(w - 3.0))
        tfd.summary.scalar("loss", loss)
        tfd.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=global_step)
    merged = tfd.summary.merge_all()
    mine = tfd.summary.FileWriter(tmp_path / "mine")
    hooks = [tfd.train.StopAtStepHook(num_steps=5),
             tfd.train.SummarySaverHook(save_steps=2, output_dir=tmp_path / "own",
                                        summary_op=merged),
             tfd.train.SummarySaverHook(save_steps=4, summary_writer=mine, summary_op=[merged])]
    with tfd.train.MonitoredTrainingSession(cluster.address("worker", 0), is_chief=True,
                                            hooks=hooks, timeout=60) as sess:
        while not sess.should_stop():
            sess.run("train")
    own = _summaries(_events(tmp_path / "own")[1])
    assert sorted(own) == [1, 3, 5]
    assert own[1]["loss"] == 18.0  # the loss the first step computed, before its update
    mine.add_summary(tfd.Summary(), 99)  # the hook leaves a writer it was given open
    mine.close()
    assert sorted(_summaries(_events(tmp_path / "mine")[1])) == [1, 5]
    # Without one, the hook wrote through output_dir's cached writer, as TF1's.
    cached = tfd.summary.FileWriterCache.get(tmp_path / "own")
    assert cached is tfd.summary.FileWriterCache.get(str(tmp_path / "own"))
    tfd.summary.FileWriterCache.clear()
    with pytest.raises(tfd.errors.FailedPreconditionError):
        cached.add_summary(tfd.Summary())
    assert len(list((tmp_path / "own").iterdir())) == 1


def _png_pixels(png):
    """The pixels of an unfiltered 8-bit PNG as the encoder writes it:
    (width, height, color type, rows of bytes)."""
    import struct
    import zlib
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    at, idat = 8, b""
    while at < len(png):
        n, kind = struct.unpack(">I4s", png[at:at + 8])
        data = png[at + 8:at + 8 + n]
        assert struct.unpack(">I", png[at + 8 + n:at + 12 + n])[0] == zlib.crc32(kind + data)
        if kind == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", data[:10])
        idat += data if kind == b"IDAT" else b""
        at += 12 + n
    raw = zlib.decompress(idat)
    row = len(raw) // height
    assert all(raw[y * row] == 0 for y in range(height))  # filter: none
    return width, height, color, [raw[y * row + 1:(y + 1) * row] for y in range(height)]


def test_image_summaries_are_pngs_tensorboard_shows(tmp_path):
    x = tfd.placeholder(tfd.float32, [None, 2, 3, 1])
    tfd.summary.image("input", x, max_outputs=2)
    rgb = tfd.constant(np.arange(18, dtype=np.uint8).reshape(1, 2, 3, 3))
    tfd.summary.image("rgb", rgb, max_outputs=1)
    batch = np.array([[[0, 1, 2], [3, 4, np.nan]], [[-1, 0, 1], [0, 0, 0]],
                      [[9, 9, 9], [9, 9, 9]]], np.float32)[..., None]
    with tfd.Session() as sess:
        summary = tfd.Summary.FromString(sess.run(tfd.summary.merge_all(), {x: batch}))
    values = {v.tag: v.image for v in summary.value}
    assert sorted(values) == ["input/image/0", "input/image/1", "rgb/image"]  # 2 of the 3
    first = values["input/image/0"]
    assert (first.height, first.width, first.colorspace) == (2, 3, 1)
    # Gray, scaled by 255 / 4 and truncated; the NaN pixel is bad_color's red.
    assert _png_pixels(first.encoded_image_string) == (3, 2, 0, [bytes([0, 63, 127]),
                                                                 bytes([191, 255, 255])])
    # A negative value: 127 / max |v| around 128.
    assert _png_pixels(values["input/image/1"].encoded_image_string)[3] == [
        bytes([1, 128, 255]), bytes([128, 128, 128])]
    assert _png_pixels(values["rgb/image"].encoded_image_string) == (
        3, 2, 2, [bytes(range(9)), bytes(range(9, 18))])
    with pytest.raises(tfd.errors.InvalidArgumentError, match="channels"):
        with tfd.Session() as sess:
            sess.run(tfd.summary.image("bad", tfd.zeros([1, 2, 2, 2])))


def test_monitored_sessions_write_image_summaries_too(cluster_factory, tmp_path):
    cluster = cluster_factory({"ps": 1, "worker": 1})
    with tfd.device(tfd.train.replica_device_setter(cluster=cluster.spec)):
        global_step = tfd.train.get_or_create_global_step()
        w = tfd.Variable(np.zeros([1, 2, 2, 1], np.float32), name="w")
        loss = tfd.reduce_sum(tfd.square(w - 3.0))
        tfd.summary.scalar("loss", loss)
        tfd.summary.image("w", w, max_outputs=1)
        tfd.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=global_step)
    hooks = [tfd.train.StopAtStepHook(num_steps=3)]
    with tfd.train.MonitoredTrainingSession(cluster.address("worker", 0), is_chief=True,
                                            hooks=hooks, summary_dir=str(tmp_path / "logs"),
                                            save_summaries_steps=2, timeout=60) as sess:
        while not sess.should_stop():
            sess.run("train")
    written = {}
    for path in (tmp_path / "logs").glob("events.out.tfevents.*"):
        for step, fields in _events_of(path):
            if 5 in fields:
                for v in tfd.Summary.FromString(fields[5]).value:
                    written.setdefault(v.tag, []).append(step)
    assert written["loss"] == [2, 3]  # the loop's own hook: every 2 steps and the last
    assert written["w_1/image"] == [1, 3]  # the images: the first step, then every 2
