// ApplyFlag (tfd_flags.h): each kind's validation and error message, in one
// place, so every flag of a kind is checked and refused alike.
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <limits>
#include <optional>

#include "daemon/tfd_config.h"
#include "daemon/tfd_flags.h"

namespace tfd {
namespace {

template <typename... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <typename... F>
Overloaded(F...) -> Overloaded<F...>;

// strtoll/strtod as std::stoi/stod read (leading blanks and a sign
// allowed), without exceptions: nullopt when no number starts the text,
// it is out of range, or text follows it and `whole` asks for none.
template <typename T, typename Parse>
std::optional<T> ReadNumber(const std::string& text, bool whole, Parse parse) {
  const char* begin = text.c_str();
  char* end = nullptr;
  errno = 0;
  const T n = parse(begin, &end);
  if (end == begin || errno == ERANGE || (whole && *end != '\0')) return std::nullopt;
  return n;
}

Status ApplyInt(const IntFlag& kind, const FlagValue& v, TfdConfig& c) {
  auto n = ReadNumber<long long>(v.text, !kind.trailing_text_ignored,
                                 [](const char* s, char** e) { return std::strtoll(s, e, 10); });
  if (!n || *n < kind.min || *n > kind.max) {
    if (kind.max == std::numeric_limits<int>::max()) {
      return errors::InvalidArgument(v.source, " must be an integer of at least ", kind.min,
                                     ", not '", v.text, "'");
    }
    return errors::InvalidArgument(v.source, " must be an integer from ", kind.min, " to ",
                                   kind.max, kind.unit, ", not '", v.text, "'");
  }
  kind.set(c, *n);
  return OkStatus();
}

Status ApplySeconds(const SecondsFlag& kind, const FlagValue& v, TfdConfig& c) {
  auto s = ReadNumber<double>(v.text, !kind.trailing_text_ignored,
                              [](const char* t, char** e) { return std::strtod(t, e); });
  if (!s || !(*s > 0) || *s > 1e9) {
    return errors::InvalidArgument(v.source, " must be a positive number of seconds, not '",
                                   v.text, "'");
  }
  kind.set(c, std::chrono::milliseconds(std::max<int64_t>(1, static_cast<int64_t>(*s * 1000))));
  return OkStatus();
}

Status ApplyBytes(const BytesFlag& kind, const FlagValue& v, TfdConfig& c) {
  auto bytes = ParseByteSize(v.text);
  if (!bytes) {
    return errors::InvalidArgument(v.source, " must be a positive number of bytes, optionally "
                                   "with K, M, G or T, not '", v.text, "'");
  }
  if (kind.max != 0 && *bytes > kind.max) {
    return errors::InvalidArgument(v.source, " must be at most ", FormatBytes(kind.max), " (",
                                   kind.max_why, "), not ", FormatBytes(*bytes));
  }
  kind.set(c, *bytes);
  return OkStatus();
}

Status ApplyChoice(const ChoiceFlag& kind, const FlagValue& v, TfdConfig& c) {
  for (std::string_view choice : kind.choices) {
    if (choice == v.text) {
      kind.set(c, choice);
      return OkStatus();
    }
  }
  std::string listed;
  for (std::string_view choice : kind.choices) {
    listed += (listed.empty() ? "" : ", ") + std::string(choice);
  }
  return errors::InvalidArgument(v.source, " '", v.text, "' is not one of ", listed,
                                 kind.hint ? ": " + kind.hint(v.text) : "");
}

}  // namespace

Status ApplyFlag(const TfdFlag& flag, const FlagValue& value, TfdConfig& config) {
  return std::visit(
      Overloaded{
          [](const CommandLineFlag&) { return OkStatus(); },
          [&](const TextFlag& kind) {
            kind.set(config, value.text);
            return OkStatus();
          },
          [&](const SwitchFlag& kind) {
            kind.set(config);
            return OkStatus();
          },
          [&](const IntFlag& kind) { return ApplyInt(kind, value, config); },
          [&](const SecondsFlag& kind) { return ApplySeconds(kind, value, config); },
          [&](const BytesFlag& kind) { return ApplyBytes(kind, value, config); },
          [&](const ChoiceFlag& kind) { return ApplyChoice(kind, value, config); },
          [&](const CheckedFlag& kind) { return kind.set(config, value); },
          [&](const RemovedFlag& kind) {
            return errors::InvalidArgument(value.source, " was removed: ", kind.why);
          },
      },
      flag.kind);
}

}  // namespace tfd
