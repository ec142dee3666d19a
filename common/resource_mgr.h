// ResourceMgr: a task's stateful resources (variables, queues, ...), keyed by
// container and name, outliving any single step, session or graph. Two graphs
// that name the same variable share it: between-graph replication rests on it.
//
//   TFD_ASSIGN_OR_RETURN(auto var, rm.LookupOrCreate<Variable>("", "w", [&] {
//     return std::make_shared<Variable>(DType::kFloat32, shape);
//   }));
//
// Thread-safety: every method may be called from any thread; the resources
// guard their own state.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/mutex.h"
#include "common/status.h"
#include "common/tensor.h"

namespace tfd {

class ResourceBase {
 public:
  virtual ~ResourceBase() = default;
  // "variable", "queue", ...: used in messages.
  virtual std::string_view Kind() const = 0;
  // A one-line description for listings ("float32[2, 3] initialized").
  virtual std::string DebugString() const = 0;
  // What a consumer that takes this resource by value sees (a variable's
  // current value). FAILED_PRECONDITION when there is nothing to read.
  virtual StatusOr<Tensor> Read() const;
};

class ResourceMgr {
 public:
  struct Key {
    std::string container;
    std::string name;
    auto operator<=>(const Key&) const = default;
  };

  // The resource under (container, name), created by `create` if absent.
  // FAILED_PRECONDITION if it exists with another type.
  template <typename T>
  StatusOr<std::shared_ptr<T>> LookupOrCreate(const std::string& container,
                                              const std::string& name,
                                              const std::function<StatusOr<std::shared_ptr<T>>()>& create) {
    MutexLock lock(mu_);
    auto it = resources_.find(Key{container, name});
    if (it != resources_.end()) return Cast<T>(container, name, it->second);
    TFD_ASSIGN_OR_RETURN(std::shared_ptr<T> made, create());
    resources_.emplace(Key{container, name}, made);
    return made;
  }

  // NOT_FOUND when absent; FAILED_PRECONDITION when of another type.
  template <typename T>
  StatusOr<std::shared_ptr<T>> Lookup(const std::string& container, const std::string& name) const {
    MutexLock lock(mu_);
    auto it = resources_.find(Key{container, name});
    if (it == resources_.end()) {
      return errors::NotFound("no resource '", name, "' in container '", container, "'");
    }
    return Cast<T>(container, name, it->second);
  }

  // Removes one resource (NOT_FOUND when absent), or every resource of a container.
  Status Delete(const std::string& container, const std::string& name);
  void ClearContainer(const std::string& container);

  // A snapshot of everything held, sorted by key.
  std::vector<std::pair<Key, std::shared_ptr<ResourceBase>>> List() const;

 private:
  template <typename T>
  static StatusOr<std::shared_ptr<T>> Cast(const std::string& container, const std::string& name,
                                           const std::shared_ptr<ResourceBase>& r) {
    if (auto t = std::dynamic_pointer_cast<T>(r)) return t;
    return errors::FailedPrecondition("resource '", name, "' in container '", container,
                                      "' is a ", r->Kind(), " of another kind than requested");
  }

  mutable Mutex mu_;
  std::map<Key, std::shared_ptr<ResourceBase>> resources_ GUARDED_BY(mu_);
};

}  // namespace tfd
