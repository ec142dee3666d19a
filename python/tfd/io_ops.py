"""TF1's readers and record decoders over the registry's reader ops
(kernels/io/reader_ops.cc, parsing_ops.cc): the input pipeline of
string_input_producer -> reader.read -> decode_csv / decode_raw ->
tfd.train.shuffle_batch.

    files = tfd.train.string_input_producer(["a.csv", "b.csv"], num_epochs=1)
    # (or the files a glob matches: tfd.train.match_filenames_once("data/part-*.csv"))
    key, line = tfd.TextLineReader(skip_header_lines=1).read(files)
    x, y = tfd.decode_csv(line, record_defaults=[[0.0], [0]])
    xs, ys = tfd.train.shuffle_batch([x, y], 32, capacity=1000, min_after_dequeue=100)

A reader is kept by the task its node is placed on and reads the files
there, within the task's io_dirs (`tfd --data_dir`, or tfd.Session's
io_dirs in one process); each read takes the next record, and the next
file name from the queue when a file is done. Once the queue is closed and
empty, a read is tfd.errors.OutOfRangeError, which ends a Coordinator's
loop as in TF1.
"""
import collections
import types

import numpy as np

from . import dtypes, framework, math_ops, tf_record
from .embedding_ops import SparseTensor
from .op_gen import raw_ops

__all__ = ["ReaderBase", "TextLineReader", "FixedLengthRecordReader", "TFRecordReader",
           "WholeFileReader", "IdentityReader", "decode_raw", "decode_csv", "matching_files",
           "FixedLenFeature", "FixedLenSequenceFeature", "VarLenFeature", "parse_example",
           "parse_single_example", "parse_single_sequence_example"]


class ReaderBase:
    """What TF1's readers share: read a record from a queue of file names,
    the counts, reset. `reader_ref` is the reader's handle."""

    def __init__(self, reader_ref):
        self._reader_ref = reader_ref

    @property
    def reader_ref(self):
        return self._reader_ref

    @property
    def supports_serialize(self):
        return False

    def read(self, queue, name=None):
        """(key, value): the next record, its file name taken from `queue` (a
        tfd queue of string scalars, or its queue_ref) when needed."""
        queue_ref = queue.queue_ref if hasattr(queue, "queue_ref") else queue
        return tuple(raw_ops.reader_read(self._reader_ref, queue_ref,
                                         name=name or "ReaderRead"))

    def read_up_to(self, queue, num_records, name=None):
        """(keys, values): string vectors of the next 1 to num_records
        records, as read takes them; fewer at the end of a file (a batch
        never spans two files), as TF1's. Batch them with
        tfd.train.batch(..., enqueue_many=True)."""
        queue_ref = queue.queue_ref if hasattr(queue, "queue_ref") else queue
        num_records = framework.convert_to_tensor(num_records, dtype=dtypes.int64)
        return tuple(raw_ops.reader_read_up_to(self._reader_ref, queue_ref, num_records,
                                               name=name or "ReaderReadUpTo"))

    def num_records_produced(self, name=None):
        return raw_ops.reader_num_records_produced(self._reader_ref,
                                                   name=name or "ReaderNumRecordsProduced")

    def num_work_units_completed(self, name=None):
        return raw_ops.reader_num_work_units_completed(
            self._reader_ref, name=name or "ReaderNumWorkUnitsCompleted")

    def reset(self, name=None):
        return raw_ops.reader_reset(self._reader_ref, name=name or "ReaderReset")


class TextLineReader(ReaderBase):
    """TF1's: a record per line of each file (without its newline), the
    first skip_header_lines of each file skipped; key "file:line"."""

    def __init__(self, skip_header_lines=None, name=None):
        super().__init__(raw_ops.text_line_reader(skip_header_lines=int(skip_header_lines or 0),
                                                  name=name or "TextLineReader"))


class FixedLengthRecordReader(ReaderBase):
    """TF1's: records of record_bytes between a header and a footer of each
    file (CIFAR-10's binary files); key "file:index". A file the records do
    not fill exactly is InvalidArgumentError. With hop_bytes, a record
    starts every hop_bytes (overlapping windows, or gaps), and the bytes
    after the last whole record are left, as TF1's. encoding (compressed
    files) is refused (ValueError)."""

    def __init__(self, record_bytes, header_bytes=None, footer_bytes=None, hop_bytes=None,
                 name=None, encoding=None):
        if encoding:
            raise ValueError("tfd.FixedLengthRecordReader: encoding is not supported, got %r"
                             % (encoding,))
        super().__init__(raw_ops.fixed_length_record_reader(
            record_bytes=int(record_bytes), header_bytes=int(header_bytes or 0),
            footer_bytes=int(footer_bytes or 0), hop_bytes=int(hop_bytes or 0),
            name=name or "FixedLengthRecordReader"))


class WholeFileReader(ReaderBase):
    """TF1's: each file one record, its key the file's name as queued."""

    def __init__(self, name=None):
        super().__init__(raw_ops.whole_file_reader(name=name or "WholeFileReader"))


