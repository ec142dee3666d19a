// Cap'n Proto frames as they cross a connection, for the stream tests: an
// rpc::Message (an Abort whose reason has `reason_bytes` characters) framed
// for a stream, about reason_bytes + 40 bytes in all.
#pragma once

#include <capnp/message.h>
#include <capnp/rpc.capnp.h>
#include <capnp/serialize.h>

#include <string>

namespace tfd::testing {

inline std::string Frame(size_t reason_bytes) {
  capnp::MallocMessageBuilder builder;
  builder.initRoot<capnp::rpc::Message>().initAbort().setReason(std::string(reason_bytes, 'x'));
  auto words = capnp::messageToFlatArray(builder);
  auto bytes = words.asBytes();
  return std::string(bytes.begin(), bytes.end());
}

}  // namespace tfd::testing
