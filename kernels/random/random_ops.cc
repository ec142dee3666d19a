#include "kernels/random/random_ops.h"

namespace tfd::kernels {

// TODO(cleanup): filled in by the random family's author.
Status RegisterRandomOps(OpRegistry&) { return OkStatus(); }

}  // namespace tfd::kernels
