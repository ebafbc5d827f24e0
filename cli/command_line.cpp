// The command line as typed: a record's provenance (bench, conform).
#include <filesystem>
#include <fstream>
#include <sstream>

#include "commands.h"

namespace rung::cli {

std::string command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  std::string raw = s.str(), out;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= raw.size(); ++i) {
    if (i < raw.size() && raw[i] != '\0') continue;
    if (i > start) {
      std::string arg = raw.substr(start, i - start);
      if (start == 0) arg = std::filesystem::path(arg).filename().string();
      bool plain = arg.find_first_of(" \t'\"$`\\*?;&|<>()") == std::string::npos;
      if (!out.empty()) out += ' ';
      out += plain ? arg : "'" + arg + "'";
    }
    start = i + 1;
  }
  return out.empty() ? "rung" : out;
}

}  // namespace rung::cli
