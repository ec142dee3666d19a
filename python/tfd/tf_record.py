"""TF1's TFRecord files from Python: tf.python_io.TFRecordWriter and
tf_record_iterator (also as tfd.io.*), the format tfd.TFRecordReader reads
in a graph. Each record is framed by its length and CRC-32C checksums,
little-endian, as TensorFlow writes them; with TFRecordOptions("GZIP") or
("ZLIB") the whole file is one compressed stream, as TF's.

    with tfd.python_io.TFRecordWriter("data.tfrecord") as w:
        w.write(b"one record")
    records = list(tfd.python_io.tf_record_iterator("data.tfrecord"))
"""
import struct
import types
import zlib

from . import _tfd, errors

__all__ = ["TFRecordWriter", "tf_record_iterator", "TFRecordOptions", "TFRecordCompressionType"]

# Compressed bytes read at a time.
_CHUNK = 256 << 10


class TFRecordCompressionType:
    NONE, ZLIB, GZIP = 0, 1, 2


_NAMES = {TFRecordCompressionType.NONE: "", TFRecordCompressionType.ZLIB: "ZLIB",
          TFRecordCompressionType.GZIP: "GZIP"}
# zlib's window bits: the largest window, with a zlib or (16 more) a gzip frame.
_WBITS = {"ZLIB": zlib.MAX_WBITS, "GZIP": 16 + zlib.MAX_WBITS}


class TFRecordOptions:
    """TF1's: compression_type is a TFRecordCompressionType or its name
    ("", "ZLIB", "GZIP"); compression_level, zlib's (-1: its default)."""

    def __init__(self, compression_type=None, compression_level=-1):
        self.compression_type = compression_type
        self.compression_level = compression_level

    @classmethod
    def get_compression_type_string(cls, options):
        """"", "ZLIB" or "GZIP" for `options` (TFRecordOptions, a type or a
        name, or None); ValueError for anything else."""
        kind = options.compression_type if isinstance(options, TFRecordOptions) else options
        if kind is None:
            return ""
        name = _NAMES.get(kind) if type(kind) is int else kind
        if name not in ("", "ZLIB", "GZIP"):
            raise ValueError('compression_type must be "", "ZLIB" or "GZIP" (or a '
                             'TFRecordCompressionType), not %r' % (kind,))
        return name


class TFRecordWriter:
    """Writes records (bytes) to a new file at `path`, framed as TF's and
    compressed as `options` (TFRecordOptions or a compression name) say."""

    def __init__(self, path, options=None):
        name = TFRecordOptions.get_compression_type_string(options)
        level = options.compression_level if isinstance(options, TFRecordOptions) else -1
        self._deflate = zlib.compressobj(level, zlib.DEFLATED, _WBITS[name]) if name else None
        self._file = open(path, "wb")

    def write(self, record):
        if isinstance(record, str):
            record = record.encode()
        length = struct.pack("<Q", len(record))
        self._put(length + struct.pack("<I", _tfd.masked_crc32c(length)) + record
                  + struct.pack("<I", _tfd.masked_crc32c(record)))

    def _put(self, data):
        self._file.write(self._deflate.compress(data) if self._deflate else data)

    def flush(self):
        """What was written so far reaches the file (a compressed one
        readable up to here)."""
        if self._deflate:
            self._file.write(self._deflate.flush(zlib.Z_SYNC_FLUSH))
        self._file.flush()

    def close(self):
        if self._file.closed:
            return
        try:
            if self._deflate:
                self._file.write(self._deflate.flush(zlib.Z_FINISH))
        finally:
            self._file.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class _Inflating:
    """read(n) of a compressed file's inflated bytes: fewer only at its end.
    A damaged stream, or one cut short, is DataLossError; a gzip file of
    several members reads as their concatenation, as gunzip does."""

    def __init__(self, f, name, path):
        self._f, self._name, self._path = f, name, path
        self._inflate = zlib.decompressobj(_WBITS[name])
        self._pending = b""

    def read(self, n):
        parts, have = [self._pending], len(self._pending)
        while have < n:
            more = self._more(n - have)
            if not more:
                break
            parts.append(more)
            have += len(more)
        data = b"".join(parts)
        self._pending = data[n:]
        return data[:n]

    def _more(self, want):
        """Some inflated bytes (at most about `want` more than zlib holds
        back), or b"" at the end of the data."""
        while True:
            if self._inflate.eof:
                data = self._inflate.unused_data or self._f.read(_CHUNK)
                if not data:
                    return b""
                if self._name != "GZIP":
                    raise errors.DataLossError("%s: bytes follow the end of the compressed data"
                                               % self._path)
                self._inflate = zlib.decompressobj(_WBITS[self._name])  # the next member
            else:
                data = self._inflate.unconsumed_tail or self._f.read(_CHUNK)
                if not data:
                    raise errors.DataLossError("%s: the compressed data is cut short" % self._path)
            out = self._inflate_feed(data, want)
            if out:
                return out

    def _inflate_feed(self, data, want):
        try:
            return self._inflate.decompress(data, max(want, _CHUNK))
        except zlib.error as e:
            raise errors.DataLossError("%s: the compressed data is damaged (%s)"
                                       % (self._path, e)) from None


def tf_record_iterator(path, options=None):
    """The records of the TFRecord file at `path`, in order, inflated as
    `options` say; DataLossError naming the offset of a record cut short or
    failing a checksum (in the inflated data for a compressed file)."""
    name = TFRecordOptions.get_compression_type_string(options)
    with open(path, "rb") as f:
        source = _Inflating(f, name, path) if name else f
        at = 0
        while True:
            header = source.read(12)
            if not header:
                return
            length_bytes, crc = header[:8], header[8:]
            if len(header) < 12 or struct.unpack("<I", crc)[0] != _tfd.masked_crc32c(length_bytes):
                raise errors.DataLossError("TFRecord at offset %d of %s: a damaged length"
                                           % (at, path))
            (length,) = struct.unpack("<Q", length_bytes)
            data, footer = _read_slices(source, length), source.read(4)
            if len(data) < length:
                raise errors.DataLossError("TFRecord at offset %d of %s: %d bytes of data run "
                                           "past the file" % (at, path, length))
            if len(footer) < 4 or struct.unpack("<I", footer)[0] != _tfd.masked_crc32c(data):
                raise errors.DataLossError("TFRecord at offset %d of %s: damaged data"
                                           % (at, path))
            at += 16 + length
            yield data


def _read_slices(source, length):
    """Up to `length` bytes, read in slices: a damaged length costs no more
    memory than the file holds."""
    parts, have = [], 0
    while have < length:
        part = source.read(min(length - have, 16 << 20))
        if not part:
            break
        parts.append(part)
        have += len(part)
    return b"".join(parts)


python_io = types.ModuleType("tfd.python_io", "TF1's tf.python_io: TFRecord files.")
python_io.TFRecordWriter = TFRecordWriter
python_io.tf_record_iterator = tf_record_iterator
python_io.TFRecordOptions = TFRecordOptions
python_io.TFRecordCompressionType = TFRecordCompressionType
