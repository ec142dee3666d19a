#include "daemon/rpc/tls_identity.h"

#include <charconv>

namespace tfd {
namespace {

constexpr std::string_view kTaskPrefix = "tfd:task/";
constexpr std::string_view kRolePrefix = "tfd:role/";

bool IsJobName(std::string_view job) {
  if (job.empty()) return false;
  for (char c : job) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

StatusOr<TlsIdentity> ParseTask(const std::string& uri) {
  std::string_view rest = std::string_view(uri).substr(kTaskPrefix.size());
  const size_t slash = rest.find('/');
  const std::string_view job = rest.substr(0, slash);
  const std::string_view index = slash == std::string_view::npos ? "" : rest.substr(slash + 1);
  int n = -1;
  auto [end, ec] = std::from_chars(index.data(), index.data() + index.size(), n);
  if (!IsJobName(job) || index.empty() || ec != std::errc() ||
      end != index.data() + index.size() || n < 0) {
    return errors::InvalidArgument("the certificate's URI '", uri,
                                   "' is not a task name like tfd:task/ps/0");
  }
  return TlsIdentity{TlsIdentity::Kind::kTask,
                     "/job:" + std::string(job) + "/replica:0/task:" + std::to_string(n), uri};
}

StatusOr<TlsIdentity> ParseRole(const std::string& uri) {
  const std::string_view role = std::string_view(uri).substr(kRolePrefix.size());
  using Kind = TlsIdentity::Kind;
  for (auto [name, kind] : {std::pair{"client", Kind::kClient}, std::pair{"chief", Kind::kChief},
                            std::pair{"operator", Kind::kOperator}}) {
    if (role == name) return TlsIdentity{kind, "", uri};
  }
  return errors::InvalidArgument("the certificate's URI '", uri,
                                 "' names no role of tfd (client, chief, operator)");
}

}  // namespace

StatusOr<TlsIdentity> TlsIdentity::FromUris(const std::vector<std::string>& uris) {
  StatusOr<TlsIdentity> found = TlsIdentity{};
  int names = 0;
  for (const std::string& uri : uris) {
    const bool task = uri.rfind(kTaskPrefix, 0) == 0;
    const bool role = uri.rfind(kRolePrefix, 0) == 0;
    if (!task && !role) continue;
    if (++names > 1) {
      return errors::InvalidArgument("the certificate carries two tfd identities ('",
                                     found->name, "' and '", uri, "'); one holder, one name");
    }
    found = task ? ParseTask(uri) : ParseRole(uri);
    if (!found.ok()) return found;
  }
  return found;
}

std::string TlsIdentity::Describe() const {
  switch (kind) {
    case Kind::kNone: return "no tfd identity" + (name.empty() ? "" : " (" + name + ")");
    case Kind::kTask: return "the task " + task;
    case Kind::kClient: return "role client";
    case Kind::kChief: return "role chief";
    case Kind::kOperator: return "role operator";
  }
  return "?";
}

}  // namespace tfd
