"""TF1's TFRecord files from Python: tf.python_io.TFRecordWriter and
tf_record_iterator (also as tfd.io.*), the format tfd.TFRecordReader reads
in a graph. Each record is framed by its length and CRC-32C checksums,
little-endian, as TensorFlow writes them; compression is not supported.

    with tfd.python_io.TFRecordWriter("data.tfrecord") as w:
        w.write(b"one record")
    records = list(tfd.python_io.tf_record_iterator("data.tfrecord"))
"""
import os
import struct
import types

from . import _tfd, errors

__all__ = ["TFRecordWriter", "tf_record_iterator", "TFRecordOptions", "TFRecordCompressionType"]


class TFRecordCompressionType:
    NONE, ZLIB, GZIP = 0, 1, 2


class TFRecordOptions:
    """TF1's; only no compression is supported."""

    def __init__(self, compression_type=None):
        self.compression_type = compression_type


def _check_options(options):
    kind = getattr(options, "compression_type", options)
    if kind not in (None, "", TFRecordCompressionType.NONE):
        raise ValueError("compressed TFRecord files are not supported, got compression %r"
                         % (kind,))


class TFRecordWriter:
    """Writes records (bytes) to a new file at `path`, framed as TF's."""

    def __init__(self, path, options=None):
        _check_options(options)
        self._file = open(path, "wb")

    def write(self, record):
        if isinstance(record, str):
            record = record.encode()
        length = struct.pack("<Q", len(record))
        self._file.write(length + struct.pack("<I", _tfd.masked_crc32c(length)) + record
                         + struct.pack("<I", _tfd.masked_crc32c(record)))

    def flush(self):
        self._file.flush()

    def close(self):
        self._file.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def tf_record_iterator(path, options=None):
    """The records of the TFRecord file at `path`, in order; DataLossError
    naming the offset of a record cut short or failing a checksum."""
    _check_options(options)
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        while True:
            at = f.tell()
            header = f.read(12)
            if not header:
                return
            length_bytes, crc = header[:8], header[8:]
            if len(header) < 12 or struct.unpack("<I", crc)[0] != _tfd.masked_crc32c(length_bytes):
                raise errors.DataLossError("TFRecord at offset %d of %s: a damaged length"
                                           % (at, path))
            (length,) = struct.unpack("<Q", length_bytes)
            if length > size - f.tell() - 4:
                raise errors.DataLossError("TFRecord at offset %d of %s: %d bytes of data run "
                                           "past the file" % (at, path, length))
            data, footer = f.read(length), f.read(4)
            if (len(data) < length or len(footer) < 4
                    or struct.unpack("<I", footer)[0] != _tfd.masked_crc32c(data)):
                raise errors.DataLossError("TFRecord at offset %d of %s: damaged data"
                                           % (at, path))
            yield data


python_io = types.ModuleType("tfd.python_io", "TF1's tf.python_io: TFRecord files.")
python_io.TFRecordWriter = TFRecordWriter
python_io.tf_record_iterator = tf_record_iterator
python_io.TFRecordOptions = TFRecordOptions
python_io.TFRecordCompressionType = TFRecordCompressionType
