// tfd's log formats: journal lines carry the syslog priority of their level
// on every line and no timestamp; JSON lines are objects a JSON parser
// reads back, whatever bytes the message held; the journal is detected
// only when $JOURNAL_STREAM names the very file stderr is open on.
#include <catch2/catch.hpp>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include <spdlog/logger.h>
#include <spdlog/sinks/ostream_sink.h>

#include "daemon/log_format.h"
#include "daemon/tfd_config.h"
#include "tests/integration/temp_dir.h"

namespace tfd {
namespace {

const std::string kTask = "/job:ps/replica:0/task:0";

// What a logger with `format` writes for each call of `log`.
std::string Written(LogFormat format, const std::function<void(spdlog::logger&)>& log) {
  std::ostringstream out;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_st>(out);
  spdlog::logger logger("test", sink);
  logger.set_level(spdlog::level::trace);
  logger.set_formatter(MakeLogFormatter(format, kTask));
  log(logger);
  return out.str();
}

TEST_CASE("journal lines: the level's priority on every line, no timestamp") {
  const std::string out = Written(LogFormat::kJournal, [](spdlog::logger& l) {
    l.debug("d");
    l.info("listening");
    l.warn("w");
    l.error("first\nsecond");
    l.critical("c");
  });
  CHECK(out == "<7>[" + kTask + "] d\n"
               "<6>[" + kTask + "] listening\n"
               "<4>[" + kTask + "] w\n"
               "<3>[" + kTask + "] first\n"
               "<3>[" + kTask + "] second\n"
               "<2>[" + kTask + "] c\n");
}

TEST_CASE("text lines: timestamp, level, task") {
  const std::string out = Written(LogFormat::kText, [](spdlog::logger& l) { l.warn("hello"); });
  CHECK(std::regex_match(out, std::regex(R"(\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}\] \[warning\] \[/job:ps/replica:0/task:0\] hello\n)")));
}

TEST_CASE("JSON lines parse back, with any bytes in the message") {
  const std::string hostile = std::string("quote \" back \\ nl \n tab \t bell \x07 del \x7f ") +
                              "é 日本 😀 bad \xff\xfe truncated \xe6\x97 overlong \xc0\xaf end";
  const std::string out = Written(LogFormat::kJson, [&](spdlog::logger& l) {
    l.info("plain");
    l.error("{}", hostile);
  });
  std::istringstream lines(out);
  std::string line;
  REQUIRE(std::getline(lines, line));
  auto first = nlohmann::json::parse(line);
  CHECK(first["level"] == "info");
  CHECK(first["task"] == kTask);
  CHECK(first["message"] == "plain");
  CHECK(std::regex_match(first["time"].get<std::string>(),
                         std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)")));
  REQUIRE(std::getline(lines, line));
  auto second = nlohmann::json::parse(line);  // throws on invalid UTF-8 or escapes
  CHECK(second["level"] == "error");
  const std::string message = second["message"];
  CHECK(message.find("quote \" back \\ nl \n tab \t bell \x07 del \x7f é 日本 😀") == 0);
  // Each invalid byte is one U+FFFD.
  CHECK(message.find("bad \xef\xbf\xbd\xef\xbf\xbd truncated \xef\xbf\xbd\xef\xbf\xbd overlong "
                     "\xef\xbf\xbd\xef\xbf\xbd end") != std::string::npos);
  CHECK_FALSE(std::getline(lines, line));
}

TEST_CASE("the journal is detected only when JOURNAL_STREAM names the file of the fd") {
  testing::TempDir dir;
  const int fd = open(dir.Write("stderr", "").c_str(), O_WRONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  struct stat st {};
  REQUIRE(fstat(fd, &st) == 0);
  const std::string mine = std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
  const std::string other_file = dir.Write("other", "");
  struct stat other {};
  REQUIRE(stat(other_file.c_str(), &other) == 0);
  const std::string theirs = std::to_string(other.st_dev) + ":" + std::to_string(other.st_ino);

  auto detect = [&](const char* value) {
    return DetectLogFormat([value](const char* name) {
      return std::string(name) == "JOURNAL_STREAM" ? value : nullptr;
    }, fd);
  };
  CHECK(detect(mine.c_str()) == LogFormat::kJournal);
  CHECK(detect(nullptr) == LogFormat::kText);
  CHECK(detect(theirs.c_str()) == LogFormat::kText);  // inherited, stderr redirected
  for (const char* bad : {"", "12", "a:b", "1:2x", ":", "1:-", "99999999999999999999999:1"}) {
    INFO("JOURNAL_STREAM='" << bad << "'");
    CHECK(detect(bad) == LogFormat::kText);
  }
  close(fd);
}

TEST_CASE("--log-format and TFD_LOG_FORMAT") {
  const std::string cluster = R"({"ps": ["127.0.0.1:2222"]})";
  auto parse = [&](std::vector<const char*> args, const char* env_value) {
    std::vector<const char*> argv = {"tfd", "--cluster", cluster.c_str(), "--job", "ps",
                                     "--task", "0"};
    argv.insert(argv.end(), args.begin(), args.end());
    return ParseTfdConfig(static_cast<int>(argv.size()), argv.data(), [env_value](const char* n) {
      return std::string(n) == "TFD_LOG_FORMAT" ? env_value : nullptr;
    });
  };
  auto none = parse({}, nullptr);
  REQUIRE(none.ok());
  CHECK_FALSE(none->log_format.has_value());
  auto json = parse({"--log-format", "json"}, nullptr);
  REQUIRE(json.ok());
  CHECK(json->log_format == LogFormat::kJson);
  auto env = parse({}, "journal");
  REQUIRE(env.ok());
  CHECK(env->log_format == LogFormat::kJournal);
  auto bad = parse({"--log-format", "xml"}, nullptr);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message() == "--log-format 'xml' is not one of text, journal, json");
  auto bad_env = parse({}, "JSON");
  REQUIRE_FALSE(bad_env.ok());
  CHECK(bad_env.status().message() == "TFD_LOG_FORMAT 'JSON' is not one of text, journal, json");
}

}  // namespace
}  // namespace tfd
