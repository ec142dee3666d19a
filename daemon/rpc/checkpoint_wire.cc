#include "daemon/rpc/checkpoint_wire.h"

namespace tfd {
namespace {

void InfoToProto(const CheckpointInfo& in, proto::CheckpointInfo::Builder out) {
  out.setStep(in.step);
  out.setPath(in.path);
  out.setBytes(in.bytes);
  out.setMtimeUnixMs(in.mtime_unix_ms);
  out.setVerified(in.verified);
  out.setProblem(in.problem);
  out.setVariables(in.variables);
}

CheckpointInfo InfoFromProto(proto::CheckpointInfo::Reader in) {
  CheckpointInfo out;
  out.step = in.getStep();
  out.path = in.getPath();
  out.bytes = in.getBytes();
  out.mtime_unix_ms = in.getMtimeUnixMs();
  out.verified = in.getVerified();
  out.problem = in.getProblem();
  out.variables = in.getVariables();
  return out;
}

void TextsToProto(const std::vector<std::string>& in, capnp::List<capnp::Text>::Builder out) {
  for (unsigned i = 0; i < in.size(); ++i) out.set(i, in[i]);
}

std::vector<std::string> TextsFromProto(capnp::List<capnp::Text>::Reader in) {
  std::vector<std::string> out;
  for (auto t : in) out.emplace_back(t.cStr());
  return out;
}

}  // namespace

void TaskCheckpointsToProto(const TaskCheckpoints& in, proto::TaskCheckpoints::Builder out) {
  out.setTask(in.task);
  out.setDirectory(in.directory);
  auto list = out.initCheckpoints(static_cast<unsigned>(in.checkpoints.size()));
  for (unsigned i = 0; i < in.checkpoints.size(); ++i) InfoToProto(in.checkpoints[i], list[i]);
  TextsToProto(in.skipped, out.initSkipped(static_cast<unsigned>(in.skipped.size())));
  TextsToProto(in.variables, out.initVariables(static_cast<unsigned>(in.variables.size())));
  out.setLeftOut(in.left_out);
}

TaskCheckpoints TaskCheckpointsFromProto(proto::TaskCheckpoints::Reader in) {
  TaskCheckpoints out;
  out.task = in.getTask();
  out.directory = in.getDirectory();
  for (auto c : in.getCheckpoints()) out.checkpoints.push_back(InfoFromProto(c));
  out.skipped = TextsFromProto(in.getSkipped());
  out.variables = TextsFromProto(in.getVariables());
  out.left_out = in.getLeftOut();
  return out;
}

}  // namespace tfd
