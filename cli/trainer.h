// tfctl train's trainer is the training library's (daemon/client/training/
// trainer.h: the loop with hooks, and its contract); these are its names
// as tfctl and its tests have always used them.
#pragma once

#include "daemon/client/training/trainer.h"

namespace tfd::cli {

using training::CheckpointFailure;
using training::IsChief;
using training::Trainer;
using training::TrainerOptions;
using training::TrainProgress;
using training::TrainResult;

}  // namespace tfd::cli
