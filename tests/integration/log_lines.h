// Reading a task's log in tests: whether it contains some text, its lines
// that contain it, and a bounded wait until enough of them have appeared
// (tfd writes a line when it has finished with a connection, which may be
// just after the peer noticed the close).
//
//   auto lines = WaitForLines([&] { return cluster.Log("worker", 0); }, "closed:", 2, 10s);
//   CHECK(lines.size() == 2);
//
// Thread-safety: plain functions.
#pragma once

#include <chrono>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace tfd::testing {

inline bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

inline std::vector<std::string> LinesWith(const std::string& text, const std::string& part) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.find(part) != std::string::npos) out.push_back(line);
  }
  return out;
}

// The lines of `log()` that contain `part`, once there are at least `count`
// of them or `timeout` has passed (then fewer).
inline std::vector<std::string> WaitForLines(const std::function<std::string()>& log,
                                             const std::string& part, size_t count,
                                             std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    auto lines = LinesWith(log(), part);
    if (lines.size() >= count || std::chrono::steady_clock::now() >= deadline) return lines;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace tfd::testing
