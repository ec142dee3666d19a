#include "common/status_details.h"

#include <algorithm>
#include <array>
#include <charconv>

namespace tfd {
namespace {

constexpr std::array<std::string_view, kNumErrorReasons> kErrorReasonNames = {
    "NONE", "CONNECTION_LOST"};
static_assert(static_cast<int>(ErrorReason::kConnectionLost) + 1 == kNumErrorReasons,
              "kErrorReasonNames must list every ErrorReason");

constexpr std::string_view kMagic = "tfd-details/";
constexpr int kVersion = 1;
// A length longer than this is garbage, not a detail: it also bounds the
// digits read, so no length can overflow.
constexpr size_t kMaxLength = 1 << 20;

// Reads "<decimal><stop>" from the front of `in`, advancing it past both.
std::optional<size_t> ReadNumber(std::string_view& in, char stop) {
  size_t n = 0;
  const char* end = in.data() + std::min(in.size(), size_t{8});
  auto [ptr, ec] = std::from_chars(in.data(), end, n);
  if (ec != std::errc() || ptr == in.data() || ptr == in.data() + in.size() || *ptr != stop ||
      n > kMaxLength) {
    return std::nullopt;
  }
  in.remove_prefix(static_cast<size_t>(ptr - in.data()) + 1);
  return n;
}

void Append(std::string& out, std::string_view key, std::string_view value) {
  if (value.empty()) return;
  out.append(key).append("=").append(std::to_string(value.size())).append(":");
  out.append(value).append(";");
}

// Fills `d` from a version-1 body; false when it is malformed.
bool ReadBody(std::string_view body, StatusDetails& d) {
  while (!body.empty()) {
    const size_t eq = body.find('=');
    if (eq == std::string_view::npos) return false;
    const std::string_view key = body.substr(0, eq);
    body.remove_prefix(eq + 1);
    const auto len = ReadNumber(body, ':');
    if (!len || *len >= body.size() || body[*len] != ';') return false;
    const std::string_view value = body.substr(0, *len);
    body.remove_prefix(*len + 1);
    if (key == "task") {
      d.task = value;
    } else if (key == "node") {
      d.node = value;
    } else if (key == "op") {
      d.op = value;
    } else if (key == "reason") {
      d.reason = ErrorReasonFromName(value).value_or(ErrorReason::kNone);
    }  // else a key of a later tfd: skipped
  }
  return true;
}

}  // namespace

std::string_view ErrorReasonName(ErrorReason reason) {
  const int i = static_cast<int>(reason);
  return i >= 0 && i < kNumErrorReasons ? kErrorReasonNames[i] : "NONE";
}

std::optional<ErrorReason> ErrorReasonFromName(std::string_view name) {
  for (int i = 0; i < kNumErrorReasons; ++i) {
    if (kErrorReasonNames[i] == name) return static_cast<ErrorReason>(i);
  }
  return std::nullopt;
}

std::string EncodeStatusDetails(const StatusDetails& details) {
  if (details.empty()) return "";
  std::string body;
  Append(body, "task", details.task);
  Append(body, "node", details.node);
  Append(body, "op", details.op);
  if (details.reason != ErrorReason::kNone) Append(body, "reason", ErrorReasonName(details.reason));
  return std::string(kMagic) + std::to_string(kVersion) + "/" + std::to_string(body.size()) +
         ":" + body;
}

ParsedStatusDetails ParseStatusDetails(std::string_view text) {
  if (text.substr(0, kMagic.size()) != kMagic) return {};
  std::string_view in = text.substr(kMagic.size());
  const auto version = ReadNumber(in, '/');
  if (!version) return {};
  const auto length = ReadNumber(in, ':');
  if (!length || *length > in.size()) return {};
  const size_t consumed = text.size() - in.size() + *length;
  ParsedStatusDetails out;
  if (*version != kVersion) return {.details = {}, .consumed = consumed};
  if (!ReadBody(in.substr(0, *length), out.details)) return {};
  out.consumed = consumed;
  return out;
}

}  // namespace tfd