class IdentityReader(ReaderBase):
    """TF1's: each string taken from the queue is one record, its key and
    its value; no file is opened."""

    def __init__(self, name=None):
        super().__init__(raw_ops.identity_reader(name=name or "IdentityReader"))


class TFRecordReader(ReaderBase):
    """TF1's: the records of TFRecord files (tfd.python_io.TFRecordWriter
    writes them), compressed as `options` (tfd.python_io.TFRecordOptions)
    say; key "file:offset". A record cut short or failing a checksum, or a
    damaged compressed file, is DataLossError and the rest of its file is
    skipped."""

    def __init__(self, name=None, options=None):
        compression = tf_record.TFRecordOptions.get_compression_type_string(options)
        super().__init__(raw_ops.tf_record_reader(compression_type=compression,
                                                  name=name or "TFRecordReader"))


def matching_files(pattern, name=None):
    """TF1's tf.matching_files: a string vector of the sorted names of the
    files matching the glob `pattern` (a string, or a vector of them):
    '*', '?' and '[...]' in any component of the path, none crossing a
    '/'. Matched where the op runs, within that task's io_dirs; names come
    back as the pattern writes them, and none is not an error."""
    return raw_ops.matching_files(framework.convert_to_tensor(pattern, dtype=dtypes.string),
                                  name=name or "MatchingFiles")


def decode_raw(input_bytes, out_type, little_endian=True, name=None):
    """TF1's tf.decode_raw: each string's bytes as out_type elements, a new
    last dimension; the strings must have one length."""
    return raw_ops.decode_raw(input_bytes, out_type=dtypes.as_dtype(out_type),
                              little_endian=bool(little_endian), name=name or "DecodeRaw")


def decode_csv(records, record_defaults, field_delim=",", use_quote_delim=True, name=None,
               na_value="", select_cols=None):
    """TF1's tf.decode_csv: a list of one tensor per column (those of
    select_cols, when given), each shaped like `records`. record_defaults
    has one entry per column, a list or tensor of one value (the column's
    dtype and what an empty field becomes) or of none (the field is
    required)."""
    defaults = [framework.convert_to_tensor(d) for d in record_defaults]
    if not defaults:
        raise ValueError("tfd.decode_csv: record_defaults must name at least one column")
    outputs = raw_ops.decode_csv(records, defaults, field_delim=field_delim,
                                 use_quote_delim=bool(use_quote_delim), na_value=na_value,
                                 select_cols=list(select_cols or []), name=name or "DecodeCSV")
    return list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]


class FixedLenFeature(collections.namedtuple("FixedLenFeature",
                                             ["shape", "dtype", "default_value"])):
    """TF1's: a feature of `shape` values of `dtype` (float32, int64 or
    string) in every example; without default_value it is required."""

    def __new__(cls, shape, dtype, default_value=None):
        return super().__new__(cls, shape, dtype, default_value)


class FixedLenSequenceFeature(collections.namedtuple(
        "FixedLenSequenceFeature", ["shape", "dtype", "allow_missing", "default_value"])):
    """TF1's: any number of blocks of `shape` values of `dtype` per example,
    parsed into a [batch, most blocks] + shape tensor, each example padded
    with default_value (a scalar; None pads with zeros or ""). parse_example
    needs allow_missing=True, as TF1's: a missing feature is no blocks."""

    def __new__(cls, shape, dtype, allow_missing=False, default_value=None):
        return super().__new__(cls, shape, dtype, allow_missing, default_value)


class VarLenFeature(collections.namedtuple("VarLenFeature", ["dtype"])):
    """TF1's: a feature of any number of values, parsed into a SparseTensor."""


def parse_example(serialized, features, name=None, example_names=None):
    """TF1's tf.parse_example: a [batch] vector of serialized
    tfd.train.Examples into a dict by feature name: for a FixedLenFeature
    a [batch] + shape tensor, for a FixedLenSequenceFeature a [batch, most
    blocks] + shape one, for a VarLenFeature a tfd.SparseTensor of [batch,
    longest]. A bad example is InvalidArgumentError naming it."""
    dense_kinds = (FixedLenFeature, FixedLenSequenceFeature)
    sparse = sorted(k for k, f in features.items() if isinstance(f, VarLenFeature))
    dense = sorted(k for k, f in features.items() if isinstance(f, dense_kinds))
    if len(sparse) + len(dense) != len(features):
        raise ValueError("tfd.parse_example: features must map names to FixedLenFeature, "
                         "FixedLenSequenceFeature or VarLenFeature, got %r" % (features,))
    defaults = [_dense_default(k, features[k]) for k in dense]
    outputs = raw_ops.parse_example(
        serialized, example_names if example_names is not None else [],
        [framework.constant(k) for k in sparse], [framework.constant(k) for k in dense],
        defaults, sparse_types=[dtypes.as_dtype(features[k].dtype) for k in sparse],
        dense_shapes=[_dense_shape(features[k]) for k in dense],
        name=name or "ParseExample")
    outputs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
    n = len(sparse)
    parsed = {k: SparseTensor(outputs[i], outputs[n + i], outputs[2 * n + i])
              for i, k in enumerate(sparse)}
    parsed.update({k: outputs[3 * n + i] for i, k in enumerate(dense)})
    return parsed


