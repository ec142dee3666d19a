// How tfd writes its log lines, chosen by --log-format (TFD_LOG_FORMAT):
//   text     "[2026-11-25 01:46:32.899] [info] [/job:ps/replica:0/task:0] message"
//   journal  "<6>[/job:ps/replica:0/task:0] message": the level as a syslog
//            priority prefix (sd-daemon(3)) that journald turns into the
//            entry's PRIORITY, no timestamp (the journal keeps its own);
//            each line of a multi-line message carries the prefix
//   json     one object per line, for log shippers:
//            {"time":"2026-11-25T01:46:32.899Z","level":"info","task":"...","message":"..."}
//            (UTC; the message escaped, invalid UTF-8 replaced by U+FFFD)
// Without the flag a tfd whose stderr is the stream systemd gave it
// ($JOURNAL_STREAM names it) writes `journal`, else `text`.
//
//   logger->set_formatter(MakeLogFormatter(format, task));
//
// Thread-safety: formatters are used under spdlog's sink lock; the rest are
// plain functions.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <spdlog/formatter.h>

namespace tfd {

enum class LogFormat { kText, kJournal, kJson };

// "text", "journal", "json"; nullopt for anything else.
std::optional<LogFormat> ParseLogFormat(std::string_view name);

// kJournal when $JOURNAL_STREAM ("DEVICE:INODE", set by systemd for a
// unit's stdout and stderr) names the file `fd` is open on; kText
// otherwise (unset, malformed, or naming another file: a child whose
// stderr was redirected inherits the variable but not the stream).
LogFormat DetectLogFormat(const std::function<const char*(const char*)>& getenv, int fd);

std::unique_ptr<spdlog::formatter> MakeLogFormatter(LogFormat format, const std::string& task);

// `text` as a JSON string's contents: quotes, backslashes and control
// characters escaped, invalid UTF-8 bytes replaced by U+FFFD.
std::string JsonEscape(std::string_view text);

}  // namespace tfd
