#include "rung/command_line.h"

#include <filesystem>

#include "os/read_file.h"

namespace rung {

std::string this_command_line() {
  // The kernel's record of the arguments, NUL-separated (a pseudo-file: read to its end, bounded).
  std::string raw = read_system_file("/proc/self/cmdline").value_or(""), out;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= raw.size(); ++i) {
    if (i < raw.size() && raw[i] != '\0') continue;
    if (i > start) {
      std::string arg = raw.substr(start, i - start);
      if (start == 0) arg = std::filesystem::path(arg).filename().string();
      // rung-full is what the `rung` front becomes (cli/front.cpp): a record names the command typed.
      // The front keeps argv[0], but an emulator that runs the program by its path (qemu) does not.
      if (start == 0 && arg == "rung-full") arg = "rung";
      bool plain = arg.find_first_of(" \t'\"$`\\*?;&|<>()") == std::string::npos;
      if (!out.empty()) out += ' ';
      out += plain ? arg : "'" + arg + "'";
    }
    start = i + 1;
  }
  return out.empty() ? "rung" : out;
}

}  // namespace rung
