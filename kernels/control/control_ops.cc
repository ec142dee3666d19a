#include "kernels/control/control_ops.h"

namespace tfd::kernels {

// TODO(cleanup): filled in by the control family's author.
Status RegisterControlOps(OpRegistry&) { return OkStatus(); }

}  // namespace tfd::kernels
