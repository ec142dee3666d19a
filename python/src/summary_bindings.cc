// TensorBoard's event files from Python: tfd.summary.FileWriter writes
// through the training loop's EventFileWriter (daemon/client/training), so
// a script's own summaries and MonitoredTrainingSession's are one format
// made one way; and the TFRecord checksum python/tfd/tf_record.py frames
// records with.
#include <memory>
#include <string>
#include <string_view>

#include <pybind11/pybind11.h>

#include "daemon/client/training/event_file.h"
#include "python/src/builder_helpers.h"
#include "python/src/errors.h"

namespace tfd::python {

namespace py = pybind11;

namespace {

// An open event file; close() ends it (a closed one refuses writes).
class EventFile {
 public:
  EventFile(const std::string& logdir, const std::string& suffix)
      : writer_(ValueOrThrow(training::EventFileWriter::Create(logdir, suffix))),
        path_(writer_->path()) {}

  void WriteSummary(int64_t step, const py::bytes& summary) {
    ThrowIfError(Open()->WriteSerialized(step, std::string_view(summary)));
  }
  void WriteGraph(const py::bytes& graph_def) {
    ThrowIfError(Open()->WriteGraph(std::string_view(graph_def)));
  }
  void Close() { writer_.reset(); }
  const std::string& path() const { return path_; }

 private:
  training::EventFileWriter* Open() {
    if (!writer_)
      ThrowIfError(errors::FailedPrecondition("the event file '", path_, "' is closed"));
    return writer_.get();
  }

  std::unique_ptr<training::EventFileWriter> writer_;
  std::string path_;
};

}  // namespace

void BindSummaries(py::module_& m) {
  py::class_<EventFile>(m, "EventFile")
      .def(py::init<const std::string&, const std::string&>(), py::arg("logdir"), py::arg("suffix"))
      .def("write_summary", &EventFile::WriteSummary)
      .def("write_graph", &EventFile::WriteGraph)
      .def("close", &EventFile::Close)
      .def_property_readonly("path", &EventFile::path);
  m.def("masked_crc32c", [](const py::bytes& data) {
    const std::string_view bytes = data;
    return training::MaskedCrc32c(bytes.data(), bytes.size());
  });
}

}  // namespace tfd::python
