// What a master makes of its partitions' errors: which task each is
// attributed to, and which one a step reports. Both decide on the errors'
// details (common/status_details.h), never on their text.
//
//   Status s = OnTask(part.task, StatusFromKj(e));  // "TASK: ..." unless it was
//   step->errors.push_back(s);
//   ...
//   return MostTelling(step->errors);
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace tfd {

// `s` attributed to `task` (named in front of its message), unless it is
// already: a peer attributes its own errors to itself.
Status OnTask(const std::string& task, const Status& s);

// The error a step reports, of all its partitions' errors in the order they
// came: the first one, unless it only says that a transfer was waited for (a
// _Recv failed) and another of the same code says what it was waiting on
// (both reach the deadline at about the same time, in either order: an empty
// queue on the ps, say). OK for none.
Status MostTelling(const std::vector<Status>& errors);

}  // namespace tfd
