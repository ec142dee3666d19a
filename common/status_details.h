// The typed details a Status carries beside its code and message, and their
// one wire encoding.
//
// Code decides on details, never on message text: which task an error is
// attributed to, which node (and op) failed, and an ErrorReason for the few
// causes that callers tell apart. The message still says the same in words.
//
// Across the wire (kj exception descriptions, schema text fields) details
// travel as one self-delimiting token, version 1:
//
//   tfd-details/1/<N>:<body>     N = body's length in bytes, decimal
//   body = { <key>=<len>:<value>; }   keys: task, node, op, reason (its name)
//
// e.g. "tfd-details/1/19:node=1:x;op=5:_Recv;". Every value is length-
// prefixed, so any bytes may appear in it; keys this tfd does not know are
// skipped, and a token of a later version is skipped whole (its length says
// where it ends), so a newer peer's details never break an older reader.
// Parsing never throws: anything malformed is "no details here".
//
//   StatusDetails d{.task = "/job:ps/replica:0/task:0"};
//   std::string wire = EncodeStatusDetails(d);
//   ParsedStatusDetails in = ParseStatusDetails(wire);  // in.details == d
//
// Thread-safety: values and pure functions.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace tfd {

// Why an error happened, where a caller acts on the cause. Only causes some
// code decides on belong here; add at the end (the wire carries the name).
enum class ErrorReason : int {
  kNone = 0,
  // The connection to the peer dropped (kj DISCONNECTED with no tfd code).
  kConnectionLost,
};
inline constexpr int kNumErrorReasons = 2;

// "NONE", "CONNECTION_LOST".
std::string_view ErrorReasonName(ErrorReason reason);
// Inverse of ErrorReasonName; nullopt for a name this tfd does not know.
std::optional<ErrorReason> ErrorReasonFromName(std::string_view name);

struct StatusDetails {
  // The task the error is attributed to, "/job:ps/replica:0/task:0"; empty
  // when none is.
  std::string task;
  // The node that failed and its op, when a node did; both empty otherwise.
  std::string node;
  std::string op;
  ErrorReason reason = ErrorReason::kNone;

  bool empty() const {
    return task.empty() && node.empty() && op.empty() && reason == ErrorReason::kNone;
  }
  bool operator==(const StatusDetails& other) const = default;
};

// The token above; empty for empty details.
std::string EncodeStatusDetails(const StatusDetails& details);

struct ParsedStatusDetails {
  StatusDetails details;
  // Bytes of the input the token took (0 when it does not start with one).
  size_t consumed = 0;
};

// Reads the token at the start of `text`. No token, or a malformed one, is
// {empty details, consumed 0}; a well-formed token of another version is
// {empty details, its length}.
ParsedStatusDetails ParseStatusDetails(std::string_view text);

}  // namespace tfd
