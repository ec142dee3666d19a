"""TF1's tf.Summary and tf.HistogramProto, the values TensorBoard reads
from an event file, written and read as protobuf's wire bytes
(common/summary_proto.h holds the same schema for the summary ops):

    s = tfd.Summary(value=[tfd.Summary.Value(tag="accuracy", simple_value=0.93)])
    tfd.Summary.FromString(sess.run(images)).value[0].image.encoded_image_string  # a PNG
    writer.add_summary(s, step)
    tfd.Summary.FromString(sess.run(merged)).value[0].simple_value

and the graph TensorBoard draws: a tensorflow.GraphDef of the graph's
nodes (name, op, inputs, device), which tfd.summary.FileWriter writes.
"""
import struct

from .example_proto import _field, _Message, _varint

__all__ = ["HistogramProto", "Summary"]


def _double(number, x):
    return bytes([number << 3 | 1]) + struct.pack("<d", x)


def _doubles(data, wire):
    """A repeated double field's values: packed (wire type 2) or one."""
    return list(struct.unpack("<%dd" % (len(data) // 8), data)) if wire == 2 else [
        struct.unpack("<d", data)[0]]


class HistogramProto(_Message):
    """bucket[i] counts the values v with bucket_limit[i - 1] <= v <
    bucket_limit[i]."""

    _SCALARS = ("min", "max", "num", "sum", "sum_squares")

    def __init__(self, min=0.0, max=0.0, num=0.0, sum=0.0,  # noqa: A002 (the proto's names)
                 sum_squares=0.0, bucket_limit=(), bucket=()):
        self.min, self.max, self.num, self.sum = float(min), float(max), float(num), float(sum)
        self.sum_squares = float(sum_squares)
        self.bucket_limit, self.bucket = [float(x) for x in bucket_limit], [float(x) for x in bucket]

    def SerializeToString(self):
        out = b"".join(_double(i + 1, getattr(self, n)) for i, n in enumerate(self._SCALARS))
        return (out + _field(6, struct.pack("<%dd" % len(self.bucket_limit), *self.bucket_limit))
                + _field(7, struct.pack("<%dd" % len(self.bucket), *self.bucket)))

    def _merge_field(self, number, wire, value):
        if 1 <= number <= 5 and wire == 1:
            setattr(self, self._SCALARS[number - 1], struct.unpack("<d", value)[0])
        elif number in (6, 7) and wire in (1, 2):
            (self.bucket_limit if number == 6 else self.bucket).extend(_doubles(value, wire))

    def _state(self):
        return tuple(getattr(self, n) for n in self._SCALARS) + (self.bucket_limit, self.bucket)


def _varint_field(number, n):
    return _varint(number << 3) + _varint(n)


class _Image(_Message):
    """An image summary's value: its size, its colorspace (the channels: 1
    gray, 3 RGB, 4 RGBA) and the PNG."""

    def __init__(self, height=0, width=0, colorspace=0, encoded_image_string=b""):
        self.height, self.width, self.colorspace = int(height), int(width), int(colorspace)
        self.encoded_image_string = bytes(encoded_image_string)

    def SerializeToString(self):
        return (_varint_field(1, self.height) + _varint_field(2, self.width)
                + _varint_field(3, self.colorspace) + _field(4, self.encoded_image_string))

    def _merge_field(self, number, wire, value):
        if 1 <= number <= 3 and wire == 0:
            setattr(self, ("height", "width", "colorspace")[number - 1], value)
        elif number == 4 and wire == 2:
            self.encoded_image_string = value

    def _state(self):
        return self.height, self.width, self.colorspace, self.encoded_image_string


class _Value(_Message):
    """One summary value: its tag and one of a simple_value (a float), a
    histo (a HistogramProto) or an image."""

    _KINDS = ("simple_value", "histo", "image")

    def __init__(self, tag="", simple_value=None, histo=None, image=None, node_name=""):
        self.tag, self.node_name = tag, node_name
        self.simple_value = None if simple_value is None else float(simple_value)
        self.histo, self.image = histo, image
        if sum(getattr(self, k) is not None for k in self._KINDS) > 1:
            raise ValueError("a Summary.Value holds one of simple_value, histo and image")

    def HasField(self, name):  # noqa: N802 (protobuf's name)
        return getattr(self, name, None) is not None

    def SerializeToString(self):
        out = _field(1, self.tag.encode()) if self.tag else b""
        if self.simple_value is not None:
            out += bytes([2 << 3 | 5]) + struct.pack("<f", self.simple_value)
        if self.image is not None:
            out += _field(4, self.image.SerializeToString())
        if self.histo is not None:
            out += _field(5, self.histo.SerializeToString())
        return out + (_field(7, self.node_name.encode()) if self.node_name else b"")

    def _merge_field(self, number, wire, value):
        kind = {(2, 5): "simple_value", (4, 2): "image", (5, 2): "histo"}.get((number, wire))
        if kind is not None:  # a oneof: the last one set is the one held
            for k in self._KINDS:
                setattr(self, k, None)
        if number == 1 and wire == 2:
            self.tag = value.decode()
        elif kind == "simple_value":
            self.simple_value = struct.unpack("<f", value)[0]
        elif kind == "image":
            self.image = _Image.FromString(value)
        elif kind == "histo":
            self.histo = HistogramProto.FromString(value)
        elif number == 7 and wire == 2:
            self.node_name = value.decode()

    def _state(self):
        return (self.tag, self.simple_value, self.histo and self.histo._state(),
                self.image and self.image._state())


class Summary(_Message):
    """The values of one summary write, as sess.run of a summary op (or
    tfd.summary.merge_all()) returns them serialized."""

    Value = _Value
    Image = _Image

    def __init__(self, value=None):
        self.value = list(value or [])

    def SerializeToString(self):
        return b"".join(_field(1, v.SerializeToString()) for v in self.value)

    def _merge_field(self, number, wire, value):
        if number == 1 and wire == 2:
            self.value.append(_Value.FromString(value))

    def _state(self):
        return [v._state() for v in self.value]


def graph_def_bytes(nodes):
    """A serialized tensorflow.GraphDef of `nodes`, (name, op, inputs,
    device) each as tfd's graph builder lists them: NodeDef.name (1), op
    (2), input (3, "node:port", "^node" for a control input) and device
    (4); enough for TensorBoard to draw the graph."""
    out = []
    for name, op, inputs, device in nodes:
        node = _field(1, name.encode()) + _field(2, op.encode())
        node += b"".join(_field(3, i.encode()) for i in inputs)
        out.append(_field(1, node + (_field(4, device.encode()) if device else b"")))
    return b"".join(out)


def serialized(summary):
    """The bytes of a summary given as bytes (what sess.run of a summary op
    returns) or as a message with SerializeToString (a tfd.Summary)."""
    if isinstance(summary, (bytes, bytearray)):
        return bytes(summary)
    if hasattr(summary, "SerializeToString"):
        return summary.SerializeToString()
    if hasattr(summary, "item") and isinstance(getattr(summary, "item")(), bytes):
        return summary.item()  # a numpy scalar of bytes
    raise TypeError("a summary is the bytes a summary op returns or a tfd.Summary, not %r"
                    % (summary,))

