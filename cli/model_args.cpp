#include "model_args.h"

#include "numeric_args.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>

#include "commands.h"
#include "rung/directory.h"
#include "rung/output_paths.h"
#include "rung/path_text.h"
#include "rung/user_dirs.h"
#include "rung/variants.h"
#include "variants_args.h"

namespace rung::cli {
namespace {
namespace fs = std::filesystem;

fs::path deps_dir() {
  if (auto env = path_in_variable("RUNG_DEPS_DIR")) return *env;
  return RUNG_DEFAULT_DEPS_DIR;
}

std::string model_name_of(const fs::path& p) {
  std::string n = p.stem().string();
  for (char& c : n) {
    if (c == '-' || c == '.' || c == ' ') c = '_';
  }
  return n;
}

std::pair<std::string, std::string> split_assignment(const std::string& s) {
  auto eq = s.find('=');
  if (eq == std::string::npos) return {"", s};
  return {s.substr(0, eq), s.substr(eq + 1)};
}

// rung's own input specs: beside the sources in a build tree, in the share directory once installed.
fs::path specs_dir() {
  std::error_code ec;
  if (fs::is_directory(RUNG_SPECS_DIR, ec)) return RUNG_SPECS_DIR;
  return RUNG_INSTALLED_SPECS_DIR;
}

// The names the bundled manifest gives the sample files (ppocr_cls for
// ch_ppocr_mobile_v2.0_cls_infer.onnx), so that probe and bench call each model
// what prepare and variants do. Keyed by the file's canonical path.
std::map<fs::path, std::string> bundled_names() {
  std::map<fs::path, std::string> names;
  auto manifest = variants::load_manifest(bundled_manifest(), {{"RUNG_DEPS_DIR", deps_dir().string()}});
  if (!manifest) return names;  // a file's own name is still a name
  std::error_code ec;
  for (const auto& g : manifest->groups) {
    if (const auto* floor = g.floor()) names.emplace(fs::weakly_canonical(floor->file, ec), g.name);
  }
  return names;
}

// The sample models tools/fetch-deps.sh brings, with the roles and specs that make them run.
std::vector<ModelRegistration> bundled_models() {
  std::vector<ModelRegistration> out;
  std::error_code ec;
  const auto names = bundled_names();
  std::optional<InputSpec> silero_spec;  // read once: every bundled Silero VAD file takes the same inputs
  for (const char* sub : {"ppocr", "silero-vad"}) {
    std::vector<fs::path> files;
    if (auto entries = list_directory(deps_dir() / "models" / path_from_utf8(sub))) {
      for (const auto& e : *entries) {
        if (e.extension() == ".onnx") files.push_back(e);
      }
    }
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      ModelRegistration m;
      const auto named = names.find(fs::weakly_canonical(f, ec));
      m.name = named != names.end() ? named->second : model_name_of(f);
      m.f32 = f;
      if (f.stem().string().find("_det_") != std::string::npos) m.role = Role::kDetector;
      if (std::string(sub) == "silero-vad") {
        if (!silero_spec) {
          auto spec = InputSpec::from_json_file(specs_dir() / "silero_vad.json");
          silero_spec = spec ? *spec : m.inputs;  // unreadable: fed as any other model
        }
        m.inputs = *silero_spec;
      }
      out.push_back(std::move(m));
    }
  }
  return out;
}

Role parse_role(const std::string& s) {
  if (auto role = variants::parse_role(s)) return *role;
  throw CliError(kExitUsage, fmt::format("unknown role '{}' (detector, embedder, segmenter, generic)", s));
}

}  // namespace

namespace {
Result<fs::path> cache_dir_in_effect() {
  if (auto env = path_in_variable("RUNG_CACHE_DIR")) return *env;
  auto dir = user_cache_dir();
  if (!dir) return dir.error();
  return *dir / "probe";
}
}  // namespace

fs::path default_cache_dir() {
  auto dir = cache_dir_in_effect();
  if (!dir) throw CliError(kExitUsage, fmt::format("no cache directory: {} (or RUNG_CACHE_DIR, or --cache-dir)", dir.error().message));
  return *dir;
}

