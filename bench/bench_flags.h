// BenchFlags: the flags of one benchmark program, each declared once — its
// name, what its value is, its range, its help — with the variable its value
// goes to. Parse reads the command line against the declarations, Usage
// lists them with the defaults the variables held when declared, so a
// bench's help cannot disagree with what it parses.
//
// Errors are INVALID_ARGUMENT naming the flag and the value; --help or -h is
// CANCELLED. ParseOrExit does what every bench does with them: prints the
// usage and exits 0, or prints "PROGRAM: error: ..." and exits 2.
//
//   Setup o;
//   BenchFlags flags("scale_bench", "N tasks on loopback, started with tfctl");
//   flags.Text("tfd", "PATH", "the tfd binary", &o.tfd);
//   flags.IntList("tasks", 2, 256, "cluster sizes", &o.sizes);
//   flags.Int("steps", 1, 1000000, "fan-out steps measured per size", &o.steps);
//   flags.ParseOrExit(argc, argv);
//
// Every flag takes a value (`--steps 200`, or `--steps=200`) but switches,
// which take none. Thread-safety: none; one thread declares and parses.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace tfd::bench {

class BenchFlags {
 public:
  // Reads a flag's value; INVALID_ARGUMENT when it is not one.
  using Reader = std::function<Status(const std::string& value)>;

  BenchFlags(std::string program, std::string about);

  // Any text: a path, a name, a list read later.
  BenchFlags& Text(std::string_view name, std::string_view value_name, std::string_view help,
                   std::string* out);
  // One of `choices`.
  BenchFlags& Choice(std::string_view name, std::vector<std::string> choices,
                     std::string_view help, std::string* out);
  // A whole number in [lo, hi].
  BenchFlags& Int(std::string_view name, int64_t lo, int64_t hi, std::string_view help, int* out);
  BenchFlags& Int(std::string_view name, int64_t lo, int64_t hi, std::string_view help,
                  int64_t* out);
  // Comma-separated whole numbers, each in [lo, hi]; at least one.
  BenchFlags& IntList(std::string_view name, int64_t lo, int64_t hi, std::string_view help,
                      std::vector<int>* out);
  BenchFlags& IntList(std::string_view name, int64_t lo, int64_t hi, std::string_view help,
                      std::vector<int64_t>* out);
  // A number in [lo, hi].
  BenchFlags& Number(std::string_view name, double lo, double hi, std::string_view help,
                     double* out);
  // 0 or 1 (off or on), for a part of a run the default includes.
  BenchFlags& Bit(std::string_view name, std::string_view help, bool* out);
  // On when given; takes no value.
  BenchFlags& Switch(std::string_view name, std::string_view help, bool* out);
  // A value read by `read` (which names the flag in its errors).
  BenchFlags& Custom(std::string_view name, std::string_view value_name, std::string_view help,
                     Reader read);

  // The flags most benches share. --tfd: the tfd binary, $TFD when set,
  // else `built` (the one built with the bench); Parse fails NOT_FOUND when
  // it is not an executable. --json: a FiguresJson file.
  BenchFlags& TfdBinary(const std::string& built, std::string* out);
  BenchFlags& Json(std::string* out);

  // The default the usage shows for the flag declared last, in place of the
  // value its variable held ("N/8", "$TFD, else the one built here").
  BenchFlags& ShownDefault(std::string_view text);

  // The flag declared last must be given.
  BenchFlags& Required();

  Status Parse(int argc, char** argv) const;
  std::string Usage() const;
  void ParseOrExit(int argc, char** argv) const;

 private:
  struct Flag {
    std::string name;        // without dashes
    std::string value_name;  // empty for a switch
    std::string help;
    std::string shown_default;
    Reader read;             // null for a switch
    bool* on = nullptr;      // a switch's variable
    bool required = false;
  };
  BenchFlags& Add(Flag flag);
  const Flag* Find(std::string_view name) const;

  std::string program_;
  std::string about_;
  std::vector<Flag> flags_;
  std::vector<std::function<Status()>> checks_;  // after every flag is read
};

}  // namespace tfd::bench
