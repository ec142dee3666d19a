// The protocol buffer wire format, the little of it tfd reads and writes by
// hand: TF1's record and summary formats (tf.train.Example,
// tensorflow.Summary, tensorflow.Event) without a protobuf library.
//
//   std::string value;
//   proto_wire::PutBytes(value, 1, "loss");          // Value.tag
//   proto_wire::PutFixed(value, 2, 0.5f);            // Value.simple_value
//
//   TFD_RETURN_IF_ERROR(proto_wire::ForEachField(bytes, "tensorflow.Summary",
//       [&](uint64_t number, int wire, proto_wire::Reader& r) -> Status {
//         if (number != 1 || wire != proto_wire::kLength) return r.Skip(wire);
//         ...
//       }));
//
// Thread-safety: pure functions; a Reader is one thread's.
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace tfd::proto_wire {

enum Wire { kVarint = 0, kFixed64 = 1, kLength = 2, kFixed32 = 5 };

void PutVarint(std::string& out, uint64_t v);
inline void PutKey(std::string& out, uint64_t field, Wire wire) {
  PutVarint(out, (field << 3) | wire);
}
// A double as wire type 1, a float as 5, little endian (every host tfd
// builds for).
template <typename T>
void PutFixed(std::string& out, uint64_t field, T value) {
  static_assert(sizeof(T) == 8 || sizeof(T) == 4);
  PutKey(out, field, sizeof(T) == 8 ? kFixed64 : kFixed32);
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  out.append(bytes, sizeof(T));
}
// A length-delimited field: a string, bytes, a message, a packed list.
void PutBytes(std::string& out, uint64_t field, std::string_view value);

// A cursor over one message's bytes. Errors are INVALID_ARGUMENT "not a
// <what>: ..." naming the message the caller expected.
class Reader {
 public:
  Reader(std::string_view bytes, const char* what) : p_(bytes), what_(what) {}
  bool done() const { return p_.empty(); }

  StatusOr<uint64_t> Varint();
  StatusOr<std::string_view> Bytes(size_t n);
  StatusOr<std::string_view> Delimited();
  // Skips a field of wire type `wire` the schema does not name, as
  // protobuf skips unknown fields; groups (deprecated) are an error.
  Status Skip(int wire);
  // A reader of `bytes` (a nested message) naming the same message.
  Reader Nested(std::string_view bytes) const { return Reader(bytes, what_); }
  Status Bad(const std::string& why) const;

 private:
  std::string_view p_;
  const char* what_;
};

// Calls on_field(number, wire type, reader) for each field of `bytes`; the
// callee reads the field's value or skips it.
Status ForEachField(std::string_view bytes, const char* what,
                    const std::function<Status(uint64_t, int, Reader&)>& on_field);

}  // namespace tfd::proto_wire
