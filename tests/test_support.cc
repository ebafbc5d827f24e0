#include <cstring>
#include "test_support.h"

#include <gtest/gtest.h>
#include <png.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "rung/software_gpu.h"

namespace rung::test {

std::filesystem::path copy_cli_to(const std::filesystem::path& dir) {
  std::filesystem::copy_file(cli_path(), dir / "rung");
  std::filesystem::copy_file(cli_path().parent_path() / "rung-full", dir / "rung-full");
  return dir / "rung";
}

std::filesystem::path make_temp_dir(const std::string& prefix) {
  std::string tmpl = (std::filesystem::temp_directory_path() / (prefix + ".XXXXXX")).string();
  if (mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + tmpl);
  return tmpl;
}

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::filesystem::path make_plugin_dir(const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir / "plugins");
  std::filesystem::copy_file(sim_ep_path(), dir / "plugins" / "librung_sim_ep.so",
                             std::filesystem::copy_options::overwrite_existing);
  return dir / "plugins";
}

std::filesystem::path make_fake_gpu_runtime(const std::filesystem::path& dir, const std::string& provider_version,
                                            const std::vector<std::string>& providers) {
  namespace fs = std::filesystem;
  fs::create_directories(dir);
  fs::create_symlink(runtime_dir("1.30.0") / "libonnxruntime.so.1", dir / "libonnxruntime.so.1");
  fs::copy_file(runtime_dir("1.29") / "libonnxruntime_providers_shared.so", dir / "libonnxruntime_providers_shared.so");
  for (const auto& p : providers) {
    fs::copy_file(fake_libraries_dir() / ("ort-" + provider_version) / p, dir / p);
  }
  fs::copy(fake_libraries_dir() / "vendor", dir / "vendor", fs::copy_options::recursive);
  return dir / "libonnxruntime.so.1";
}

CommandResult run_command(const std::string& command) {
  auto dir = make_temp_dir("rung-cmd");
  auto out = dir / "out", err = dir / "err";
  std::string full = command + " >'" + out.string() + "' 2>'" + err.string() + "' </dev/null";
  int status = std::system(full.c_str());
  CommandResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = read_file(out);
  r.err = read_file(err);
  std::filesystem::remove_all(dir);
  return r;
}

CommandResult run_chromium(const std::string& mode, const std::filesystem::path& html, const std::filesystem::path& profile_dir) {
  auto which = run_command("command -v chromium");
  if (which.exit_code != 0) {
    ADD_FAILURE() << "chromium is not installed: tools/bootstrap.sh installs it";
    return which;
  }
  // Under qemu (tools/aarch64-run), /proc/cpuinfo is an ARM board's: Chromium, a host
  // program, is given the host's back, or it refuses to start for want of SSE3.
  const char* host = std::getenv("RUNG_HOST_PROGRAM_PREFIX");
  const std::string prefix = host != nullptr && *host ? std::string(host) + " " : "";
  return run_command(prefix + "timeout 120 chromium --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking "
                     "--disable-component-update --disable-sync --user-data-dir='" +
                     profile_dir.string() + "' " + mode + " 'file://" + html.string() + "'");
}

Image decode_png(const std::filesystem::path& file) {
  Image img;
  png_image p{};
  p.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&p, file.c_str())) return img;
  p.format = PNG_FORMAT_RGBA;
  img.rgba.resize(PNG_IMAGE_SIZE(p));
  if (!png_image_finish_read(&p, nullptr, img.rgba.data(), 0, nullptr)) {
    png_image_free(&p);
    return {};
  }
  img.width = static_cast<int>(p.width);
  img.height = static_cast<int>(p.height);
  return img;
}

std::filesystem::path source_path(const std::string& rel) { return fixtures_dir().parent_path().parent_path() / rel; }
std::filesystem::path schema_path(const std::string& name) { return source_path("schemas") / name; }

std::string schema_errors(const std::filesystem::path& schema, const std::filesystem::path& record) {
  // Debian's interpreter, where python3-jsonschema installs (a pyenv or venv python may lack it).
  const std::string python = "/usr/bin/python3";
  auto have = run_command(python + " -c 'import jsonschema'");
  if (have.exit_code != 0) {
    ADD_FAILURE() << "python3-jsonschema is missing (" << have.err << "): install it with tools/bootstrap.sh";
    return "no validator";
  }
  const std::string script =
      "import json, sys, jsonschema\n"
      "schema = json.load(open(sys.argv[1]))\n"
      "jsonschema.Draft202012Validator.check_schema(schema)\n"
      "errors = list(jsonschema.Draft202012Validator(schema).iter_errors(json.load(open(sys.argv[2]))))\n"
      "for e in errors: print(e.message, 'at', list(e.absolute_path))\n"
      "sys.exit(1 if errors else 0)\n";
  const std::filesystem::path py = record.parent_path() / "validate.py";
  std::ofstream(py) << script;
  auto r = run_command(python + " '" + py.string() + "' '" + schema.string() + "' '" + record.string() + "'");
  if (r.exit_code == 0) return {};
  return r.out + r.err;
}

LentSoftwareGpu::LentSoftwareGpu() {
  auto gpu = find_software_gpu({std::nullopt, binary_dir(), false});
  if (!gpu) {
    skip_reason_ = "the software GPU was not fetched (tools/fetch-deps.sh fetches it unless RUNG_SKIP_SOFTWARE_GPU=1): " + gpu.error().message;
    return;
  }
  lend_software_gpu(*gpu);
}

LentSoftwareGpu::~LentSoftwareGpu() {
  if (skip_reason_.empty()) stop_lending_software_gpu();
}

Tensor float_tensor(const std::string& name, const std::vector<float>& values) {
  Tensor t;
  t.name = name;
  t.type = ElementType::kFloat;
  t.shape = {static_cast<std::int64_t>(values.size())};
  t.bytes.resize(values.size() * sizeof(float));
  std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
  return t;
}

std::size_t occurrences(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto p = text.find(needle); p != std::string::npos; p = text.find(needle, p + needle.size())) ++n;
  return n;
}

ScopedEnv::ScopedEnv(const char* name, const char* value) : name_(name) {
  if (const char* old = std::getenv(name)) old_ = old;
  if (value) setenv(name, value, 1); else unsetenv(name);
}

ScopedEnv::~ScopedEnv() {
  if (old_) setenv(name_, old_->c_str(), 1); else unsetenv(name_);
}

}  // namespace rung::test
