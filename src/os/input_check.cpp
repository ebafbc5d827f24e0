// A model named on a command line, checked before any work: opened (without
// blocking, never read) through the one reader, so the words are the reader's.
#include "os/read_file.h"
#include "rung/output_paths.h"

namespace rung {

Status check_model_file(const std::filesystem::path& path) {
  auto file = open_input_file(path, FileKind::kModel);
  if (!file) return file.error();
  return {};
}

}  // namespace rung
