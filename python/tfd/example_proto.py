"""TF1's tf.train.Example and its parts, written as protobuf's wire
bytes without the protobuf package: what a TFRecord of features holds and
tfd.parse_example reads (kernels/io/example_proto.h).

    ex = tfd.train.Example(features=tfd.train.Features(feature={
        "label": tfd.train.Feature(int64_list=tfd.train.Int64List(value=[3])),
        "pixels": tfd.train.Feature(float_list=tfd.train.FloatList(value=[0.1, 0.2])),
    }))
    writer.write(ex.SerializeToString())
"""
import struct

__all__ = ["BytesList", "FloatList", "Int64List", "Feature", "Features", "Example"]


def _varint(n):
    n &= (1 << 64) - 1  # a negative int64 as its two's complement, as protobuf does
    out = bytearray()
    while True:
        byte = n & 0x7f
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _field(number, payload):
    """A length-delimited field."""
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


class BytesList:
    def __init__(self, value=()):
        self.value = [v.encode() if isinstance(v, str) else bytes(v) for v in value]

    def SerializeToString(self):
        return b"".join(_field(1, v) for v in self.value)


class FloatList:
    def __init__(self, value=()):
        self.value = [float(v) for v in value]

    def SerializeToString(self):
        if not self.value:
            return b""
        return _field(1, struct.pack("<%df" % len(self.value), *self.value))


class Int64List:
    def __init__(self, value=()):
        self.value = [int(v) for v in value]

    def SerializeToString(self):
        if not self.value:
            return b""
        return _field(1, b"".join(_varint(v) for v in self.value))


class Feature:
    """One of bytes_list, float_list or int64_list (TF1's oneof)."""

    def __init__(self, bytes_list=None, float_list=None, int64_list=None):
        given = [(n, v) for n, v in ((1, bytes_list), (2, float_list), (3, int64_list))
                 if v is not None]
        if len(given) > 1:
            raise ValueError("a tfd.train.Feature holds one of bytes_list, float_list and "
                             "int64_list")
        self.bytes_list, self.float_list, self.int64_list = bytes_list, float_list, int64_list
        self._set = given[0] if given else None

    def SerializeToString(self):
        if self._set is None:
            return b""
        number, value = self._set
        return _field(number, value.SerializeToString())


class Features:
    """A map from feature names to tfd.train.Feature."""

    def __init__(self, feature=None):
        self.feature = dict(feature or {})

    def SerializeToString(self):
        return b"".join(_field(1, _field(1, name.encode()) + _field(2, f.SerializeToString()))
                        for name, f in self.feature.items())


class Example:
    def __init__(self, features=None):
        self.features = features if features is not None else Features()

    def SerializeToString(self):
        return _field(1, self.features.SerializeToString())
