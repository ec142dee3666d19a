#include "daemon/tfd_flag_sources.h"

#include <algorithm>
#include <sstream>
#include <vector>

#include <boost/program_options.hpp>

#include "common/file_read.h"
#include "daemon/tfd_flags_doc.h"

namespace tfd {
namespace po = boost::program_options;
namespace {

// Wide enough that no variable's name is broken across lines.
constexpr unsigned kHelpWidth = 100;
// A --config file holds a line per flag: far less than this, which only
// keeps a path such as /dev/zero from filling memory.
constexpr size_t kMaxConfigFileBytes = size_t{1} << 20;

bool IsSwitch(const TfdFlag& flag) { return std::holds_alternative<SwitchFlag>(flag.kind); }

void AddOption(const TfdFlag& flag, const std::string& description,
               po::options_description& to) {
  std::string name(flag.name);
  if (flag.short_name != '\0') name += std::string(",") + flag.short_name;
  if (flag.name == "help") {
    to.add_options()(name.c_str(),
                     po::value<std::string>()->implicit_value("text")->value_name("FORMAT"),
                     description.c_str());
  } else if (std::holds_alternative<CommandLineFlag>(flag.kind)) {
    to.add_options()(name.c_str(), description.c_str());
  } else if (IsSwitch(flag)) {
    to.add_options()(name.c_str(), po::bool_switch(), description.c_str());
  } else {
    to.add_options()(name.c_str(), po::value<std::string>(), description.c_str());
  }
}

// Every flag, listed ones under their group's caption; removed ones
// hidden, known only so that they can be refused by name.
struct Options {
  po::options_description listed;
  po::options_description all;
};

Options BuildOptions() {
  std::vector<po::options_description> groups;
  for (int g = 0; g < kNumFlagGroups; ++g) {
    groups.emplace_back(std::string(FlagGroupTitle(static_cast<FlagGroup>(g))), kHelpWidth,
                        kHelpWidth / 2);
  }
  po::options_description hidden;
  for (const TfdFlag& flag : TfdFlags()) {
    if (IsListed(flag)) {
      AddOption(flag, FlagHelpText(flag), groups[static_cast<int>(flag.group)]);
    } else {
      AddOption(flag, "", hidden);
    }
  }
  Options options{po::options_description(kHelpWidth, kHelpWidth / 2),
                  po::options_description(kHelpWidth, kHelpWidth / 2)};
  for (const auto& group : groups) options.listed.add(group);
  options.all.add(options.listed).add(hidden);
  return options;
}

// What po::parse_environment does, through `getenv` (so tests and
// embedders choose the environment) rather than the process's environ.
// Empty variables count as unset; a switch is on for "1" or "true".
po::parsed_options FromEnvironment(const po::options_description& known,
                                   const std::function<const char*(const char*)>& getenv) {
  po::parsed_options parsed(&known);
  for (const TfdFlag& flag : TfdFlags()) {
    if (!HasEnvName(flag)) continue;
    const char* v = getenv(EnvName(flag.name).c_str());
    if (v == nullptr || *v == '\0') continue;
    const std::string name(flag.name);
    if (!IsSwitch(flag)) {
      parsed.options.push_back(po::option(name, {v}));
    } else if (std::string_view(v) == "1" || std::string_view(v) == "true") {
      parsed.options.push_back(po::option(name, {}));
    }
  }
  return parsed;
}

// The three maps, or the error of the source that could not be read.
struct Maps {
  po::variables_map flags, env, file;
  std::string file_name;
};

Status ReadEnvAndFile(const po::options_description& known,
                      const std::function<const char*(const char*)>& getenv, Maps& maps) {
  try {
    po::store(FromEnvironment(known, getenv), maps.env);
  } catch (const po::error& e) {
    return errors::InvalidArgument("the TFD_* variables: ", e.what());
  }
  for (const po::variables_map* m : {&maps.flags, &maps.env}) {
    if (maps.file_name.empty() && m->count("config")) {
      maps.file_name = (*m)["config"].as<std::string>();
    }
  }
  if (maps.file_name.empty()) return OkStatus();
  auto text = ReadFileAtMost(maps.file_name, kMaxConfigFileBytes, "file");
  if (!text.ok()) return errors::InvalidArgument("--config: ", text.status().message());
  std::istringstream in(*text);
  try {
    po::store(po::parse_config_file(in, known), maps.file);
  } catch (const po::error& e) {
    return errors::InvalidArgument("--config '", maps.file_name, "': ", e.what());
  }
  return OkStatus();
}

// The first source that sets the flag, as FlagValues holds it.
std::optional<FlagValue> Winner(const TfdFlag& flag, const Maps& maps) {
  const std::string name(flag.name);
  const std::string sources[] = {"--" + name, EnvName(name),
                                 name + " in '" + maps.file_name + "'"};
  const po::variables_map* in[] = {&maps.flags, &maps.env, &maps.file};
  for (int i = 0; i < 3; ++i) {
    if (!in[i]->count(name)) continue;
    const po::variable_value& v = (*in[i])[name];
    if (IsSwitch(flag)) {
      if (v.as<bool>()) return FlagValue{"", sources[i]};
    } else if (!v.defaulted()) {
      return FlagValue{v.as<std::string>(), sources[i]};
    }
  }
  return std::nullopt;
}

}  // namespace

const FlagValue* FlagValues::Find(std::string_view name) const {
  auto it = values.find(name);
  return it == values.end() ? nullptr : &it->second;
}

StatusOr<FlagValues> ReadFlagValues(int argc, const char* const* argv,
                                    const std::function<const char*(const char*)>& getenv) {
  const Options options = BuildOptions();
  Maps maps;
  try {
    po::store(po::parse_command_line(argc, argv, options.all), maps.flags);
  } catch (const po::error& e) {
    return errors::InvalidArgument(e.what());
  }
  FlagValues values;
  if (maps.flags.count("help")) {
    values.help = maps.flags["help"].as<std::string>();
    if (std::find(std::begin(kHelpFormats), std::end(kHelpFormats), *values.help) ==
        std::end(kHelpFormats)) {
      return errors::InvalidArgument("--help '", *values.help,
                                     "' is not one of text, man, markdown, bash-completion");
    }
    return values;
  }
  if (maps.flags.count("version")) {
    values.version = true;
    return values;
  }
  TFD_RETURN_IF_ERROR(ReadEnvAndFile(options.all, getenv, maps));
  for (const TfdFlag& flag : TfdFlags()) {
    if (!HasEnvName(flag)) continue;
    if (auto v = Winner(flag, maps)) values.values.emplace(std::string(flag.name), *std::move(v));
  }
  return values;
}

std::string TfdUsage() {
  std::ostringstream usage;
  usage << "usage: tfd --cluster SPEC --job NAME --task N [options]\n" << BuildOptions().listed;
  return usage.str();
}

}  // namespace tfd
