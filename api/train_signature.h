// The training signature: the node names by which `tfctl train` drives a
// graph, and which the model builders (examples/mnist) give their nodes.
// Only the train op is required; the trainer skips what a graph lacks.
//
// Before the first step the trainer reads kGlobalStepVariable, so a run
// whose last step is already reached (restored from a checkpoint) runs none.
// A step runs kTrain (a sync chief: kChiefStep instead) and fetches
// kGlobalStep (a sync chief: kChiefGlobalStep), kLoss and kEpoch. Training ends when the input runs
// out (OUT_OF_RANGE) or the global step reaches kMaxSteps (when the graph has it, or the trainer is
// given one). Before the first step the chief runs kInit unless every variable is already
// initialized (restored from a checkpoint), then kChiefInit; every trainer then runs kLocalInit
// (its local variables, in every session it opens, recoveries' too), and every worker kResetInput
// (its input starts at epoch 0 even when an earlier run read it). At the end each worker fetches
// kAccuracy and kAuc (those the graph has), and the chief runs kRelease so that no replica stays
// parked waiting for a step that will not come.
//
// The names are the contract between the two sides; docs/training.md
// describes it for people writing their own models.
#pragma once

namespace tfd::train::signature {

inline constexpr const char* kInit = "init";                // global variables initializer
inline constexpr const char* kTrain = "train";              // one step's update
inline constexpr const char* kGlobalStep = "train/global_step";  // int64: the step after it
inline constexpr const char* kGlobalStepVariable = "global_step";  // read before the first step
inline constexpr const char* kLoss = "summaries/loss";      // scalar
inline constexpr const char* kEpoch = "summaries/epoch";    // float64 epochs of input read
inline constexpr const char* kEpochs = "train/epochs";      // int64 const: epochs planned
inline constexpr const char* kMaxSteps = "train/max_steps";  // int64 const: last global step
inline constexpr const char* kAccuracy = "eval/accuracy";   // scalar, test set
inline constexpr const char* kAuc = "eval/auc";             // float64 ROC AUC, held-out set
inline constexpr const char* kResetInput = "train/reset_input";  // input back to epoch 0
inline constexpr const char* kLocalInit = "local_init";          // local variables initializer

// Synchronous replicas (api/sync_replicas.h).
// The chief's step, run instead of kTrain: push, aggregate, apply, let the
// replicas go on; and the global step after it, fetched instead of kGlobalStep.
inline constexpr const char* kChiefStep = "sync/chief_step";
inline constexpr const char* kChiefGlobalStep = "sync/chief_global_step";
inline constexpr const char* kChiefInit = "sync/chief_init";    // accumulators, round to global_step
inline constexpr const char* kRelease = "sync/release";         // the final step to parked replicas

}  // namespace tfd::train::signature
