// Which role may call which Master and Worker method. The rules are a table
// in schema order; a method added to the schema without a rule was once
// open to every role (Worker.finishCheckpoint: a client certificate could
// commit, revert or discard the cluster's pending checkpoints), so the
// table is held to the schema here and a method without a rule is refused.
#include <catch2/catch.hpp>

#include <capnp/schema.h>

#include "daemon/distributed/permissions.h"
#include "schemas/rpc.capnp.h"

namespace tfd {
namespace {

using Kind = TlsIdentity::Kind;

Caller As(Kind kind, std::string task = "") {
  return Caller{.task = std::move(task), .kind = kind, .unrestricted = false};
}

uint16_t Ordinal(capnp::InterfaceSchema schema, const char* method) {
  KJ_IF_MAYBE(m, schema.findMethodByName(method)) { return m->getOrdinal(); }
  FAIL("no method " << method);
  return 0;
}

template <typename Interface>
void CheckRulesFollowSchema() {
  const capnp::InterfaceSchema schema = capnp::Schema::from<Interface>();
  const uint64_t id = capnp::typeId<Interface>();
  for (capnp::InterfaceSchema::Method m : schema.getMethods()) {
    const std::string name = m.getProto().getName().cStr();
    INFO(schema.getShortDisplayName().cStr() << "." << name);
    CHECK(RuleMethodName(id, m.getOrdinal()) == name);
  }
  CHECK(RuleMethodName(id, static_cast<uint16_t>(schema.getMethods().size())).empty());
}

TEST_CASE("every Master and Worker method has its own rule, in schema order") {
  CheckRulesFollowSchema<proto::Master>();
  CheckRulesFollowSchema<proto::Worker>();
}

TEST_CASE("finishing a checkpoint is for tasks and operators, as saving one is") {
  const uint64_t worker = capnp::typeId<proto::Worker>();
  const capnp::InterfaceSchema schema = capnp::Schema::from<proto::Worker>();
  for (const char* method : {"finishCheckpoint", "saveCheckpoint", "restoreCheckpoint"}) {
    INFO(method);
    const uint16_t ordinal = Ordinal(schema, method);
    CHECK(Permit(As(Kind::kTask, "/job:ps/replica:0/task:0"), worker, ordinal).ok());
    CHECK(Permit(As(Kind::kOperator), worker, ordinal).ok());
    for (Kind refused : {Kind::kClient, Kind::kChief, Kind::kNone}) {
      const Status s = Permit(As(refused), worker, ordinal);
      CHECK(s.code() == Code::kPermissionDenied);
    }
  }
  // Without TLS identities every caller holds every right (the shared token).
  CHECK(Permit(Caller{}, worker, Ordinal(schema, "finishCheckpoint")).ok());
}

TEST_CASE("a Master or Worker method past the rules is refused to every restricted role") {
  for (uint64_t id : {capnp::typeId<proto::Master>(), capnp::typeId<proto::Worker>()}) {
    for (Kind kind : {Kind::kTask, Kind::kClient, Kind::kChief, Kind::kOperator}) {
      CHECK(Permit(As(kind), id, 200).code() == Code::kPermissionDenied);
    }
    CHECK(Permit(Caller{}, id, 200).ok());
  }
  // A session or callable is its holder's own: no table applies.
  CHECK(Permit(As(Kind::kClient), capnp::typeId<proto::Session>(), 1).ok());
}

TEST_CASE("clients run, wait and read; only chiefs and operators save the cluster") {
  const uint64_t master = capnp::typeId<proto::Master>();
  const capnp::InterfaceSchema schema = capnp::Schema::from<proto::Master>();
  for (const char* method : {"createSession", "waitCluster", "waitInitialized", "listCheckpoints"}) {
    INFO(method);
    CHECK(Permit(As(Kind::kClient), master, Ordinal(schema, method)).ok());
  }
  const uint16_t save = Ordinal(schema, "saveCheckpoint");
  CHECK(Permit(As(Kind::kClient), master, save).code() == Code::kPermissionDenied);
  CHECK(Permit(As(Kind::kTask, "/job:worker/replica:0/task:1"), master, save).code() ==
        Code::kPermissionDenied);
  CHECK(Permit(As(Kind::kChief), master, save).ok());
}

}  // namespace
}  // namespace tfd
