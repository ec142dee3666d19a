// LocalRunner: a tfd.Session that runs the graph in this process, as
// `tfctl run` does. It takes the graph of a GraphBuilder and extends its
// session when the graph has grown since the last run, so a Python program
// may add ops between runs as TF1's do.
//
//   LocalRunner s(registry, {});
//   py::list out = s.Run(graph, {{"x", array}}, {"y"}, {}, /*timeout_s=*/0);
//
// Thread-safety: Python threads may share one, as TF1's sessions: each
// releases the GIL while its step runs, and their steps run at once.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <boost/asio/thread_pool.hpp>
#include <pybind11/pybind11.h>

#include "common/resource_mgr.h"
#include "daemon/runtime/local_session.h"
#include "python/src/graph_builder.h"
#include "python/src/session_common.h"

namespace tfd::python {

class LocalRunner {
 public:
  // `io_dirs`: where Save, Restore and the readers may touch files.
  LocalRunner(const OpRegistry& registry, const std::vector<std::string>& io_dirs);
  ~LocalRunner();

  // The fetched tensors as numpy arrays, in order. `timeout_s` 0: the
  // session's default deadline (5 minutes).
  pybind11::list Run(const GraphBuilder& graph, const PyFeeds& feeds,
                     const std::vector<std::string>& fetches,
                     const std::vector<std::string>& targets, double timeout_s);
  // Run, traced: (the fetches, what each node ran: StatsToPython).
  pybind11::tuple RunTraced(const GraphBuilder& graph, const PyFeeds& feeds,
                            const std::vector<std::string>& fetches,
                            const std::vector<std::string>& targets, double timeout_s);
  // Cancels the steps running in this session (from other threads) and
  // refuses later ones: LocalSession::Close.
  void Close();

 private:
  Status Sync(const GraphBuilder& graph);
  LocalSession::RunOutput Step(const GraphBuilder& graph, const PyFeeds& feeds,
                               const std::vector<std::string>& fetches,
                               const std::vector<std::string>& targets, double timeout_s,
                               bool trace);

  const OpRegistry& registry_;
  // Declared first so that it is destroyed last: no pool thread runs a
  // kernel of a destroyed session.
  boost::asio::thread_pool pool_;
  ResourceMgr resources_;
  KernelEnv env_;
  std::unique_ptr<LocalSession> session_;
  const GraphBuilder* graph_ = nullptr;  // the graph sent, to refuse another
  int synced_nodes_ = 0;
};

}  // namespace tfd::python
