#include "common/status.h"

#include <array>

namespace tfd {
namespace {

constexpr std::array<std::string_view, kNumCodes> kCodeNames = {
    "OK",
    "CANCELLED",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNAVAILABLE",
    "UNAUTHENTICATED",
    "INTERNAL",
    "RESOURCE_EXHAUSTED",
    "PERMISSION_DENIED",
    "UNIMPLEMENTED",
    "DATA_LOSS",
};
static_assert(static_cast<int>(Code::kDataLoss) + 1 == kNumCodes,
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
  Status out = *this;
  out.message_ = std::string(prefix) + ": " + message_;
  return out;
}

Status Status::WithTask(std::string_view task) const {
  Status out = WithContext(task);
  if (!ok()) out.details_.task = task;
  return out;
}

Status Status::WithNode(std::string_view node, std::string_view op) const {
  if (ok()) return *this;
  Status out = WithContext("node '" + std::string(node) + "' (" + std::string(op) + ")");
  out.details_.node = node;
  out.details_.op = op;
  out.details_.task.clear();
  return out;
}

Status Status::WithReason(ErrorReason reason) const {
  Status out = *this;
  if (!ok()) out.details_.reason = reason;
  return out;
}

Status Status::WithDetails(StatusDetails details) const {
  Status out = *this;
  if (!ok()) out.details_ = std::move(details);
  return out;
}

}  // namespace tfd
