"""TF1's file input pipeline as its users wrote it: string_input_producer
feeding a TextLineReader or a FixedLengthRecordReader under queue runners,
records decoded by decode_csv and decode_raw and batched by shuffle_batch,
the epoch ending in OutOfRangeError; and files outside the session's
io_dirs refused."""
import numpy as np
import pytest

import tfd


def drain(sess, fetches):
    """Every value `fetches` gives until the input ends."""
    coord = tfd.train.Coordinator()
    threads = tfd.train.start_queue_runners(sess, coord)
    got = []
    try:
        while True:
            got.append(sess.run(fetches))
    except tfd.errors.OutOfRangeError:
        pass
    finally:
        coord.request_stop()
        coord.join(threads)
    return got


def test_csv_lines_through_decode_csv_and_shuffle_batch(tmp_path):
    rows = [(i, i * 0.5, "name%d" % i) for i in range(40)]
    for part in range(2):
        with open(tmp_path / ("part%d.csv" % part), "w") as f:
            f.write("id,score,name\n")
            for i, score, name in rows[part::2]:
                f.write("%d,%s,%s\n" % (i, score, name))
    files = tfd.train.string_input_producer(["part0.csv", "part1.csv"], num_epochs=1)
    _, line = tfd.TextLineReader(skip_header_lines=1).read(files)
    ids, scores, names = tfd.decode_csv(line, [[0], [0.0], ["?"]])
    batch = tfd.train.shuffle_batch([ids, scores, names], 8, capacity=64, min_after_dequeue=8,
                                    allow_smaller_final_batch=True)
    with tfd.Session(io_dirs=[str(tmp_path)]) as sess:
        sess.run([tfd.global_variables_initializer(), tfd.local_variables_initializer()])
        got = drain(sess, batch)
    seen = np.concatenate([b[0] for b in got])
    assert sorted(seen.tolist()) == list(range(40))
    for b in got:
        np.testing.assert_allclose(b[1], b[0] * 0.5)
        assert [n.decode() for n in b[2]] == ["name%d" % i for i in b[0]]


def test_fixed_length_records_decoded_as_cifar_images(tmp_path):
    # Records of one label byte and a 2x2x3 image, CIFAR-10's layout.
    rng = np.random.RandomState(0)
    labels = rng.randint(0, 10, size=5).astype(np.uint8)
    images = rng.randint(0, 256, size=(5, 3, 2, 2)).astype(np.uint8)
    with open(tmp_path / "batch.bin", "wb") as f:
        for label, image in zip(labels, images):
            f.write(bytes([label]) + image.tobytes())
    files = tfd.train.string_input_producer(["batch.bin"], num_epochs=1, shuffle=False)
    reader = tfd.FixedLengthRecordReader(record_bytes=1 + 12)
    key, value = reader.read(files)
    raw = tfd.decode_raw(value, tfd.uint8)
    assert raw.shape == tfd.TensorShape([None])
    label = tfd.cast(raw[0], tfd.int32)
    image = tfd.transpose(tfd.reshape(raw[1:], [3, 2, 2]), [1, 2, 0])
    with tfd.Session(io_dirs=[str(tmp_path)]) as sess:
        sess.run(tfd.local_variables_initializer())
        got = drain(sess, [key, label, image])
        assert sess.run(reader.num_records_produced()) == 5
    assert [k.decode() for k, _, _ in got] == ["batch.bin:%d" % i for i in range(5)]
    assert [int(lab) for _, lab, _ in got] == labels.tolist()
    for (_, _, img), want in zip(got, images):
        np.testing.assert_array_equal(img, want.transpose(1, 2, 0))


def test_fixed_length_records_every_hop_bytes(tmp_path):
    (tmp_path / "signal.bin").write_bytes(b"0123456")
    files = tfd.train.string_input_producer(["signal.bin"], num_epochs=1, shuffle=False)
    _, window = tfd.FixedLengthRecordReader(record_bytes=3, hop_bytes=2).read(files)
    with tfd.Session(io_dirs=[str(tmp_path)]) as sess:
        sess.run(tfd.local_variables_initializer())
        assert drain(sess, window) == [b"012", b"234", b"456"]


