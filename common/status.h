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
};
inline constexpr int kNumCodes = 14;

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

  // A copy whose message has `prefix` in front ("while running node 'x': ...").
  Status WithContext(std::string_view prefix) const;

  bool operator==(const Status& other) const = default;

 private:
  Code code_ = Code::kOk;
  std::string message_;
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
