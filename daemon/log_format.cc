#include "daemon/log_format.h"

#include <sys/stat.h>

#include <cinttypes>
#include <cstdio>
#include <ctime>

#include <fmt/format.h>
#include <spdlog/pattern_formatter.h>

namespace tfd {
namespace {

// syslog priorities (RFC 5424) for spdlog's levels.
int Priority(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::critical: return 2;
    case spdlog::level::err: return 3;
    case spdlog::level::warn: return 4;
    case spdlog::level::info: return 6;
    default: return 7;  // debug, trace
  }
}

std::string_view Payload(const spdlog::details::log_msg& msg) {
  return std::string_view(msg.payload.data(), msg.payload.size());
}

void Append(spdlog::memory_buf_t& dest, std::string_view text) {
  dest.append(text.data(), text.data() + text.size());
}

class JournalFormatter final : public spdlog::formatter {
 public:
  explicit JournalFormatter(std::string task) : task_(std::move(task)) {}

  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    const std::string prefix = fmt::format("<{}>[{}] ", Priority(msg.level), task_);
    Append(dest, prefix);
    std::string_view text = Payload(msg);
    // journald makes an entry per line: each gets the prefix, so a
    // multi-line error is an error on every line.
    for (size_t nl; (nl = text.find('\n')) != std::string_view::npos;) {
      Append(dest, text.substr(0, nl + 1));
      Append(dest, prefix);
      text.remove_prefix(nl + 1);
    }
    Append(dest, text);
    dest.push_back('\n');
  }
  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<JournalFormatter>(task_);
  }

 private:
  std::string task_;
};

class JsonFormatter final : public spdlog::formatter {
 public:
  explicit JsonFormatter(std::string task) : task_(JsonEscape(task)) {}

  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    const auto since_epoch = msg.time.time_since_epoch();
    const std::time_t seconds = std::chrono::duration_cast<std::chrono::seconds>(since_epoch).count();
    const auto millis =
        std::chrono::duration_cast<std::chrono::milliseconds>(since_epoch).count() % 1000;
    std::tm utc{};
    gmtime_r(&seconds, &utc);
    const auto level = spdlog::level::to_string_view(msg.level);
    fmt::format_to(std::back_inserter(dest),
                   R"({{"time":"{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z","level":"{}",)"
                   R"("task":"{}","message":"{}"}})",
                   utc.tm_year + 1900, utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min,
                   utc.tm_sec, millis, std::string_view(level.data(), level.size()), task_,
                   JsonEscape(Payload(msg)));
    dest.push_back('\n');
  }
  std::unique_ptr<spdlog::formatter> clone() const override {
    auto copy = std::make_unique<JsonFormatter>("");
    copy->task_ = task_;
    return copy;
  }

 private:
  std::string task_;  // escaped
};

// The length of the valid UTF-8 sequence at the start of `s`, 0 if none.
size_t Utf8Length(std::string_view s) {
  const auto b = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const auto cont = [&](size_t i) { return i < s.size() && (b(i) & 0xC0) == 0x80; };
  const unsigned char c = b(0);
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (!cont(1) || !cont(2)) return 0;
    if (c == 0xE0 && b(1) < 0xA0) return 0;  // overlong
    if (c == 0xED && b(1) > 0x9F) return 0;  // surrogates
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!cont(1) || !cont(2) || !cont(3)) return 0;
    if (c == 0xF0 && b(1) < 0x90) return 0;  // overlong
    if (c == 0xF4 && b(1) > 0x8F) return 0;  // beyond U+10FFFF
    return 4;
  }
  return 0;
}

}  // namespace

std::optional<LogFormat> ParseLogFormat(std::string_view name) {
  if (name == "text") return LogFormat::kText;
  if (name == "journal") return LogFormat::kJournal;
  if (name == "json") return LogFormat::kJson;
  return std::nullopt;
}

LogFormat DetectLogFormat(const std::function<const char*(const char*)>& getenv, int fd) {
  const char* stream = getenv("JOURNAL_STREAM");
  if (stream == nullptr) return LogFormat::kText;
  uintmax_t device = 0, inode = 0;
  char extra = 0;
  if (std::sscanf(stream, "%ju:%ju%c", &device, &inode, &extra) != 2) return LogFormat::kText;
  struct stat st {};
  if (fstat(fd, &st) != 0) return LogFormat::kText;
  return static_cast<uintmax_t>(st.st_dev) == device && static_cast<uintmax_t>(st.st_ino) == inode
             ? LogFormat::kJournal
             : LogFormat::kText;
}

std::unique_ptr<spdlog::formatter> MakeLogFormatter(LogFormat format, const std::string& task) {
  switch (format) {
    case LogFormat::kJournal: return std::make_unique<JournalFormatter>(task);
    case LogFormat::kJson: return std::make_unique<JsonFormatter>(task);
    case LogFormat::kText: break;
  }
  return std::make_unique<spdlog::pattern_formatter>("[%Y-%m-%d %H:%M:%S.%e] [%l] [" + task +
                                                     "] %v");
}

std::string JsonEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  while (!text.empty()) {
    const char c = text[0];
    const size_t n = Utf8Length(text);
    if (n == 0) {
      out += "\\ufffd";
      text.remove_prefix(1);
      continue;
    }
    if (n > 1) {
      out.append(text.substr(0, n));
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned char>(c));
    } else {
      out += c;
    }
    text.remove_prefix(n);
  }
  return out;
}

}  // namespace tfd
