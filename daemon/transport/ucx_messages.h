// The UCX active-message ids of the data plane's shared-memory link: a
// pushed tensor (header: the push header; data: the tensor's bytes) and a
// step message (no header; data: the StepMessage).
#pragma once

namespace tfd {

inline constexpr unsigned kUcxPushMessage = 1;
inline constexpr unsigned kUcxStepMessage = 2;

}  // namespace tfd
