#include "kernels/data/data_ops.h"

namespace tfd::kernels {

// TODO(cleanup): filled in by the data family's author.
Status RegisterDataOps(OpRegistry&) { return OkStatus(); }

}  // namespace tfd::kernels
