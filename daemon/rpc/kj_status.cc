#include "daemon/rpc/kj_status.h"

namespace tfd {

kj::Exception KjFromStatus(const Status& status) {
  const auto type = status.code() == Code::kUnavailable ? kj::Exception::Type::DISCONNECTED
                                                        : kj::Exception::Type::FAILED;
  std::string details = EncodeStatusDetails(status.details());
  if (!details.empty()) details += " ";
  return kj::Exception(type, __FILE__, __LINE__, kj::str(details, status.ToString()));
}

Status StatusFromKj(const kj::Exception& e) {
  std::string d = e.getDescription().cStr();
  // Remote exceptions arrive as "remote exception: CODE: message".
  static constexpr std::string_view kRemote = "remote exception: ";
  if (d.rfind(kRemote, 0) == 0) d = d.substr(kRemote.size());
  // The details' token and a space, when there are details; then
  // "CODE: message". Anything else is some other exception, described as it is.
  std::string_view coded = d;
  StatusDetails details;
  if (const ParsedStatusDetails parsed = ParseStatusDetails(d);
      parsed.consumed > 0 && parsed.consumed < d.size() && d[parsed.consumed] == ' ') {
    coded.remove_prefix(parsed.consumed + 1);
    details = parsed.details;
  }
  if (const size_t colon = coded.find(": "); colon != std::string_view::npos) {
    if (auto code = CodeFromName(coded.substr(0, colon)); code && *code != Code::kOk) {
      return Status(*code, std::string(coded.substr(colon + 2))).WithDetails(details);
    }
  }
  if (e.getType() == kj::Exception::Type::DISCONNECTED) {
    return errors::Unavailable("connection lost: ", d).WithReason(ErrorReason::kConnectionLost);
  }
  if (e.getType() == kj::Exception::Type::OVERLOADED) return errors::Unavailable("overloaded: ", d);
  return errors::Internal(d);
}

void ThrowIfError(const Status& status) {
  if (!status.ok()) kj::throwFatalException(KjFromStatus(status));
}

void LogTaskErrors::taskFailed(kj::Exception&& e) {
  if (logger_) logger_->warn("{} failed: {}", what_, StatusFromKj(e).ToString());
}

kj::Promise<Status> Settle(kj::Promise<void> p) {
  return p.then([]() { return OkStatus(); },
                [](kj::Exception&& e) { return StatusFromKj(e); });
}

}  // namespace tfd
