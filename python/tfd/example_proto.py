"""TF1's tf.train.Example, SequenceExample and their parts, written and
read as protobuf's wire bytes without the protobuf package: what a
TFRecord of features holds and tfd.parse_example (or
parse_single_sequence_example) reads (kernels/io/example_proto.h).

    ex = tfd.train.Example(features=tfd.train.Features(feature={
        "label": tfd.train.Feature(int64_list=tfd.train.Int64List(value=[3])),
        "pixels": tfd.train.Feature(float_list=tfd.train.FloatList(value=[0.1, 0.2])),
    }))
    writer.write(ex.SerializeToString())
    tfd.train.Example.FromString(record).features.feature["label"].int64_list.value

Reading follows protobuf's rules: repeated numbers packed or not, unknown
fields skipped, a later value of a field (or map key) winning; bytes that
are not a message raise DecodeError (protobuf's message.DecodeError).
"""
import struct

__all__ = ["BytesList", "FloatList", "Int64List", "Feature", "Features", "Example",
           "FeatureList", "FeatureLists", "SequenceExample", "DecodeError"]


class DecodeError(ValueError):
    """Bytes that are not the message they were read as."""


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


def _read_varint(data, at):
    value, shift = 0, 0
    while True:
        if at >= len(data) or shift > 63:
            raise DecodeError("a varint runs past its message or past 64 bits")
        byte = data[at]
        value |= (byte & 0x7f) << shift
        at, shift = at + 1, shift + 7
        if not byte & 0x80:
            return value & ((1 << 64) - 1), at


def _fields(data):
    """(number, wire type, value) of each field of a message: an int for a
    varint, bytes for the rest."""
    data, at = bytes(data), 0
    while at < len(data):
        key, at = _read_varint(data, at)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, at = _read_varint(data, at)
        elif wire == 2:
            n, at = _read_varint(data, at)
            if n > len(data) - at:
                raise DecodeError("field %d's %d bytes run past its message" % (number, n))
            value, at = data[at:at + n], at + n
        elif wire in (1, 5):
            n = 8 if wire == 1 else 4
            if n > len(data) - at:
                raise DecodeError("field %d runs past its message" % number)
            value, at = data[at:at + n], at + n
        else:
            raise DecodeError("field %d has wire type %d, which no Example uses" % (number, wire))
        if number == 0:
            raise DecodeError("a field numbered 0")
        yield number, wire, value


def _int64(u):
    return u - (1 << 64) if u >= 1 << 63 else u


def _map_entries(mapping):
    """A protobuf map<string, message> as its field 1: one entry per key,
    the key (1) and the message (2)."""
    return b"".join(_field(1, _field(1, name.encode()) + _field(2, m.SerializeToString()))
                    for name, m in mapping.items())


def _map_entry(entry, cls, what):
    """(key, a `cls` message) of one map entry's bytes; DecodeError naming
    `what` for a key that is not UTF-8."""
    name, message = b"", cls()
    for n, w, v in _fields(entry):
        if n == 1 and w == 2:
            name = v
        elif n == 2 and w == 2:
            message = cls.FromString(v)
    try:
        return name.decode(), message
    except UnicodeDecodeError:
        raise DecodeError("a %s name that is not UTF-8: %r" % (what, name)) from None


class _Message:
    """ParseFromString, FromString and == for the classes below, each of
    which says how to merge one field (_merge_field) and what it holds
    (_state)."""

    def ParseFromString(self, data):
        """Replaces what this message holds with what `data` says; its length."""
        self.__init__()
        for number, wire, value in _fields(data):
            self._merge_field(number, wire, value)
        return len(data)

    @classmethod
    def FromString(cls, data):
        message = cls()
        message.ParseFromString(data)
        return message

    def __eq__(self, other):
        return type(self) is type(other) and self._state() == other._state()

    def __repr__(self):
        return "%s(%r)" % (type(self).__name__, self._state())


class BytesList(_Message):
    def __init__(self, value=()):
        self.value = [v.encode() if isinstance(v, str) else bytes(v) for v in value]

    def SerializeToString(self):
        return b"".join(_field(1, v) for v in self.value)

    def _merge_field(self, number, wire, value):
        if number == 1 and wire == 2:
            self.value.append(value)

    def _state(self):
        return self.value


