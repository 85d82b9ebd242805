//===- Args.h - Command-line options of the tools --------------*- C++ -*-===//
//
// A deliberately small parser: "--name value", "--name=value" and flags, one
// table of options per (sub)command (which also writes its --help), and typed
// getters whose errors name the option, what was expected and what was found
// (numbers read by core/ParseNumber.h). fp8-numerics and fp8-codegen use it.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_CORE_ARGS_H
#define FP8_CORE_ARGS_H

#include "core/Status.h"

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace fp8 {

/// One option of a (sub)command.
struct OptionSpec {
  std::string name;      ///< without the leading "--"
  std::string valueName; ///< "" for a flag
  std::string help;
  std::string defaultValue; ///< shown in --help; used by the getters
};

/// The parsed options of one (sub)command.
class Args {
public:
  /// `command` names the (sub)command in messages and in --help.
  Args(std::string command, std::vector<OptionSpec> specs);

  /// Parses argv[first, argc). Unknown options, missing values and stray
  /// positional arguments are errors.
  Status parse(int argc, char **argv, int first);

  /// True when the option (or flag) was given.
  bool has(const std::string &name) const;
  /// The given value, else the spec's default.
  std::string get(const std::string &name) const;
  /// An integer in [min, max] (core/ParseNumber.h's reading).
  Expected<int64_t> getInt(const std::string &name, int64_t min,
                           int64_t max) const;
  /// A finite floating-point number.
  Expected<double> getDouble(const std::string &name) const;
  /// A comma-separated list of integers, each in [min, max].
  Expected<std::vector<int64_t>> getIntList(const std::string &name,
                                            int64_t min, int64_t max) const;
  /// "<rows>x<cols>" with both positive.
  Expected<std::pair<int64_t, int64_t>> getShape(const std::string &name) const;

  /// The --help text of the subcommand, "usage: <tool> <command> [options]"
  /// first ("usage: <tool> [options]" for a tool without subcommands, whose
  /// command is its own name).
  std::string help(const std::string &tool, const std::string &summary) const;

private:
  const OptionSpec *find(const std::string &name) const;

  std::string command_;
  std::vector<OptionSpec> specs_;
  std::map<std::string, std::string> values_;
};

} // namespace fp8

#endif // FP8_CORE_ARGS_H
