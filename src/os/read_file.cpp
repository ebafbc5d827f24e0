#include "os/read_file.h"

#include <fstream>
#include <sstream>

namespace rung {

std::string read_text_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace rung
