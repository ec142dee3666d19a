// TlsIdentity: who a certificate of the cluster's CA says its holder is,
// read from its URI subjectAltNames. With TLS on, the certificate decides
// who a peer is, never what the peer says of itself:
//
//   URI:tfd:task/JOB/INDEX   the task /job:JOB/replica:0/task:INDEX, which may
//                            log in as that task only (and serve as it)
//   URI:tfd:role/client      a client: sessions, runs, reads
//   URI:tfd:role/chief       a client that also saves and restores the
//                            cluster's checkpoints (a trainer's chief)
//   URI:tfd:role/operator    all of that, and holding a task's steps
//
// A certificate carries exactly one tfd: name; other names (DNS, IP, a
// SPIFFE URI) are left to hostname checks and other tools. What each role
// may call: daemon/distributed/permissions.h; how to issue them:
// docs/operations.md, "TLS".
//
//   TFD_ASSIGN_OR_RETURN(TlsIdentity id, TlsIdentity::FromUris({"tfd:task/ps/0"}));
//   id.kind == TlsIdentity::Kind::kTask; id.task == "/job:ps/replica:0/task:0"
//
// Thread-safety: values.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace tfd {

struct TlsIdentity {
  enum class Kind { kNone, kTask, kClient, kChief, kOperator };

  Kind kind = Kind::kNone;
  std::string task;  // kTask: "/job:J/replica:0/task:T"
  std::string name;  // the URI it came from, or (kNone) what else the certificate said

  // The one tfd: name among a certificate's URIs; kNone when there is none.
  // INVALID_ARGUMENT for two of them, an unknown role, or a malformed task.
  static StatusOr<TlsIdentity> FromUris(const std::vector<std::string>& uris);
  // "the task /job:ps/replica:0/task:0", "role operator", ...: for messages.
  std::string Describe() const;
};

}  // namespace tfd
