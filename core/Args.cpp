//===- Args.cpp - Command-line options of the tools -----------------------===//

#include "core/Args.h"

#include "core/ParseNumber.h"

#include <optional>
#include <sstream>

namespace fp8 {

Args::Args(std::string command, std::vector<OptionSpec> specs)
    : command_(std::move(command)), specs_(std::move(specs)) {}

const OptionSpec *Args::find(const std::string &name) const {
  for (const OptionSpec &s : specs_)
    if (s.name == name)
      return &s;
  return nullptr;
}

Status Args::parse(int argc, char **argv, int first) {
  for (int i = first; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0)
      return errorf("expected an option (--name) for '", command_, "', found '",
                    arg, "'");
    std::string name = arg.substr(2), value;
    bool inlineValue = false;
    if (size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      inlineValue = true;
    }
    const OptionSpec *spec = find(name);
    if (!spec) {
      std::string known;
      for (const OptionSpec &s : specs_)
        known += (known.empty() ? "--" : ", --") + s.name;
      return errorf("unknown option '--", name, "' for '", command_,
                    "' (expected one of: ", known, ")");
    }
    if (spec->valueName.empty()) {
      if (inlineValue)
        return errorf("expected no value for the flag --", name, ", found '",
                      value, "'");
      values_[name] = "1";
      continue;
    }
    if (!inlineValue) {
      if (i + 1 >= argc)
        return errorf("expected a value (", spec->valueName, ") after --",
                      name);
      value = argv[++i];
    }
    values_[name] = value;
  }
  return Status::ok();
}

bool Args::has(const std::string &name) const {
  return values_.count(name) != 0;
}

std::string Args::get(const std::string &name) const {
  auto it = values_.find(name);
  if (it != values_.end())
    return it->second;
  const OptionSpec *spec = find(name);
  return spec ? spec->defaultValue : std::string();
}

/// An integer in [min, max] (core/ParseNumber.h: decimal digits with an
/// optional leading '-', no spaces, no '+', no trailing text, no clamping),
/// or "expected <what> to be an integer in [min, max], found '<text>'".
static Expected<int64_t> parseInt(const std::string &text,
                                  const std::string &what, int64_t min,
                                  int64_t max) {
  return parseInteger(text, min, max, what);
}

Expected<int64_t> Args::getInt(const std::string &name, int64_t min,
                               int64_t max) const {
  return parseInt(get(name), "--" + name, min, max);
}

Expected<double> Args::getDouble(const std::string &name) const {
  const std::string text = get(name);
  if (std::optional<double> v = parseFinite(text))
    return *v;
  return errorf("expected --", name, " to be a finite number, found '", text,
                "'");
}

Expected<std::vector<int64_t>>
Args::getIntList(const std::string &name, int64_t min, int64_t max) const {
  std::vector<int64_t> out;
  const std::string text = get(name);
  if (!text.empty() && text.back() == ',')
    return errorf("expected --", name,
                  " to be a comma-separated list of integers, found '", text,
                  "'");
  std::istringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    Expected<int64_t> v = parseInt(item, "each element of --" + name, min, max);
    if (!v)
      return v.status();
    out.push_back(*v);
  }
  if (out.empty())
    return errorf("expected --", name,
                  " to be a comma-separated list of integers, found '", text,
                  "'");
  return out;
}

Expected<std::pair<int64_t, int64_t>>
Args::getShape(const std::string &name) const {
  std::string text = get(name);
  size_t x = text.find('x');
  if (x == std::string::npos)
    return errorf("expected --", name, " to be <rows>x<cols>, found '", text,
                  "'");
  std::string what = "each dimension of --" + name;
  Expected<int64_t> r = parseInt(text.substr(0, x), what, 1, int64_t(1) << 31);
  if (!r)
    return r.status();
  Expected<int64_t> c = parseInt(text.substr(x + 1), what, 1, int64_t(1) << 31);
  if (!c)
    return c.status();
  return std::make_pair(*r, *c);
}

std::string Args::help(const std::string &tool,
                       const std::string &summary) const {
  std::ostringstream os;
  os << "usage: " << tool;
  if (command_ != tool)
    os << " " << command_;
  os << " [options]\n\n" << summary << "\n\noptions:\n";
  const size_t indent = 28, width = 80;
  for (const OptionSpec &s : specs_) {
    std::string left = "  --" + s.name;
    if (!s.valueName.empty())
      left += " " + s.valueName;
    std::string text = s.help;
    if (!s.defaultValue.empty())
      text += " (default " + s.defaultValue + ")";
    // Word-wrap the description into the right-hand column.
    os << left;
    size_t col = left.size();
    if (col >= indent) {
      os << "\n";
      col = 0;
    }
    os << std::string(indent - col, ' ');
    col = indent;
    std::istringstream words(text);
    std::string word;
    bool first = true;
    while (words >> word) {
      if (!first && col + 1 + word.size() > width) {
        os << "\n" << std::string(indent, ' ');
        col = indent;
      } else if (!first) {
        os << ' ';
        ++col;
      }
      os << word;
      col += word.size();
      first = false;
    }
    os << "\n";
  }
  return os.str();
}

} // namespace fp8