def test_a_file_outside_io_dirs_is_refused_and_bad_arguments_are_named(tmp_path):
    files = tfd.train.string_input_producer(["/etc/hostname"], shuffle=False)
    _, line = tfd.TextLineReader().read(files)
    with tfd.Session(io_dirs=[str(tmp_path)]) as sess:
        coord = tfd.train.Coordinator()
        threads = tfd.train.start_queue_runners(sess, coord)
        with pytest.raises(tfd.errors.InvalidArgumentError, match="/etc/hostname"):
            sess.run(line)
        coord.request_stop()
        sess.run(files.close(cancel_pending_enqueues=True))
        coord.join(threads)
    with pytest.raises(ValueError, match="encoding"):
        tfd.FixedLengthRecordReader(4, encoding="ZLIB")
    with pytest.raises(tfd.errors.InvalidArgumentError, match="is not a valid int32"):
        tfd.Session().run(tfd.decode_csv(tfd.constant(["x"]), [[0]]))
    assert tfd.io.decode_csv is tfd.decode_csv


def test_tfrecords_written_in_python_and_read_by_the_graph_or_iterated(tmp_path):
    records = [b"", b"one", bytes(range(256)) * 40]
    with tfd.python_io.TFRecordWriter(str(tmp_path / "r.tfrecord")) as w:
        for r in records:
            w.write(r)
    assert list(tfd.python_io.tf_record_iterator(str(tmp_path / "r.tfrecord"))) == records
    files = tfd.train.string_input_producer(["r.tfrecord"], num_epochs=1, shuffle=False)
    _, value = tfd.TFRecordReader().read(files)
    with tfd.Session(io_dirs=[str(tmp_path)]) as sess:
        sess.run(tfd.local_variables_initializer())
        assert drain(sess, value) == records

    data = (tmp_path / "r.tfrecord").read_bytes()
    (tmp_path / "cut.tfrecord").write_bytes(data[:-3])
    (tmp_path / "flipped.tfrecord").write_bytes(data[:20] + bytes([data[20] ^ 1]) + data[21:])
    for name, offset in (("cut.tfrecord", 35), ("flipped.tfrecord", 16)):
        with pytest.raises(tfd.errors.DataLossError, match="offset %d" % offset):
            list(tfd.python_io.tf_record_iterator(str(tmp_path / name)))
    files = tfd.train.string_input_producer(["flipped.tfrecord"], num_epochs=1, shuffle=False)
    _, value = tfd.TFRecordReader(name="damaged").read(files)
    with tfd.Session(io_dirs=[str(tmp_path)]) as sess:
        sess.run(tfd.local_variables_initializer())
        with pytest.raises(tfd.errors.DataLossError, match="offset 16"):
            drain(sess, value)


