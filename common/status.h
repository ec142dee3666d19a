// Status and StatusOr: the one error type of tfd.
//
// Every fallible function in the core returns a Status (or a StatusOr<T>) whose
// code is one of the design's codes and whose message names the node, op,
// device or task concerned. RPC adapters convert to kj::Exception and back in
// one place each way, so the code survives the wire.
//
//   Status s = graph.Validate();
//   if (!s.ok()) return s;                 // or TFD_RETURN_IF_ERROR(...)
//   return errors::NotFound("node '", name, "' does not exist");
//   if (s.op() == "_Recv") ...             // not s.message().find(...)
//
// Thread-safety: values; copy freely.
#pragma once

#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "common/status_details.h"

namespace tfd {

enum class Code : int {
  kOk = 0,
  kCancelled,
  kInvalidArgument,
  kDeadlineExceeded,
  kNotFound,
  kAlreadyExists,
  kFailedPrecondition,
  kAborted,
  kOutOfRange,
  kUnavailable,
  kUnauthenticated,
  kInternal,
  // Added after the others so that no existing code changes its number.
  kResourceExhausted,
  // A caller who got in asked for what its credential does not allow.
  kPermissionDenied,
  // A request tfd understands and does not do (yet): a reader's hop_bytes.
  kUnimplemented,
  // Data damaged past use: a record that fails its checksum or is cut short.
  kDataLoss,
};
inline constexpr int kNumCodes = 16;

// "INVALID_ARGUMENT" etc.; "OK" for kOk.
std::string_view CodeName(Code code);
// Inverse of CodeName; nullopt for an unknown name.
std::optional<Code> CodeFromName(std::string_view name);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(Code code, std::string message);

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }

  // "CODE: message", or "OK".
  std::string ToString() const;

  // Typed details; empty for OK and for errors nobody attributed.
  const StatusDetails& details() const { return details_; }
  const std::string& task() const { return details_.task; }
  const std::string& node() const { return details_.node; }
  const std::string& op() const { return details_.op; }
  ErrorReason reason() const { return details_.reason; }

  // Each of these returns a copy (OK stays OK, with no details).
  // `prefix` in front of the message ("while running node 'x': ..."); the
  // details are kept.
  Status WithContext(std::string_view prefix) const;
  // Attributed to `task`, which is also put in front of the message
  // ("/job:ps/replica:0/task:0: ...").
  Status WithTask(std::string_view task) const;
  // Failed at `node`, an `op`: "node 'NAME' (OP): " in front of the message.
  // This node replaces one named before (an input's error, the reason a
  // step was cancelled), and the task is cleared: the error is now this
  // node's, on whichever task runs it, which its caller names.
  Status WithNode(std::string_view node, std::string_view op) const;
  Status WithReason(ErrorReason reason) const;
  // `details` in place of the current ones, the message unchanged: for a
  // decoder, or an error whose message already names its task in its own
  // words.
  Status WithDetails(StatusDetails details) const;

  bool operator==(const Status& other) const = default;

 private:
  Code code_ = Code::kOk;
  std::string message_;
  StatusDetails details_;
};

inline Status OkStatus() { return Status(); }

// Either a value or a non-OK Status.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(Status status) : v_(std::move(status)) {}  // NOLINT: implicit by design
  StatusOr(T value) : v_(std::move(value)) {}         // NOLINT: implicit by design

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<Status, T> v_;
};

namespace errors {

template <typename... Args>
std::string StrCat(const Args&... args) {
  std::ostringstream out;
  (out << ... << args);
  return out.str();
}

#define TFD_DEFINE_ERROR(Fn, CODE)                      \
  template <typename... Args>                           \
  Status Fn(const Args&... args) {                      \
    return Status(Code::CODE, StrCat(args...));         \
  }
TFD_DEFINE_ERROR(Cancelled, kCancelled)
TFD_DEFINE_ERROR(InvalidArgument, kInvalidArgument)
TFD_DEFINE_ERROR(DeadlineExceeded, kDeadlineExceeded)
TFD_DEFINE_ERROR(NotFound, kNotFound)
TFD_DEFINE_ERROR(AlreadyExists, kAlreadyExists)
TFD_DEFINE_ERROR(FailedPrecondition, kFailedPrecondition)
TFD_DEFINE_ERROR(Aborted, kAborted)
TFD_DEFINE_ERROR(OutOfRange, kOutOfRange)
TFD_DEFINE_ERROR(Unavailable, kUnavailable)
TFD_DEFINE_ERROR(Unauthenticated, kUnauthenticated)
TFD_DEFINE_ERROR(Internal, kInternal)
TFD_DEFINE_ERROR(ResourceExhausted, kResourceExhausted)
TFD_DEFINE_ERROR(PermissionDenied, kPermissionDenied)
TFD_DEFINE_ERROR(Unimplemented, kUnimplemented)
TFD_DEFINE_ERROR(DataLoss, kDataLoss)
#undef TFD_DEFINE_ERROR

}  // namespace errors
}  // namespace tfd

#define TFD_STATUS_CONCAT_INNER(a, b) a##b
#define TFD_STATUS_CONCAT(a, b) TFD_STATUS_CONCAT_INNER(a, b)

// Returns from the enclosing function if `expr` (a Status) is not OK.
#define TFD_RETURN_IF_ERROR(expr)                              \
  do {                                                         \
    ::tfd::Status tfd_status_ = (expr);                        \
    if (!tfd_status_.ok()) return tfd_status_;                 \
  } while (0)

// `TFD_ASSIGN_OR_RETURN(auto x, F());` declares x from a StatusOr or returns
// its error.
#define TFD_ASSIGN_OR_RETURN(lhs, expr) \
  TFD_ASSIGN_OR_RETURN_IMPL(TFD_STATUS_CONCAT(tfd_statusor_, __LINE__), lhs, expr)
#define TFD_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                              \
  if (!tmp.ok()) return tmp.status();             \
  lhs = std::move(tmp).value()
