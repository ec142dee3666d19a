// kernels::Resource: the checkpoint namespaces, and what holds an entry
// whose resource does not exist yet.
#include "kernels/framework/resource.h"

#include "kernels/data/input_position.h"
#include "kernels/state/variable.h"

namespace tfd::kernels {

Status Resource::CheckRestore(const Tensor&, const std::string& key,
                              const std::string& file) const {
  return errors::FailedPrecondition("checkpoint '", file, "' holds '", key, "', but the ", Kind(),
                                    " it names cannot be restored");
}

Status Resource::Restore(const Tensor&, const std::string& key) {
  return errors::FailedPrecondition("a ", Kind(), " cannot be restored (from '", key, "')");
}

std::string_view CheckpointNamespaceOf(std::string_view key) {
  if (key.size() < 3 || key[0] != '@') return "";
  for (size_t i = 1; i < key.size(); ++i) {
    const char c = key[i];
    if (c == '/') return i > 1 ? key.substr(0, i + 1) : "";
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return "";
  }
  return "";
}

std::string PendingRestore::DebugString() const {
  return "restored value " + saved_.Describe() + " waiting for '" + name_ + "'";
}

std::string PendingRestoreName(std::string_view ns, const std::string& name) {
  return std::string(ns) + name;
}

Status PendingRestore::HandTo(Resource& made) const {
  const std::string key = PendingRestoreName(ns_, name_);
  TFD_RETURN_IF_ERROR(made.CheckRestore(saved_, key, file_));
  return made.Restore(saved_, key);
}

// The namespaces whose entries need more than a PendingRestore before their
// resource's op runs: the one explicit list, as register_all.cc is for ops.
StatusOr<RestoreHolder> MakeRestoreHolder(std::string_view ns, const std::string& container,
                                          const std::string& name, const Tensor& saved,
                                          const std::string& key, const std::string& file) {
  if (ns.empty()) {  // a variable, made at once: `tfctl vars` lists it, VariableV2 adopts it
    TFD_ASSIGN_OR_RETURN(auto variable, MakeRestoredVariable(container, name, saved));
    return RestoreHolder{name, std::move(variable)};
  }
  if (ns == data::kInputPositionKeyPrefix) {  // checked now, taken up by IdxDataset
    TFD_ASSIGN_OR_RETURN(auto pending, data::MakePendingInputPosition(name, saved, key, file));
    return RestoreHolder{data::PendingPositionName(name), std::move(pending)};
  }
  return RestoreHolder{PendingRestoreName(ns, name),
                       std::make_shared<PendingRestore>(std::string(ns), name, saved, file)};
}

}  // namespace tfd::kernels