@pytest.mark.parametrize("kind", ["GZIP", "ZLIB"])
def test_compressed_tfrecords_as_tf1_writes_them(tmp_path, kind):
    """The whole file one zlib or gzip stream, as TF1's TFRecordOptions make
    it: gzip -d and zlib read what the writer wrote; the iterator and the
    graph's reader read it back; damage is DataLossError in both."""
    import gzip
    import zlib
    records = [b"", b"one", bytes(range(256)) * 2000]
    options = tfd.python_io.TFRecordOptions(getattr(tfd.python_io.TFRecordCompressionType, kind))
    path = tmp_path / "r.tfrecord"
    with tfd.python_io.TFRecordWriter(str(path), options) as w:
        for r in records:
            w.write(r)
    inflate = gzip.decompress if kind == "GZIP" else zlib.decompress
    plain = tmp_path / "plain.tfrecord"
    with tfd.python_io.TFRecordWriter(str(plain)) as w:
        for r in records:
            w.write(r)
    assert inflate(path.read_bytes()) == plain.read_bytes()
    assert list(tfd.python_io.tf_record_iterator(str(path), kind)) == records
    files = tfd.train.string_input_producer(["r.tfrecord"], num_epochs=1, shuffle=False)
    key, value = tfd.TFRecordReader(options=options).read(files)
    with tfd.Session(io_dirs=[str(tmp_path)]) as sess:
        sess.run(tfd.local_variables_initializer())
        got = drain(sess, [key, value])
    assert [v for _, v in got] == records
    assert [k.decode() for k, _ in got] == ["r.tfrecord:0", "r.tfrecord:16", "r.tfrecord:35"]

    data = path.read_bytes()
    (tmp_path / "cut").write_bytes(data[:len(data) // 2])
    with pytest.raises(tfd.errors.DataLossError, match="cut short"):
        list(tfd.python_io.tf_record_iterator(str(tmp_path / "cut"), options))
    with pytest.raises(ValueError, match="compression_type"):
        tfd.python_io.TFRecordWriter(str(tmp_path / "x"), "BZIP2")


def test_examples_written_to_tfrecords_and_parsed_in_the_graph(tmp_path):
    train = tfd.train

    def example(label, pixels, tags):
        return train.Example(features=train.Features(feature={
            "label": train.Feature(int64_list=train.Int64List(value=[label])),
            "pixels": train.Feature(float_list=train.FloatList(value=pixels)),
            "tags": train.Feature(bytes_list=train.BytesList(value=tags)),
        })).SerializeToString()

    with tfd.python_io.TFRecordWriter(str(tmp_path / "ex.tfrecord")) as w:
        w.write(example(3, [0.5, -1.0], [b"a"]))
        w.write(example(-(2 ** 40), [2.0, 3.0], []))  # an empty list ends the record in NUL
    files = tfd.train.string_input_producer(["ex.tfrecord"], num_epochs=1, shuffle=False)
    _, record = tfd.TFRecordReader().read(files)
    spec = {"label": tfd.FixedLenFeature([], tfd.int64),
            "pixels": tfd.FixedLenFeature([2], tfd.float32),
            "tags": tfd.VarLenFeature(tfd.string),
            "weight": tfd.FixedLenFeature([], tfd.float32, default_value=1.0)}
    one = tfd.parse_single_example(record, spec)
    assert one["pixels"].shape == tfd.TensorShape([2])
    batch = tfd.parse_example(tfd.constant([example(1, [0.0, 0.0], [b"x", b"y"])] * 2), spec)
    with tfd.Session(io_dirs=[str(tmp_path)]) as sess:
        sess.run(tfd.local_variables_initializer())
        got = drain(sess, [one["label"], one["pixels"], one["tags"].values,
                           one["tags"].dense_shape, one["weight"]])
        tags = sess.run([batch["tags"].indices, batch["tags"].dense_shape])
    assert [g[0] for g in got] == [3, -(2 ** 40)]
    np.testing.assert_array_equal(got[1][1], [2.0, 3.0])
    assert list(got[0][2]) == [b"a"] and list(got[1][2]) == []
    assert list(got[0][3]) == [1] and list(got[1][3]) == [0]
    assert got[0][4] == 1.0
    np.testing.assert_array_equal(tags[0], [[0, 0], [0, 1], [1, 0], [1, 1]])
    np.testing.assert_array_equal(tags[1], [2, 2])
    with pytest.raises(tfd.errors.InvalidArgumentError, match="feature 'label' is required"):
        tfd.Session().run(tfd.parse_example(tfd.constant([b""]), spec)["label"])


def test_sequence_features_pad_each_example_to_the_most_blocks():
    train = tfd.train

    def example(**features):
        return train.Example(features=train.Features(feature={
            k: train.Feature(float_list=train.FloatList(value=v)) if k != "words" else
            train.Feature(bytes_list=train.BytesList(value=v)) for k, v in features.items()
        })).SerializeToString()

    examples = [example(points=[1, 2, 3, 4], words=[b"a", b"b", b"c"]),
                example(), example(points=[5, 6], words=[b"d"])]
    spec = {"points": tfd.FixedLenSequenceFeature([2], tfd.float32, allow_missing=True,
                                                  default_value=-1.0),
            "words": tfd.io.FixedLenSequenceFeature([], tfd.string, allow_missing=True)}
    parsed = tfd.parse_example(tfd.constant(examples), spec)
    assert parsed["points"].shape.as_list() == [3, None, 2]
    one = tfd.parse_single_example(tfd.constant(examples[2]), spec)
    with tfd.Session() as sess:
        points, words, single = sess.run([parsed["points"], parsed["words"], one["points"]])
    np.testing.assert_array_equal(points, [[[1, 2], [3, 4]], [[-1, -1], [-1, -1]],
                                           [[5, 6], [-1, -1]]])
    assert words.tolist() == [[b"a", b"b", b"c"], [b"", b"", b""], [b"d", b"", b""]]
    np.testing.assert_array_equal(single, [[5, 6]])
    with pytest.raises(ValueError, match="allow_missing=True"):
        tfd.parse_example(tfd.constant(examples), {
            "points": tfd.FixedLenSequenceFeature([2], tfd.float32)})
    odd = tfd.parse_example(tfd.constant([example(points=[1, 2, 3])]), {
        "points": tfd.FixedLenSequenceFeature([2], tfd.float32, allow_missing=True)})
    with pytest.raises(tfd.errors.InvalidArgumentError, match="3 values, not whole blocks of 2"):
        tfd.Session().run(odd["points"])


def test_sequence_examples_round_trip_and_parse_into_context_and_steps():
    train = tfd.train

    def ints(values):
        return train.Feature(int64_list=train.Int64List(value=values))

    seq = train.SequenceExample(
        context=train.Features(feature={"length": ints([3])}),
        feature_lists=train.FeatureLists(feature_list={
            "tokens": train.FeatureList(feature=[ints([4]), ints([5]), ints([6])]),
            "tags": train.FeatureList(feature=[ints([1, 2]), ints([]), ints([3])]),
        }))
    record = seq.SerializeToString()
    assert train.SequenceExample.FromString(record) == seq
    context, steps = tfd.parse_single_sequence_example(
        tfd.constant(record), context_features={"length": tfd.FixedLenFeature([], tfd.int64)},
        sequence_features={
            "tokens": tfd.FixedLenSequenceFeature([], tfd.int64),
            "tags": tfd.VarLenFeature(tfd.int64),
            "absent": tfd.FixedLenSequenceFeature([2], tfd.float32, allow_missing=True)},
        example_name="first")
    assert steps["tokens"].shape.as_list() == [None]
    with tfd.Session() as sess:
        got = sess.run([context["length"], steps["tokens"], steps["tags"].indices,
                        steps["tags"].values, steps["tags"].dense_shape, steps["absent"]])
    assert got[0] == 3 and got[1].tolist() == [4, 5, 6]
    assert got[2].tolist() == [[0, 0], [0, 1], [2, 0]] and got[3].tolist() == [1, 2, 3]
    assert got[4].tolist() == [3, 2] and got[5].shape == (0, 2)
    _, required = tfd.parse_single_sequence_example(
        tfd.constant(record), sequence_features={
            "absent": tfd.FixedLenSequenceFeature([], tfd.int64)}, example_name="first")
    with pytest.raises(tfd.errors.InvalidArgumentError,
                       match="sequence example 'first': feature list 'absent' is required"):
        tfd.Session().run(required["absent"])
    with pytest.raises(ValueError, match="no features"):
        tfd.parse_single_sequence_example(tfd.constant(record))


def test_a_var_len_feature_fetches_as_a_sparse_tensor_value_and_densifies():
    train = tfd.train
    examples = [train.Example(features=train.Features(feature={
        "ids": train.Feature(int64_list=train.Int64List(value=ids))})).SerializeToString()
        for ids in ([4, 5], [], [7])]
    ids = tfd.parse_example(tfd.constant(examples), {"ids": tfd.VarLenFeature(tfd.int64)})["ids"]
    dense = tfd.sparse.to_dense(ids, default_value=-1)
    zeros = tfd.sparse_tensor_to_dense(ids)
    with tfd.Session() as sess:
        value, got_dense, got_zeros = sess.run([ids, dense, zeros])
    assert isinstance(value, tfd.SparseTensorValue)
    np.testing.assert_array_equal(value.indices, [[0, 0], [0, 1], [2, 0]])
    np.testing.assert_array_equal(value.values, [4, 5, 7])
    np.testing.assert_array_equal(value.dense_shape, [3, 2])
    np.testing.assert_array_equal(got_dense, [[4, 5], [-1, -1], [7, -1]])
    np.testing.assert_array_equal(got_zeros, [[4, 5], [0, 0], [7, 0]])


def test_a_parse_example_node_whose_lists_disagree_is_refused_not_crashed():
    # Two dense keys but one dense shape: the builder takes the node (as
    # TF1's does), the kernel refuses it naming the lists.
    node = tfd.raw_ops.parse_example(tfd.constant([b""]), [], [], [tfd.constant("a"),
                                                                   tfd.constant("b")],
                                     [tfd.constant([1.0]), tfd.constant([2.0])], sparse_types=[],
                                     dense_shapes=[[1]])
    with pytest.raises(tfd.errors.InvalidArgumentError, match="dense_shapes"):
        tfd.Session().run(node[0])


def test_an_example_reads_back_from_its_bytes_as_protobuf_reads_them():
    train = tfd.train
    ex = train.Example(features=train.Features(feature={
        "label": train.Feature(int64_list=train.Int64List(value=[3, -1, 1 << 62])),
        "pixels": train.Feature(float_list=train.FloatList(value=[0.5, float("inf"), -0.0])),
        "name": train.Feature(bytes_list=train.BytesList(value=[b"a\x00", b""])),
        "empty": train.Feature(),
    }))
    back = train.Example.FromString(ex.SerializeToString())
    assert back == ex
    assert back.features.feature["label"].int64_list.value == [3, -1, 1 << 62]
    assert back.features.feature["pixels"].float_list.value == [0.5, float("inf"), -0.0]
    # Written by another protobuf writer: unpacked numbers (wire types 0
    # and 5), an unknown field, a key given twice (the later wins), and a
    # second Features (merged into the first).
    label = b"\x0a\x05label\x12\x06\x1a\x04\x08\x07\x08\x09"       # int64 7, 9 unpacked
    pixels = b"\x0a\x01p\x12\x07\x12\x05\x0d\x00\x00\x80\x3f"        # float 1.0 unpacked
    again = b"\x0a\x05label\x12\x04\x1a\x02\x08\x05"                # label: 5
    unknown = b"\x78\x01"                                            # field 15, varint
    data = (b"\x0a" + bytes([len(label) + 2]) + b"\x0a" + bytes([len(label)]) + label
            + unknown
            + b"\x0a" + bytes([len(pixels) + 2 + len(again) + 2])
            + b"\x0a" + bytes([len(pixels)]) + pixels + b"\x0a" + bytes([len(again)]) + again)
    got = train.Example.FromString(data).features.feature
    assert got["label"].int64_list.value == [5] and got["p"].float_list.value == [1.0]
    for bad in (b"\x0a\x05ab", b"\x0a", b"\x0b", b"\x0a\x80"):
        with pytest.raises(tfd.example_proto.DecodeError):
            train.Example.FromString(bad)


def test_whole_file_and_identity_readers(tmp_path):
    (tmp_path / "a.bin").write_bytes(b"\x00ab\x00")
    (tmp_path / "b.bin").write_bytes(b"")
    files = tfd.train.string_input_producer(["a.bin", "b.bin"], num_epochs=1, shuffle=False)
    key, value = tfd.WholeFileReader().read(files)
    work = tfd.FIFOQueue(4, tfd.string, shapes=[[]])
    fill = work.enqueue_many([["x", "y"]])
    ident = tfd.IdentityReader().read(work)
    with tfd.Session(io_dirs=[str(tmp_path)]) as sess:
        sess.run(tfd.local_variables_initializer())
        assert drain(sess, [key, value]) == [[b"a.bin", b"\x00ab\x00"], [b"b.bin", b""]]
        sess.run(fill)
        sess.run(work.close())
        assert [sess.run(list(ident)) for _ in range(2)] == [[b"x", b"x"], [b"y", b"y"]]


def test_match_filenames_once_and_read_up_to_batched_with_enqueue_many(tmp_path):
    (tmp_path / "data").mkdir()
    lines = {}
    for part, n in ((0, 5), (1, 0), (2, 3)):  # an empty file between two others
        name = "data/part-%d.csv" % part
        lines[name] = ["%d,%d" % (part, i) for i in range(n)]
        (tmp_path / name).write_text("".join(line + "\n" for line in lines[name]))
    (tmp_path / "data" / "notes.txt").write_text("not data\n")
    filenames = tfd.train.match_filenames_once("data/part-*.csv")
    assert filenames in tfd.local_variables() and filenames not in tfd.global_variables()
    files = tfd.train.string_input_producer(filenames, num_epochs=1, shuffle=False)
    reader = tfd.TextLineReader()
    keys, values = reader.read_up_to(files, 4)
    assert keys.shape == tfd.TensorShape([None])
    batch = tfd.train.batch([keys, values], batch_size=3, enqueue_many=True,
                            allow_smaller_final_batch=True)
    with tfd.Session(io_dirs=[str(tmp_path)]) as sess:
        sess.run(tfd.local_variables_initializer())
        assert [f.decode() for f in sess.run(filenames)] == sorted(lines)
        got = drain(sess, batch)
        assert sess.run(reader.num_records_produced()) == 8
    keys_read = [k.decode() for b in got for k in b[0]]
    values_read = [v.decode() for b in got for v in b[1]]
    want = [(n, line) for n in sorted(lines) for line in lines[n]]
    assert values_read == [line for _, line in want]
    assert keys_read == ["%s:%d" % (n, i + 1) for n in sorted(lines) for i in range(len(lines[n]))]


def test_read_up_to_takes_at_most_one_file_per_read_and_refuses_a_bad_count(tmp_path):
    for name, n in (("a.txt", 3), ("b.txt", 2)):
        (tmp_path / name).write_text("".join("%s%d\n" % (name[0], i) for i in range(n)))
    files = tfd.train.string_input_producer(["a.txt", "b.txt"], num_epochs=1, shuffle=False)
    count = tfd.placeholder(tfd.int64, [])
    _, values = tfd.TextLineReader().read_up_to(files, count)
    with tfd.Session(io_dirs=[str(tmp_path)]) as sess:
        sess.run(tfd.local_variables_initializer())
        coord = tfd.train.Coordinator()
        threads = tfd.train.start_queue_runners(sess, coord)
        with pytest.raises(tfd.errors.InvalidArgumentError, match="num_records"):
            sess.run(values, {count: 0})
        assert sess.run(values, {count: 2}).tolist() == [b"a0", b"a1"]
        assert sess.run(values, {count: 2}).tolist() == [b"a2"]  # a's end
        assert sess.run(values, {count: 5}).tolist() == [b"b0", b"b1"]
        with pytest.raises(tfd.errors.OutOfRangeError):
            sess.run(values, {count: 1})
        coord.request_stop()
        coord.join(threads)


def test_matching_files_within_io_dirs(tmp_path):
    for name in ("x1.rec", "x2.rec", "y.rec"):
        (tmp_path / name).write_bytes(b"")
    found = tfd.matching_files(["x*.rec", "y.rec"])
    outside = tfd.io.matching_files("/etc/*")
    with tfd.Session(io_dirs=[str(tmp_path)]) as sess:
        assert sess.run(found).tolist() == [b"x1.rec", b"x2.rec", b"y.rec"]
        with pytest.raises(tfd.errors.InvalidArgumentError, match="outside the allowed"):
            sess.run(outside)
    v = tfd.Variable(tfd.constant([1, 2]), validate_shape=False,
                     collections=[tfd.GraphKeys.LOCAL_VARIABLES, "mine"])
    assert v.shape == tfd.TensorShape(None) and tfd.get_collection("mine") == [v]
    with pytest.raises(ValueError, match="GLOBAL_VARIABLES"):
        tfd.Variable(tfd.constant(1), collections=["mine"])
