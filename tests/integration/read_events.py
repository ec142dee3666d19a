#!/usr/bin/python3
"""Reads a TensorBoard event file the way TensorBoard does, without TensorFlow.

Usage: read_events.py FILE

Each TFRecord's length and data are checked against their masked CRC-32C
(computed here, independently of tfd's C++), and each record is parsed as a
tensorflow.Event with Debian's python3-protobuf, from descriptors built here
with the field numbers of TensorFlow's event.proto and summary.proto.
Prints one JSON object: {"file_version": ..., "events": [{"step": ...,
"wall_time": ..., "scalars": {TAG: VALUE}}]}. Exits 1 naming the first
record that is cut short or fails its checksum.
"""
import json
import struct
import sys

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory


def crc32c_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


TABLE = crc32c_table()


def masked_crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    c ^= 0xFFFFFFFF
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def event_class():
    f = descriptor_pb2.FileDescriptorProto(name="event_subset.proto", package="tensorflow")
    T = descriptor_pb2.FieldDescriptorProto

    def message(name, fields):
        m = f.message_type.add(name=name)
        for field_name, number, kind, label, type_name in fields:
            field = m.field.add(name=field_name, number=number, type=kind, label=label)
            if type_name:
                field.type_name = type_name
        return m

    opt, rep = T.LABEL_OPTIONAL, T.LABEL_REPEATED
    message("SummaryValue", [("tag", 1, T.TYPE_STRING, opt, None),
                             ("simple_value", 2, T.TYPE_FLOAT, opt, None)])
    message("Summary", [("value", 1, T.TYPE_MESSAGE, rep, ".tensorflow.SummaryValue")])
    message("Event", [("wall_time", 1, T.TYPE_DOUBLE, opt, None),
                      ("step", 2, T.TYPE_INT64, opt, None),
                      ("file_version", 3, T.TYPE_STRING, opt, None),
                      ("summary", 5, T.TYPE_MESSAGE, opt, ".tensorflow.Summary")])
    pool = descriptor_pool.DescriptorPool()
    pool.Add(f)
    descriptor = pool.FindMessageTypeByName("tensorflow.Event")
    if hasattr(message_factory, "GetMessageClass"):
        return message_factory.GetMessageClass(descriptor)
    return message_factory.MessageFactory(pool).GetPrototype(descriptor)


def main(path):
    Event = event_class()
    data = open(path, "rb").read()
    out = {"file_version": None, "events": []}
    at, index = 0, 0
    while at < len(data):
        if len(data) - at < 12:
            print("record %d: %d bytes left, a header needs 12" % (index, len(data) - at))
            return 1
        header = data[at:at + 8]
        (length,) = struct.unpack("<Q", header)
        (length_crc,) = struct.unpack("<I", data[at + 8:at + 12])
        if masked_crc32c(header) != length_crc:
            print("record %d: the length's checksum is wrong" % index)
            return 1
        body = data[at + 12:at + 12 + length]
        if len(body) != length or len(data) < at + 16 + length:
            print("record %d: claims %d bytes, the file ends first" % (index, length))
            return 1
        (body_crc,) = struct.unpack("<I", data[at + 12 + length:at + 16 + length])
        if masked_crc32c(body) != body_crc:
            print("record %d: the data's checksum is wrong" % index)
            return 1
        event = Event()
        event.ParseFromString(body)
        if event.file_version:
            out["file_version"] = event.file_version
        else:
            out["events"].append({
                "step": event.step,
                "wall_time": event.wall_time,
                "scalars": {v.tag: v.simple_value for v in event.summary.value},
            })
        at += 16 + length
        index += 1
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
