#include "daemon/rpc/kj_status.h"

namespace tfd {

kj::Exception KjFromStatus(const Status& status) {
  const auto type = status.code() == Code::kUnavailable ? kj::Exception::Type::DISCONNECTED
                                                        : kj::Exception::Type::FAILED;
  return kj::Exception(type, __FILE__, __LINE__, kj::str(status.ToString().c_str()));
}

Status StatusFromKj(const kj::Exception& e) {
  std::string d = e.getDescription().cStr();
  // Remote exceptions arrive as "remote exception: CODE: message".
  static constexpr std::string_view kRemote = "remote exception: ";
  if (d.rfind(kRemote, 0) == 0) d = d.substr(kRemote.size());
  const size_t colon = d.find(": ");
  if (colon != std::string::npos) {
    if (auto code = CodeFromName(d.substr(0, colon)); code && *code != Code::kOk) {
      return Status(*code, d.substr(colon + 2));
    }
  }
  if (e.getType() == kj::Exception::Type::DISCONNECTED) {
    return errors::Unavailable("connection lost: ", d);
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
