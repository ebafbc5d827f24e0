#include "test_support.h"

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace rung::test {

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

std::string schema_errors(const std::filesystem::path& schema, const std::filesystem::path& document) {
  // Debian's interpreter, where python3-jsonschema installs (a pyenv or venv python may lack it).
  constexpr const char* kPython = "/usr/bin/python3";
  auto have = run_command(std::string(kPython) + " -c 'import jsonschema'");
  if (have.exit_code != 0) return "python3-jsonschema is missing (" + have.err + "): install it with tools/bootstrap.sh";
  const std::string script =
      "import json, sys, jsonschema\n"
      "schema = json.load(open(sys.argv[1]))\n"
      "jsonschema.Draft202012Validator.check_schema(schema)\n"
      "errors = list(jsonschema.Draft202012Validator(schema).iter_errors(json.load(open(sys.argv[2]))))\n"
      "for e in errors: print(e.message, 'at', list(e.absolute_path))\n"
      "sys.exit(1 if errors else 0)\n";
  const auto dir = make_temp_dir("rung-schema");
  std::ofstream(dir / "validate.py") << script;
  auto r = run_command(std::string(kPython) + " '" + (dir / "validate.py").string() + "' '" + schema.string() + "' '" + document.string() + "'");
  std::filesystem::remove_all(dir);
  if (r.exit_code == 0) return {};
  return r.out + r.err;
}

}  // namespace rung::test
