#include "daemon/distributed/connection_table.h"

#include "daemon/distributed/open_file_limit.h"

namespace tfd {
namespace {

ServerLimits Resolved(ServerLimits limits) {
  if (limits.max_connections == 0) {
    limits.max_connections = ConnectionCapForFileLimit(OpenFileLimit());
  }
  return limits;
}

}  // namespace

ConnectionTable::ConnectionTable(const ServerLimits& limits) : limits_(Resolved(limits)) {}

ConnectionTable::Admission ConnectionTable::Admit(const std::string& peer_host) {
  Admission a;
  if (auto host = pending_by_host_.find(peer_host);
      host != pending_by_host_.end() &&
      static_cast<int>(host->second.size()) >= limits_.max_pending_per_peer) {
    a.shed = *host->second.begin();
    a.shed_reason = "to make room for a new connection from " + peer_host +
                    " (--max-connections-per-peer " +
                    std::to_string(limits_.max_pending_per_peer) + ")";
    // Gone from the books now, so the caller's count and ours agree even
    // before the connection has finished closing.
    Remove(*a.shed);
  } else if (static_cast<int>(connections_.size()) >= limits_.max_connections) {
    a.shed = OldestPending();
    if (!a.shed) {
      a.refusal = std::to_string(connections_.size()) +
                  " connections are open and all have logged in (--max-connections)";
      return a;
    }
    a.shed_reason = "to make room for a new connection (--max-connections " +
                    std::to_string(limits_.max_connections) + ")";
    Remove(*a.shed);
  }
  a.admitted = true;
  a.id = next_id_++;
  connections_[a.id] = peer_host;
  pending_.insert(a.id);
  pending_by_host_[peer_host].insert(a.id);
  return a;
}

void ConnectionTable::Settle(Id id, const std::string& peer_host) {
  if (pending_.erase(id) == 0) return;
  auto p = pending_by_host_.find(peer_host);
  if (p != pending_by_host_.end() && p->second.erase(id) == 1 && p->second.empty()) {
    pending_by_host_.erase(p);
  }
}

void ConnectionTable::LoggedIn(Id id) {
  auto it = connections_.find(id);
  if (it != connections_.end()) Settle(id, it->second);
}

void ConnectionTable::Remove(Id id) {
  auto it = connections_.find(id);
  if (it == connections_.end()) return;
  Settle(id, it->second);
  connections_.erase(it);
}

std::optional<ConnectionTable::Id> ConnectionTable::OldestPending() const {
  if (pending_.empty()) return std::nullopt;
  return *pending_.begin();
}

int ConnectionTable::PendingFrom(const std::string& peer_host) const {
  auto it = pending_by_host_.find(peer_host);
  return it == pending_by_host_.end() ? 0 : static_cast<int>(it->second.size());
}

}  // namespace tfd
