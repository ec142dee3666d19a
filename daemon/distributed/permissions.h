// Permissions: what a caller that got in may call on a task's Master and
// Worker, and the capability that enforces it for one login.
//
// Who the caller is comes from its credential (daemon/distributed/
// authenticator.h). With TLS identities each role is held to its row:
//
//   Master                        task  client  chief  operator
//   createSession, waitCluster,    yes   yes     yes    yes
//   waitInitialized, list ckpts,
//   reportUninitialized
//   save / restore checkpoints     -     -       yes    yes
//   Worker
//   status, variables, list ckpts  yes   yes     yes    yes
//   registerGraph, abortStep       yes*  -       -      -
//   save / restore / finish        yes   -       -      yes
//   checkpoints, holdSteps /
//   releaseSteps
//
//   * only naming itself as the partition's master.
//
// Without TLS a credential is the cluster's shared token (or nothing, on a
// task without one): every caller that got in holds every right, as with
// TensorFlow's own servers, and docs/security.md says so.
//
//   auto worker = Guard(services.worker, worker_server, caller).castAs<proto::Worker>();
//
// Thread-safety: event-loop thread only.
#pragma once

#include <capnp/capability.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"
#include "daemon/rpc/tls_identity.h"

namespace tfd {

// Who got in through the Authenticator.
struct Caller {
  std::string task;  // the task it logged in as; empty for a client
  TlsIdentity::Kind kind = TlsIdentity::Kind::kNone;
  // No TLS identities: the caller holds every right (see above).
  bool unrestricted = true;
  std::string Describe() const;
};

// OK when `caller` may call method `method` of interface `interface_id`;
// PERMISSION_DENIED naming the method and the caller's role otherwise.
Status Permit(const Caller& caller, uint64_t interface_id, uint16_t method);

// The method name the rule for `method` of `interface_id` was written for;
// empty when there is none. permissions_test holds it to the schema.
std::string_view RuleMethodName(uint64_t interface_id, uint16_t method);

// A capability that serves `server` (which `client` keeps alive) to
// `caller`: each call is checked with Permit first, and a registerGraph
// must name the caller itself as the partition's master.
capnp::Capability::Client Guard(capnp::Capability::Client client,
                                capnp::Capability::Server& server, Caller caller);

}  // namespace tfd
