#include "common/resource_mgr.h"

namespace tfd {

StatusOr<Tensor> ResourceBase::Read() const {
  return errors::FailedPrecondition("a ", Kind(), " cannot be read as a tensor");
}

Status ResourceMgr::Delete(const std::string& container, const std::string& name) {
  MutexLock lock(mu_);
  if (resources_.erase(Key{container, name}) == 0) {
    return errors::NotFound("no resource '", name, "' in container '", container, "'");
  }
  return OkStatus();
}

void ResourceMgr::ClearContainer(const std::string& container) {
  MutexLock lock(mu_);
  for (auto it = resources_.begin(); it != resources_.end();) {
    it = it->first.container == container ? resources_.erase(it) : std::next(it);
  }
}

std::vector<std::pair<ResourceMgr::Key, std::shared_ptr<ResourceBase>>> ResourceMgr::List() const {
  MutexLock lock(mu_);
  return {resources_.begin(), resources_.end()};
}

}  // namespace tfd
