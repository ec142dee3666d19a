#include "daemon/distributed/permissions.h"

#include <array>
#include <string_view>

#include "daemon/rpc/kj_status.h"
#include "schemas/rpc.capnp.h"

namespace tfd {
namespace {

using Kind = TlsIdentity::Kind;

// Who may call one method: a bit per TlsIdentity::Kind.
constexpr unsigned Bit(Kind k) { return 1u << static_cast<unsigned>(k); }
constexpr unsigned kTask = Bit(Kind::kTask);
constexpr unsigned kClients = Bit(Kind::kClient) | Bit(Kind::kChief) | Bit(Kind::kOperator);
constexpr unsigned kEveryone = kTask | kClients;
constexpr unsigned kChiefs = Bit(Kind::kChief) | Bit(Kind::kOperator);

struct Rule {
  std::string_view method;
  unsigned allowed;
};

// In the schema's method order (schemas/rpc.capnp), one rule per method:
// a method without one is refused to every restricted caller, and
// permissions_test checks the rules against the schema.
constexpr std::array<Rule, 7> kMasterRules = {{
    {"createSession", kEveryone},
    {"waitCluster", kEveryone},
    {"waitInitialized", kEveryone},
    {"saveCheckpoint", kChiefs},
    {"restoreCheckpoint", kChiefs},
    {"listCheckpoints", kEveryone},
    {"reportUninitialized", kEveryone},
}};
constexpr std::array<Rule, 11> kWorkerRules = {{
    {"registerGraph", kTask},
    {"abortStep", kTask},
    {"status", kEveryone},
    {"listVariables", kEveryone},
    {"readVariable", kEveryone},
    {"saveCheckpoint", kTask | Bit(Kind::kOperator)},
    {"restoreCheckpoint", kTask | Bit(Kind::kOperator)},
    {"listCheckpoints", kEveryone},
    {"holdSteps", kTask | Bit(Kind::kOperator)},
    {"releaseSteps", kTask | Bit(Kind::kOperator)},
    {"finishCheckpoint", kTask | Bit(Kind::kOperator)},
}};

// Finds the rule of a method, with its interface's name; null for a method
// past the rules, and for an interface no rule covers.
const Rule* RuleOf(uint64_t interface_id, uint16_t method, std::string_view* interface) {
  if (interface_id == capnp::typeId<proto::Master>()) {
    *interface = "Master";
    return method < kMasterRules.size() ? &kMasterRules[method] : nullptr;
  }
  if (interface_id == capnp::typeId<proto::Worker>()) {
    *interface = "Worker";
    return method < kWorkerRules.size() ? &kWorkerRules[method] : nullptr;
  }
  return nullptr;
}

class Guarded final : public capnp::Capability::Server {
 public:
  Guarded(capnp::Capability::Client client, capnp::Capability::Server& server, Caller caller)
      : client_(kj::mv(client)), server_(server), caller_(std::move(caller)) {}

  DispatchCallResult dispatchCall(uint64_t interface_id, uint16_t method,
                                  capnp::CallContext<capnp::AnyPointer, capnp::AnyPointer> context)
      override {
    Status allowed = Permit(caller_, interface_id, method);
    if (allowed.ok() && !caller_.unrestricted && interface_id == capnp::typeId<proto::Worker>() &&
        method == 0) {
      allowed = CheckMaster(context);
    }
    if (!allowed.ok()) return {KjFromStatus(allowed), false};
    return server_.dispatchCall(interface_id, method, context);
  }

 private:
  // A partition is registered for the caller's own steps only.
  Status CheckMaster(capnp::CallContext<capnp::AnyPointer, capnp::AnyPointer>& context) {
    auto params = context.getParams().getAs<proto::Worker::RegisterGraphParams>();
    const std::string master = params.getMaster();
    if (master == caller_.task) return OkStatus();
    return errors::PermissionDenied("registerGraph naming ", master.empty() ? "no task" : master,
                                    " as its master, from ", caller_.Describe(),
                                    ": a task registers partitions for its own steps only");
  }

  capnp::Capability::Client client_;  // keeps server_ alive
  capnp::Capability::Server& server_;
  const Caller caller_;
};

}  // namespace

std::string Caller::Describe() const {
  if (unrestricted) return task.empty() ? "a client" : task;
  TlsIdentity id;
  id.kind = kind;
  id.task = task;
  return id.Describe();
}

Status Permit(const Caller& caller, uint64_t interface_id, uint16_t method) {
  if (caller.unrestricted) return OkStatus();
  std::string_view interface;
  const Rule* rule = RuleOf(interface_id, method, &interface);
  if (rule == nullptr) {
    // Another interface (a session, a callable) is its holder's own. A
    // Master or Worker method without a rule is refused: one added to the
    // schema must not be open to every role until someone writes its rule.
    if (interface.empty()) return OkStatus();
    return errors::PermissionDenied(interface, " method #", method, " has no rule: not allowed to ",
                                    caller.Describe(), " (docs/security.md)");
  }
  if ((rule->allowed & Bit(caller.kind)) != 0) return OkStatus();
  return errors::PermissionDenied(interface, ".", rule->method, " is not allowed to ",
                                  caller.Describe(), " (docs/security.md)");
}

std::string_view RuleMethodName(uint64_t interface_id, uint16_t method) {
  std::string_view interface;
  const Rule* rule = RuleOf(interface_id, method, &interface);
  return rule == nullptr ? std::string_view() : rule->method;
}

capnp::Capability::Client Guard(capnp::Capability::Client client,
                                capnp::Capability::Server& server, Caller caller) {
  return kj::heap<Guarded>(kj::mv(client), server, std::move(caller));
}

}  // namespace tfd