def _dense_shape(feature):
    """The ParseExample dense_shape of a feature: its shape, after a -1
    for a sequence feature's blocks."""
    shape = framework._shape_arg(feature.shape)
    return [-1] + list(shape) if isinstance(feature, FixedLenSequenceFeature) else shape


def _dense_default(key, feature):
    """The ParseExample default of a dense feature: no values when it is
    required (or, for a sequence feature, pads with zeros), else its
    default_value in its shape (a sequence feature's, one value)."""
    dtype = dtypes.as_dtype(feature.dtype)
    if isinstance(feature, FixedLenSequenceFeature) and not feature.allow_missing:
        raise ValueError("tfd.parse_example: FixedLenSequenceFeature '%s' needs "
                         "allow_missing=True, as TF1's" % key)
    if feature.default_value is None:
        return framework.constant(np.zeros([0], dtype.as_numpy_dtype), dtype=dtype)
    if isinstance(feature, FixedLenSequenceFeature):
        value = np.asarray(feature.default_value, dtype.as_numpy_dtype)
        if value.ndim != 0:
            raise ValueError("tfd.parse_example: the default_value of FixedLenSequenceFeature "
                             "'%s' pads, and must be a scalar, got %r" % (key, value))
    else:
        value = np.broadcast_to(np.asarray(feature.default_value, dtype.as_numpy_dtype),
                                framework._shape_arg(feature.shape))
    return framework.constant(value, dtype=dtype, name="default_" + key.replace("/", "_"))


def parse_single_example(serialized, features, name=None, example_names=None):
    """TF1's: parse_example of one serialized Example (a scalar): dense
    features of their shape, sparse ones as SparseTensors of [longest]."""
    batch = parse_example(math_ops.reshape(serialized, [1]), features, name=name,
                          example_names=example_names)
    single = {}
    for k, v in batch.items():
        if isinstance(v, SparseTensor):
            single[k] = SparseTensor(v.indices[:, 1:], v.values, v.dense_shape[1:])
        else:
            single[k] = v[0]
    return single


def parse_single_sequence_example(serialized, context_features=None, sequence_features=None,
                                  example_name=None, name=None):
    """TF1's: one serialized tf.train.SequenceExample (a scalar) into
    (context, feature_lists) dicts. context_features are read as
    parse_single_example reads an Example's; sequence_features map names
    to a FixedLenSequenceFeature (a [steps] + shape tensor, each step
    exactly shape's values; a missing list is InvalidArgumentError unless
    allow_missing, then no steps) or a VarLenFeature (a SparseTensor of
    [steps, longest])."""
    context_features = dict(context_features or {})
    sequence_features = dict(sequence_features or {})
    if not context_features and not sequence_features:
        raise ValueError("tfd.parse_single_sequence_example: no features given")
    sparse = sorted(k for k, f in sequence_features.items() if isinstance(f, VarLenFeature))
    dense = sorted(k for k, f in sequence_features.items()
                   if isinstance(f, FixedLenSequenceFeature))
    if len(sparse) + len(dense) != len(sequence_features):
        raise ValueError("tfd.parse_single_sequence_example: sequence_features must map names "
                         "to FixedLenSequenceFeature or VarLenFeature, got %r"
                         % (sequence_features,))
    with framework.name_scope(name or "ParseSingleSequenceExample"):
        context = {}
        if context_features:
            names = None if example_name is None else [example_name]
            context = parse_single_example(serialized, context_features, example_names=names)
        if not sequence_features:
            return context, {}
        missing = [k for k in dense if sequence_features[k].allow_missing]
        outputs = raw_ops.parse_feature_lists(
            serialized, example_name or "", [framework.constant(k) for k in sparse],
            [framework.constant(k) for k in dense],
            framework.constant(np.array(missing, dtype=object), dtype=dtypes.string),
            sparse_types=[dtypes.as_dtype(sequence_features[k].dtype) for k in sparse],
            Tdense=[dtypes.as_dtype(sequence_features[k].dtype) for k in dense],
            dense_shapes=[framework._shape_arg(sequence_features[k].shape) for k in dense],
            name="ParseFeatureLists")
    outputs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
    n = len(sparse)
    lists = {k: SparseTensor(outputs[i], outputs[n + i], outputs[2 * n + i])
             for i, k in enumerate(sparse)}
    lists.update({k: outputs[3 * n + i] for i, k in enumerate(dense)})
    return context, lists


io = types.ModuleType("tfd.io", "TF1's tf.io: the record decoders and TFRecord files.")
io.decode_raw = decode_raw
io.matching_files = matching_files
io.decode_csv = decode_csv
io.parse_example = parse_example
io.parse_single_example = parse_single_example
io.parse_single_sequence_example = parse_single_sequence_example
io.FixedLenFeature = FixedLenFeature
io.VarLenFeature = VarLenFeature
io.FixedLenSequenceFeature = FixedLenSequenceFeature
for _name in tf_record.__all__:
    setattr(io, _name, getattr(tf_record, _name))
