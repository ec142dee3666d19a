// RateLimitedLog: a few lines per kind per window, the rest summed up once
// the window is over; kinds are independent; a quiet window says nothing
// more; the limit is reached, freed and reached again.
#include "daemon/rpc/rate_limited_log.h"

#include <kj/async.h>
#include <kj/timer.h>
#include <spdlog/sinks/ostream_sink.h>

#include <catch2/catch.hpp>
#include <sstream>

namespace tfd {
namespace {

struct Fixture {
  kj::EventLoop loop;
  kj::WaitScope wait{loop};
  kj::TimerImpl timer{kj::origin<kj::TimePoint>()};
  std::ostringstream out;
  std::shared_ptr<spdlog::logger> logger;
  RateLimitedLog log;

  Fixture()
      : logger(std::make_shared<spdlog::logger>(
            "test", std::make_shared<spdlog::sinks::ostream_sink_st>(out))),
        log((logger->set_pattern("%v"), logger), timer, {3, 1 * kj::SECONDS}) {}

  void Advance(kj::Duration d) {
    timer.advanceTo(timer.now() + d);
    wait.poll();
  }
  // The lines logged since the last call.
  std::vector<std::string> Take() {
    std::vector<std::string> lines;
    std::istringstream in(out.str());
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    out.str("");
    return lines;
  }
};

TEST_CASE("a few lines per kind per window, then a summary of the rest") {
  Fixture f;
  for (int i = 0; i < 10; ++i) f.log.Warn("broken", "broken " + std::to_string(i));
  for (int i = 0; i < 2; ++i) f.log.Warn("refused", "refused " + std::to_string(i));
  CHECK(f.Take() == std::vector<std::string>{"broken 0", "broken 1", "broken 2", "refused 0",
                                             "refused 1"});
  f.Advance(1 * kj::SECONDS);
  CHECK(f.Take() == std::vector<std::string>{"... and 7 more like it (broken)"});

  // Freed, reached again.
  for (int i = 0; i < 5; ++i) f.log.Warn("broken", "again " + std::to_string(i));
  CHECK(f.Take().size() == 3);
  f.Advance(1 * kj::SECONDS);
  CHECK(f.Take() == std::vector<std::string>{"... and 2 more like it (broken)"});

  // A window within the limit says nothing more.
  f.log.Warn("broken", "quiet");
  f.Advance(2 * kj::SECONDS);
  CHECK(f.Take() == std::vector<std::string>{"quiet"});
}

TEST_CASE("a line after the window, before its timer fired, comes after the summary") {
  Fixture f;
  for (int i = 0; i < 4; ++i) f.log.Warn("shed", "shed " + std::to_string(i));
  f.timer.advanceTo(f.timer.now() + 1 * kj::SECONDS);  // the summary's timer has not run yet
  f.log.Warn("shed", "next");
  f.wait.poll();
  CHECK(f.Take() == std::vector<std::string>{"shed 0", "shed 1", "shed 2",
                                             "... and 1 more like it (shed)", "next"});
}

}  // namespace
}  // namespace tfd