std::optional<fs::path> cache_dir_if_any() {
  auto dir = cache_dir_in_effect();
  return dir ? std::optional<fs::path>(*dir) : std::nullopt;
}

void require_model_file(const std::string& option, const fs::path& file) {
  if (file.empty()) throw CliError(kExitUsage, fmt::format("{}: no model file named", option));
  if (auto s = check_model_file(file); !s) throw CliError(kExitUsage, fmt::format("{}: {}", option, s.error().message));
}

void add_max_tensor_option(CLI::App& command, std::uint64_t& mb) {
  add_number(command, "--max-tensor-mb", mb, "The largest tensor made or read for a model, in MiB (default 1024): a larger one is refused",
             {1, std::uint64_t{1} << 30, "MiB"});
}

void ModelArgs::add_to(CLI::App& command) {
  add_text(command, "--model", models, "A registered model, PATH or NAME=PATH (default: the bundled sample models)");
  add_text(command, "--role", roles, "NAME=ROLE: detector, embedder, segmenter or generic (default generic)");
  add_text(command, "--input-spec", input_specs, "NAME=FILE: how to feed a model (JSON with dims, values, tensors)");
  add_max_tensor_option(command, max_tensor_mb);
}

std::vector<ModelRegistration> ModelArgs::resolve() const {
  std::vector<ModelRegistration> out;
  if (models.empty()) {
    out = bundled_models();
    if (out.empty()) {
      throw CliError(kExitUsage, fmt::format("no --model given and no sample models in {}; fetch them with tools/fetch-deps.sh",
                                             (deps_dir() / "models").string()));
    }
  }
  for (const auto& m : models) {
    auto [name, path] = split_assignment(m);
    if (path.empty()) throw CliError(kExitUsage, fmt::format("--model {}: no file after '='", m));
    ModelRegistration r;
    r.f32 = fs::absolute(path_from_utf8(path));
    require_model_file("model " + m, r.f32);  // bench takes them as arguments, the others as --model
    r.name = name.empty() ? model_name_of(r.f32) : name;
    if (std::any_of(out.begin(), out.end(), [&](const ModelRegistration& x) { return x.name == r.name; })) {
      throw CliError(kExitUsage, fmt::format("--model {}: the name '{}' is registered twice", m, r.name));
    }
    out.push_back(std::move(r));
  }
  apply_roles_and_specs(out);
  return out;
}

void ModelArgs::apply_roles_and_specs(std::vector<ModelRegistration>& out) const {
  auto find = [&](const std::string& arg, const std::string& name) -> ModelRegistration& {
    auto it = std::find_if(out.begin(), out.end(), [&](const ModelRegistration& r) { return r.name == name; });
    if (name.empty() || it == out.end()) throw CliError(kExitUsage, fmt::format("{}: expected NAME=VALUE naming a registered model", arg));
    return *it;
  };
  for (const auto& s : roles) {
    auto [name, role] = split_assignment(s);
    find("--role " + s, name).role = parse_role(role);
  }
  // Without --input-spec, a spec named after the model in rung's specs directory feeds it.
  for (auto& m : out) {
    std::error_code ec;
    fs::path spec_file = specs_dir() / path_from_utf8(m.name + ".json");
    if (!m.inputs.empty() || !fs::is_regular_file(spec_file, ec)) continue;
    auto spec = InputSpec::from_json_file(spec_file);
    if (!spec) throw CliError(kExitUsage, fmt::format("{}: {}", spec_file.string(), spec.error().message));
    m.inputs = *spec;
  }
  for (const auto& s : input_specs) {
    auto [name, file] = split_assignment(s);
    auto& m = find("--input-spec " + s, name);
    auto spec = InputSpec::from_json_file(path_from_utf8(file));
    if (!spec) throw CliError(kExitUsage, fmt::format("--input-spec {}: {}", name, spec.error().message));
    m.inputs = *spec;
  }
  if (max_tensor_mb > 0) {
    for (auto& m : out) m.inputs.max_tensor_bytes = max_tensor_mb << 20;
  }
}

}  // namespace rung::cli
