// Helpers the `rung parity` tests share: running the CLI on two sides, writing
// tensors and gate files, finding real images.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "session/tensor_file.h"
#include "test_support.h"

namespace rung::test {

inline void write_text(const std::filesystem::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
}

inline std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline Tensor float_tensor(const std::string& name, std::vector<std::int64_t> shape, const std::vector<float>& values) {
  Tensor t;
  t.name = name;
  t.type = ElementType::kFloat;
  t.shape = std::move(shape);
  t.bytes.resize(values.size() * sizeof(float));
  std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
  return t;
}

// A side: the model on a runtime build (a directory, so the search never matters), optionally on the simulated EP.
inline std::string side(const std::filesystem::path& model, const std::string& version = "1.30.0", const std::string& extra = "") {
  return "'" + model.string() + ",ort=" + runtime_dir(version).string() + extra + "'";
}
inline std::string sim_ep_side(const std::filesystem::path& model, const std::string& options = "") {
  return side(model, "1.30.0", ",rung=" + sim_ep_path().string() + options);
}

// `rung parity` with the given arguments, away from any RUNG_ORT_DIR of the caller.
inline CommandResult parity(const std::string& args) {
  return run_command("env -u RUNG_ORT_DIR '" + cli_path().string() + "' parity " + args);
}

// Real photographs and scans shipped by Debian's python3-skimage.
inline std::filesystem::path skimage_image(const std::string& name) {
  const std::filesystem::path p = std::filesystem::path("/usr/lib/python3/dist-packages/skimage/data") / name;
  if (!std::filesystem::exists(p)) {
    ADD_FAILURE() << p << " is missing: install python3-skimage (tools/bootstrap.sh does)";
  }
  return p;
}

}  // namespace rung::test
