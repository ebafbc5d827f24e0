#include "rung/command_line.h"

#include <filesystem>

#include "os/this_process.h"
#include "rung/path_text.h"

namespace rung {

std::string this_command_line() {
  std::string out;
  const std::vector<std::string> args = this_process_arguments();
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string arg = args[i];
    if (i == 0) {
      const std::filesystem::path program = path_from_utf8(arg);
      // "rung.exe" is the command "rung" on Windows.
      arg = program.extension() == ".exe" ? program.stem().string() : program.filename().string();
      // rung-full is what the `rung` front becomes (cli/front.cpp): a record names the command typed.
      // The front keeps argv[0], but an emulator that runs the program by its path (qemu) does not.
      if (arg == "rung-full") arg = "rung";
    }
    if (arg.empty()) continue;
    bool plain = arg.find_first_of(" \t'\"$`\\*?;&|<>()") == std::string::npos;
    if (!out.empty()) out += ' ';
    out += plain ? arg : "'" + arg + "'";
  }
  return out.empty() ? "rung" : out;
}

}  // namespace rung
