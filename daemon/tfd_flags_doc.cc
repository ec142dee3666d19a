#include "daemon/tfd_flags_doc.h"

#include <sstream>
#include <vector>

namespace tfd {
namespace {

std::string Join(std::span<const std::string_view> words, std::string_view separator) {
  std::string joined;
  for (std::string_view word : words) {
    if (!joined.empty()) joined += separator;
    joined += word;
  }
  return joined;
}

bool IsSwitch(const TfdFlag& flag) { return std::holds_alternative<SwitchFlag>(flag.kind); }

// The variable as users set it: a switch's with the value that turns it on.
std::string EnvSetting(const TfdFlag& flag) {
  if (!HasEnvName(flag)) return "";
  return EnvName(flag.name) + (IsSwitch(flag) ? "=1" : "");
}

// "--log-level trace|debug|...", "--listen HOST:PORT", "--help[=FORMAT]".
std::string Synopsis(const TfdFlag& flag, std::string_view choice_separator) {
  std::string text = "--" + std::string(flag.name);
  if (flag.name == "help") return text + "[=FORMAT]";
  if (auto choices = FlagChoices(flag); !choices.empty()) {
    return text + " " + Join(choices, choice_separator);
  }
  if (!flag.value_name.empty()) text += " " + std::string(flag.value_name);
  return text;
}

// roff: a backslash is \e, a dash \- (so that man prints and searches it as
// a dash), and no line starts with a control character.
std::string Roff(std::string_view text) {
  std::string out;
  for (char ch : text) {
    if (ch == '\\') {
      out += "\\e";
    } else if (ch == '-') {
      out += "\\-";
    } else {
      out += ch;
    }
  }
  if (!out.empty() && (out[0] == '.' || out[0] == '\'')) out.insert(0, "\\&");
  return out;
}

// A table cell's text: | would end the cell, * start emphasis.
std::string MarkdownCell(std::string_view text) {
  std::string out;
  for (char ch : text) {
    if (ch == '|' || ch == '*') out += '\\';
    out += ch;
  }
  return out;
}

template <typename F>
void ForEachListedGroup(F f) {
  for (int g = 0; g < kNumFlagGroups; ++g) {
    const auto group = static_cast<FlagGroup>(g);
    std::vector<const TfdFlag*> flags;
    for (const TfdFlag& flag : TfdFlags()) {
      if (flag.group == group && IsListed(flag)) flags.push_back(&flag);
    }
    if (!flags.empty()) f(group, flags);
  }
}

}  // namespace

std::string FlagHelpText(const TfdFlag& flag) {
  std::string text;
  if (auto choices = FlagChoices(flag); !choices.empty()) text = Join(choices, "|") + ": ";
  text += flag.help;
  if (!flag.default_text.empty()) text += "; default " + std::string(flag.default_text);
  if (HasEnvName(flag)) text += " (" + EnvSetting(flag) + ")";
  return text;
}

std::string TfdManPage(std::string_view version) {
  std::ostringstream out;
  out << ".TH TFD 1 \"\" \"tfd " << Roff(version) << "\" \"User Commands\"\n"
      << ".SH NAME\ntfd \\- one task of a tfd cluster (parameter server or worker)\n"
      << ".SH SYNOPSIS\n.B tfd\n\\-\\-cluster \\fISPEC\\fR \\-\\-job \\fINAME\\fR \\-\\-task "
         "\\fIN\\fR [\\fIOPTION\\fR]...\n"
      << ".SH DESCRIPTION\nServes one task of a cluster (its variables, queues and kernels) "
         "to the cluster's other tasks and clients over Cap'n Proto RPC, until SIGTERM or "
         "SIGINT.\n"
      << Roff("Every flag but --help and --version is also an environment variable (ENVIRONMENT) "
              "and a NAME = VALUE line of a --config file, NAME the flag without its dashes. A "
              "flag wins over its variable, the variable over the file, and all three over "
              "TF_CONFIG.")
      << "\n.SH OPTIONS\n";
  ForEachListedGroup([&](FlagGroup group, const std::vector<const TfdFlag*>& flags) {
    out << ".SS " << Roff(FlagGroupTitle(group)) << "\n";
    for (const TfdFlag* flag : flags) {
      out << ".TP\n\\fB" << Roff(Synopsis(*flag, "|")) << "\\fR";
      if (flag->short_name != '\0') out << ", \\fB\\-" << flag->short_name << "\\fR";
      out << "\n" << Roff(flag->help) << ".";
      if (!flag->default_text.empty()) out << " Default: " << Roff(flag->default_text) << ".";
      out << "\n";
    }
  });
  out << ".SH ENVIRONMENT\n";
  for (const TfdFlag& flag : TfdFlags()) {
    if (!IsListed(flag) || !HasEnvName(flag)) continue;
    out << ".TP\n.B " << Roff(EnvSetting(flag)) << "\nas \\fB\\-\\-" << Roff(flag.name)
        << "\\fR\n";
  }
  out << ".TP\n.B TF_CONFIG\n"
      << Roff("TensorFlow's JSON: the cluster (\"cluster\"), and this task's job and index "
              "(\"task\": {\"type\", \"index\"}), for what the flags and variables leave unset.")
      << "\n.SH EXIT STATUS\n"
      << ".TP\n.B 0\nstopped cleanly, after SIGTERM or SIGINT.\n"
      << ".TP\n.B 1\nthe task could not run (its address is taken, a file cannot be read, ...).\n"
      << ".TP\n.B 2\nbad flags or configuration; the error names the flag, variable or file.\n";
  return out.str();
}

std::string TfdFlagsMarkdown() {
  std::ostringstream out;
  bool first = true;
  ForEachListedGroup([&](FlagGroup group, const std::vector<const TfdFlag*>& flags) {
    out << (first ? "" : "\n") << "**" << FlagGroupTitle(group) << "**\n\n"
        << "| flag | variable | default | meaning |\n|---|---|---|---|\n";
    first = false;
    for (const TfdFlag* flag : flags) {
      std::string names = "`" + MarkdownCell(Synopsis(*flag, "|")) + "`";
      if (flag->short_name != '\0') names += ", `-" + std::string(1, flag->short_name) + "`";
      const std::string env = HasEnvName(*flag) ? "`" + EnvSetting(*flag) + "`" : "";
      const std::string default_text =
          flag->default_text.empty() ? "" : MarkdownCell(flag->default_text);
      out << "| " << names << " | " << env << " | " << default_text << " | "
          << MarkdownCell(flag->help) << " |\n";
    }
  });
  return out.str();
}

std::string TfdBashCompletion() {
  std::ostringstream words, cases;
  for (const TfdFlag& flag : TfdFlags()) {
    if (!IsListed(flag)) continue;
    words << (words.tellp() > 0 ? " " : "") << "--" << flag.name;
    const std::string_view v = flag.value_name;
    if (auto choices = FlagChoices(flag); !choices.empty()) {
      cases << "    --" << flag.name << ") _tfd_offer \"" << Join(choices, " ") << "\" ;;\n";
    } else if (v == "FILE" || v == "SPEC") {
      cases << "    --" << flag.name << ") _tfd_paths -f ;;\n";
    } else if (v == "DIR") {
      cases << "    --" << flag.name << ") _tfd_paths -d ;;\n";
    } else if (!v.empty()) {
      cases << "    --" << flag.name << ") ;;  # " << v << ": the user's own\n";
    }
  }
  std::ostringstream out;
  out << "# bash completion for tfd, written by `tfd --help=bash-completion` from tfd's table of\n"
         "# flags (daemon/tfd_flags.cc); meson installs it beside tfctl's.\n\n"
         "_tfd_offer() { mapfile -t COMPREPLY < <(compgen -W \"$1\" -- \"$cur\"); }\n"
         "_tfd_paths() {\n"
         "  compopt -o filenames 2>/dev/null\n"
         "  mapfile -t COMPREPLY < <(compgen \"$1\" -- \"$cur\")\n"
         "}\n\n"
         "_tfd() {\n"
         "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]} joined=\"\"\n"
         "  COMPREPLY=()\n"
         "  # bash splits --flag=value at the '='.\n"
         "  if [[ $cur == = ]]; then\n"
         "    cur=\"\" joined=1\n"
         "  elif [[ $prev == = ]] && ((COMP_CWORD >= 2)); then\n"
         "    prev=${COMP_WORDS[COMP_CWORD - 2]} joined=1\n"
         "  fi\n"
         "  case $prev in\n"
         "    --help) [[ -n $joined ]] && _tfd_offer \"text man markdown bash-completion\" ;;\n"
      << cases.str()
      << "    *) _tfd_offer \"" << words.str() << "\" ;;\n"
         "  esac\n"
         "}\n"
         "complete -F _tfd tfd\n";
  return out.str();
}

}  // namespace tfd