class FloatList(_Message):
    def __init__(self, value=()):
        self.value = [float(v) for v in value]

    def SerializeToString(self):
        if not self.value:
            return b""
        return _field(1, struct.pack("<%df" % len(self.value), *self.value))

    def _merge_field(self, number, wire, value):
        if number != 1:
            return
        if wire == 2 and len(value) % 4:
            raise DecodeError("a packed FloatList of %d bytes, not a multiple of 4" % len(value))
        if wire in (2, 5):
            self.value.extend(struct.unpack("<%df" % (len(value) // 4), value))

    def _state(self):
        return self.value


class Int64List(_Message):
    def __init__(self, value=()):
        self.value = [int(v) for v in value]

    def SerializeToString(self):
        if not self.value:
            return b""
        return _field(1, b"".join(_varint(v) for v in self.value))

    def _merge_field(self, number, wire, value):
        if number != 1:
            return
        if wire == 0:
            self.value.append(_int64(value))
        elif wire == 2:
            at = 0
            while at < len(value):
                v, at = _read_varint(value, at)
                self.value.append(_int64(v))

    def _state(self):
        return self.value


class Feature(_Message):
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

    _KINDS = {1: ("bytes_list", BytesList), 2: ("float_list", FloatList),
              3: ("int64_list", Int64List)}

    def _merge_field(self, number, wire, value):
        if number not in self._KINDS or wire != 2:
            return
        name, cls = self._KINDS[number]
        kept = getattr(self, name) if self._set is not None and self._set[0] == number else None
        merged = kept if kept is not None else cls()
        for field in _fields(value):  # a repeat of the same kind merges into it, as protobuf's
            merged._merge_field(*field)
        self.__init__(**{name: merged})

    def _state(self):
        return None if self._set is None else (self._set[0], self._set[1]._state())


class Features(_Message):
    """A map from feature names to tfd.train.Feature."""

    def __init__(self, feature=None):
        self.feature = dict(feature or {})

    def SerializeToString(self):
        return _map_entries(self.feature)

    def _merge_field(self, number, wire, value):
        if number == 1 and wire == 2:
            name, feature = _map_entry(value, Feature, "feature")
            self.feature[name] = feature

    def _state(self):
        return {name: f._state() for name, f in self.feature.items()}


class Example(_Message):
    def __init__(self, features=None):
        self.features = features if features is not None else Features()

    def SerializeToString(self):
        return _field(1, self.features.SerializeToString())

    def _merge_field(self, number, wire, value):
        if number == 1 and wire == 2:
            for field in _fields(value):  # repeats merge, as protobuf's
                self.features._merge_field(*field)

    def _state(self):
        return self.features._state()


class FeatureList(_Message):
    """A sequence of tfd.train.Feature, one per step."""

    def __init__(self, feature=None):
        self.feature = list(feature or [])

    def SerializeToString(self):
        return b"".join(_field(1, f.SerializeToString()) for f in self.feature)

    def _merge_field(self, number, wire, value):
        if number == 1 and wire == 2:
            self.feature.append(Feature.FromString(value))

    def _state(self):
        return [f._state() for f in self.feature]


class FeatureLists(_Message):
    """A map from feature list names to tfd.train.FeatureList."""

    def __init__(self, feature_list=None):
        self.feature_list = dict(feature_list or {})

    def SerializeToString(self):
        return _map_entries(self.feature_list)

    def _merge_field(self, number, wire, value):
        if number == 1 and wire == 2:
            name, feature_list = _map_entry(value, FeatureList, "feature list")
            self.feature_list[name] = feature_list

    def _state(self):
        return {name: fl._state() for name, fl in self.feature_list.items()}


class SequenceExample(_Message):
    """Per-example `context` features and per-step `feature_lists`."""

    def __init__(self, context=None, feature_lists=None):
        self.context = context if context is not None else Features()
        self.feature_lists = feature_lists if feature_lists is not None else FeatureLists()

    def SerializeToString(self):
        return (_field(1, self.context.SerializeToString())
                + _field(2, self.feature_lists.SerializeToString()))

    def _merge_field(self, number, wire, value):
        if wire != 2 or number not in (1, 2):
            return
        part = self.context if number == 1 else self.feature_lists
        for field in _fields(value):  # repeats merge, as protobuf's
            part._merge_field(*field)

    def _state(self):
        return self.context._state(), self.feature_lists._state()
