// What the runners of tfd.Session (local_runner.h, remote_runner.h) and of
// MonitoredTrainingSession (monitored.h) share: feeds from numpy arrays,
// fetches back to numpy, deadlines in seconds, and a client that logs in as
// tfctl does.
//
//   auto tensors = TensorFeeds(feeds, /*local=*/false);
//   py::list arrays = ToNumpy(std::move(out.fetches));
//
// Thread-safety: plain functions; those that take or make numpy arrays need
// the GIL.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <kj/async-io.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "common/status.h"
#include "common/tensor.h"
#include "daemon/client/client.h"
#include "python/src/graph_builder.h"

namespace tfd::python {

using PyFeeds = std::vector<std::pair<std::string, pybind11::array>>;

// Seconds as a deadline; 0 (or less): none given.
std::chrono::milliseconds Millis(double seconds);

// Makes each tensor own a host copy of its buffer: a fetch from a remote
// task lives in a message of the network thread, and the numpy array that
// takes it may live anywhere.
Status OwnTensors(std::vector<Tensor>& tensors);

// A client of the task at `target` ("host:port"), logging in with the token
// in `token_file` ("" for none; else TFD_AUTH_TOKEN_FILE) and TLS from the
// three files (all or none; else TFD_TLS_*); `timeout` bounds connecting
// and each call but a step.
StatusOr<std::unique_ptr<Client>> ConnectClient(kj::AsyncIoContext& io, const std::string& target,
                                                const std::string& token_file, TlsFiles tls,
                                                std::chrono::milliseconds timeout);

// INVALID_ARGUMENT unless `graph` is the graph a session sent (`sent`; null
// before its first run): a tfd.Session runs one graph.
Status CheckSameGraph(const GraphBuilder* sent, const GraphBuilder& graph);

// Feeds as tensors. `alias` as TensorFromArray's; a local session aliases
// only arrays the caller cannot change (read-only ones), since a variable
// assigned from a feed keeps its buffer.
std::vector<std::pair<std::string, Tensor>> TensorFeeds(const PyFeeds& feeds, bool local);

// The tensors as numpy arrays, in order.
pybind11::list ToNumpy(std::vector<Tensor> tensors);

// A traced step's nodes, one tuple each: (device, node, op, start_micros,
// end_micros, thread id, thread name, label), as tfd.RunMetadata takes them.
pybind11::list StatsToPython(const StepStats& stats);

// A large fetch views the frame it came in (Client::RunOutput), which only
// its memory keeps: its numpy array holds nothing of the connection or the
// loop thread, and the session may close and go before it. One under this
// size is copied out on the loop, which costs less than keeping its whole
// frame alive as long as the array.
inline constexpr size_t kViewedFetchBytes = size_t{1} << 20;

StatusOr<Client::RunOutput> OwnSmallFetches(Client::RunOutput out);

}  // namespace tfd::python
