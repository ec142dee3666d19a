// The parts of a rendezvous key (common/rendezvous.h), and how a message
// names the transfer one stands for.
//
// A transfer inside a while loop has its key suffixed with the loop's frame
// instance (16 hex digits) and the iteration, "SRC;DST;EDGE;FRAME:ITER"
// (daemon/runtime/frame_rendezvous.h): the suffix keeps the iterations
// apart and is no part of the edge's name. Messages show the edge and the
// iteration, never the frame's hash.
//
//   TFD_ASSIGN_OR_RETURN(RendezvousKeyParts k, SplitRendezvousKey(key));
//   k.edge;  // "x:0", also for "SRC;DST;x:0;00000000000abcde:3" (k.iter 3)
//   DescribeRendezvousKey(key);  // "edge 'x:0' from SRC to DST in iteration 3 of a while loop"
//
// Thread-safety: free functions, reentrant.
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"

namespace tfd {

struct RendezvousKeyParts {
  std::string src_device, dst_device, edge;
  std::string frame;  // the loop's frame instance in hex; empty outside loops
  int64_t iter = -1;  // the loop's iteration; -1 outside loops
};

// Splits `key`: INVALID_ARGUMENT when it is not SRC;DST;EDGE. A last field
// shaped as a frame suffix goes to `frame` and `iter`, not to the edge.
StatusOr<RendezvousKeyParts> SplitRendezvousKey(const std::string& key);

// "edge 'EDGE' from SRC to DST", and " in iteration N of a while loop" for
// a key with a frame suffix; "'KEY'" for a key that is not SRC;DST;EDGE.
std::string DescribeRendezvousKey(const std::string& key);

}  // namespace tfd
