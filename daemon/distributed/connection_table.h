// ConnectionTable: the books of a task's accepted connections — who they
// come from, whether they have logged in — and the admission rules of
// ServerLimits on top of them:
//   - at most max_pending_per_peer from one address that have not logged
//     in: a new one over the cap takes the place of that address's oldest
//     pending connection, so a stranger on a shared address cannot keep
//     the task's own peers and clients out;
//   - at most max_connections in all: a new connection over the cap takes
//     the place of the oldest one that has not logged in, or is refused
//     when all have.
// It only decides; TaskServer closes what it is told to.
//
//   ConnectionTable table(limits);
//   auto a = table.Admit("10.0.0.7");
//   if (!a.admitted) { log a.refusal; close; }
//   if (a.shed) close connection *a.shed first, logging a.shed_reason;
//   ... table.LoggedIn(a.id); ... table.Remove(a.id);
//
// Thread-safety: none; TaskServer keeps it on the event-loop thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "daemon/distributed/server_limits.h"

namespace tfd {

class ConnectionTable {
 public:
  using Id = uint64_t;

  struct Admission {
    bool admitted = false;
    Id id = 0;                // when admitted
    std::optional<Id> shed;   // a pending connection to close to make room
    std::string shed_reason;  // with `shed`: "to make room for ...", naming the flag
    std::string refusal;      // when not admitted: why, naming the flag
  };

  // `limits.max_connections` 0 is taken from the open-file limit now.
  explicit ConnectionTable(const ServerLimits& limits);

  Admission Admit(const std::string& peer_host);
  void LoggedIn(Id id);
  void Remove(Id id);

  // The connection that has waited longest without logging in.
  std::optional<Id> OldestPending() const;

  size_t size() const { return connections_.size(); }
  int PendingFrom(const std::string& peer_host) const;

 private:
  // Takes `id`, which has not logged in, off the pending books.
  void Settle(Id id, const std::string& peer_host);

  const ServerLimits limits_;
  Id next_id_ = 1;
  std::map<Id, std::string> connections_;       // id -> peer host
  std::set<Id> pending_;  // not logged in; ids grow, so oldest first
  std::map<std::string, std::set<Id>> pending_by_host_;  // hosts with pending connections only
};

}  // namespace tfd
