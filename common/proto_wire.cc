// Protocol buffer wire format; see proto_wire.h.
#include "common/proto_wire.h"

namespace tfd::proto_wire {

void PutVarint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

void PutBytes(std::string& out, uint64_t field, std::string_view value) {
  PutKey(out, field, kLength);
  PutVarint(out, value.size());
  out += value;
}

StatusOr<uint64_t> Reader::Varint() {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (p_.empty()) return Bad("a varint runs past the end");
    const auto byte = static_cast<uint8_t>(p_.front());
    p_.remove_prefix(1);
    v |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) return v;
  }
  return Bad("a varint is longer than 10 bytes");
}

StatusOr<std::string_view> Reader::Bytes(size_t n) {
  if (n > p_.size()) return Bad("a field runs past the end");
  std::string_view out = p_.substr(0, n);
  p_.remove_prefix(n);
  return out;
}

StatusOr<std::string_view> Reader::Delimited() {
  TFD_ASSIGN_OR_RETURN(uint64_t n, Varint());
  return Bytes(n);
}

Status Reader::Skip(int wire) {
  switch (wire) {
    case kVarint:
      return Varint().status();
    case kFixed64:
      return Bytes(8).status();
    case kLength:
      return Delimited().status();
    case kFixed32:
      return Bytes(4).status();
    default:
      return Bad("a field has wire type " + std::to_string(wire) + " (groups are not read)");
  }
}

Status Reader::Bad(const std::string& why) const {
  return errors::InvalidArgument("not a ", what_, ": ", why);
}

Status ForEachField(std::string_view bytes, const char* what,
                    const std::function<Status(uint64_t, int, Reader&)>& on_field) {
  Reader r(bytes, what);
  while (!r.done()) {
    TFD_ASSIGN_OR_RETURN(uint64_t tag, r.Varint());
    TFD_RETURN_IF_ERROR(on_field(tag >> 3, static_cast<int>(tag & 7), r));
  }
  return OkStatus();
}

}  // namespace tfd::proto_wire
