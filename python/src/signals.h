// Python's signal handlers, from C++ that waits without the GIL. Python runs
// them on its main thread only, between bytecodes: a thread waiting in C++
// for a step must ask for them, or Ctrl-C waits for the step's deadline.
//
//   while (!done.wait_for(kSignalPoll)) {
//     if (auto raised = RaisedBySignalHandlers()) { cancel; keep *raised to throw; }
//   }
#pragma once

#include <chrono>
#include <optional>

#include <pybind11/pybind11.h>

namespace tfd::python {

// How often a wait asks.
inline constexpr std::chrono::milliseconds kSignalPoll{100};

// Takes the GIL and runs the handlers due (there are none but on the main
// thread); the exception one raised (Ctrl-C's KeyboardInterrupt), taken out
// of Python's error indicator, or nothing. Call without the GIL.
std::optional<pybind11::error_already_set> RaisedBySignalHandlers();

}  // namespace tfd::python
