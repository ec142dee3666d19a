#include "common/status.h"

#include <array>

namespace tfd {
namespace {

constexpr std::array<std::string_view, kNumCodes> kCodeNames = {
    "OK",        "CANCELLED",      "INVALID_ARGUMENT",    "DEADLINE_EXCEEDED",
    "NOT_FOUND", "ALREADY_EXISTS", "FAILED_PRECONDITION", "ABORTED",
    "OUT_OF_RANGE", "UNAVAILABLE", "UNAUTHENTICATED",     "INTERNAL",
    "RESOURCE_EXHAUSTED", "PERMISSION_DENIED",
};
static_assert(static_cast<int>(Code::kPermissionDenied) + 1 == kNumCodes,
              "kCodeNames must list every Code");

}  // namespace

std::string_view CodeName(Code code) {
  const int i = static_cast<int>(code);
  return i >= 0 && i < kNumCodes ? kCodeNames[i] : "UNKNOWN";
}

std::optional<Code> CodeFromName(std::string_view name) {
  for (int i = 0; i < kNumCodes; ++i) {
    if (kCodeNames[i] == name) return static_cast<Code>(i);
  }
  return std::nullopt;
}

Status::Status(Code code, std::string message)
    : code_(code), message_(code == Code::kOk ? std::string() : std::move(message)) {}

std::string Status::ToString() const {
  if (ok()) return "OK";
  return std::string(CodeName(code_)) + ": " + message_;
}

Status Status::WithContext(std::string_view prefix) const {
  if (ok()) return *this;
  return Status(code_, std::string(prefix) + ": " + message_);
}

}  // namespace tfd
