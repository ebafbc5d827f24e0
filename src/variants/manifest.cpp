#include "rung/variants.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>

#include "rungs/forms.h"
#include "os/environment.h"
#include "os/json_input.h"
#include "rung/input_words.h"
#include "rung/json_text.h"
#include "rung/ladder.h"
#include "rung/path_text.h"

namespace rung::variants {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

constexpr const char* kManifestSchema = "rung-variant-manifest";
constexpr const char* kDeploymentSchema = "rung-deployment";

// Lists longer than any real manifest are refused before they are walked.
constexpr std::size_t kMaxEntries = 10000;

Error bad(const fs::path& file, const std::string& what) {
  return Error{ErrorCode::kInvalidArgument, fmt::format("{}: {}", file.string(), what)};
}

// The file through os's bounded reader (regular file, a document's size, nesting
// bounded), then its schema and version, each a finding naming the field.
Result<json> read_document(const fs::path& file, const char* schema, const char* what) {
  auto j = read_json_file(file, FileKind::kDocument);
  if (!j) return j.error();  // it names the file: "does not exist", "is a FIFO, not a file", "not valid JSON: ..."
  if (!j->is_object()) return bad(file, fmt::format("is not a {} (a JSON object with \"schema\": \"{}\"), but a JSON {}", what, schema, j->type_name()));
  const auto found = j->find("schema");
  if (found == j->end() || !found->is_string() || found->get<std::string>() != schema) {
    return bad(file, fmt::format("is not a {} (\"schema\" is {}; a {} says \"schema\": \"{}\")", what,
                                 found == j->end() ? "missing" : json_text(*found).substr(0, 60), what, schema));
  }
  const auto version = j->find("schema_version");
  if (version == j->end() || json_integer(*version, 1, 1) != 1) {
    return bad(file, fmt::format("has schema_version {}; this rung reads 1", version == j->end() ? "none" : json_text(*version).substr(0, 40)));
  }
  return j;
}

// How ${NAME} in a path is filled: the caller's values, and the environment's when allowed.
struct Expansion {
  const PathVariables& values;
  bool read_environment;
};

std::string expand(const std::string& text, const Expansion& defaults) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    std::size_t open = text.find("${", i), close = open == std::string::npos ? open : text.find('}', open);
    if (close == std::string::npos) {
      out += text.substr(i);
      break;
    }
    out += text.substr(i, open - i);
    const std::string name = text.substr(open + 2, close - open - 2);
    // The CLI reads rung's variables; an embedded engine only when its application opts in.
    const auto env = defaults.read_environment ? any_variable(name.c_str(), /*rung_allowed=*/true) : std::nullopt;
    auto fallback = defaults.values.find(name);
    out += env ? *env : fallback != defaults.values.end() ? fallback->second : "";
    i = close + 1;
  }
  return out;
}

fs::path local_path(const std::string& text, const fs::path& base, const Expansion& defaults) {
  const fs::path p = path_from_utf8(expand(text, defaults));
  return p.is_absolute() ? p.lexically_normal() : (base / p).lexically_normal();
}

// What the engine runs on this rung for this role: placement's rule (engine/placement.cpp).
std::vector<NumericForm> forms_run_on(const std::string& rung_name, Role role) {
  const RungSpec* rung = find_rung(rung_name);
  if (rung == nullptr) return {NumericForm::kF32};  // a plugin rung loads the f32 file
  if (rung->form == ModelForm::kQuantized) return {NumericForm::kInt8, NumericForm::kA16W8, NumericForm::kA16W16};
  // The CPU runs a QDQ file on its integer kernels (rungs/forms.h): f32, or the form the variant names.
  if (rung->append == AppendMethod::kNone) return {NumericForm::kF32, NumericForm::kInt8, NumericForm::kA16W8, NumericForm::kA16W16, NumericForm::kW8};
  return {builds_fp16(*rung, role) ? NumericForm::kF16 : NumericForm::kF32};
}

// A form made on this device: the report that made it pins its bytes. Until
// it is made, or where this device's quantise refused it, the variant is
// unavailable here and resolution passes it over; nothing of it is an error.
void read_made_by(Variant& v) {
  std::error_code ec;
  if (!fs::exists(v.made_by, ec)) {
    v.unavailable = fmt::format("not made on this device: {} is missing (tools/make-forms.sh makes it)", v.made_by.string());
    return;
  }
  auto report = read_json_file(v.made_by, FileKind::kDocument);
  if (!report) {
    v.unavailable = report.error().message;
    return;
  }
  const json& j = *report;
  if (!j.is_object() || json_string_or(j, "schema", "") != "rung-quantise-report") {
    v.unavailable = malformed_input(v.made_by.string(), "a rung quantise report", schema_words(j, "rung-quantise-report")).message;
    return;
  }
  const std::string decision = json_string_or(j, "decision", "");
  if (decision != "written") {
    std::vector<std::string> failed;
    if (auto it = j.find("failed"); it != j.end() && it->is_array()) {
      for (const auto& x : *it) {
        if (x.is_string()) failed.push_back(x.get<std::string>());
      }
    }
    v.refused_here = true;
    v.unavailable = fmt::format("this device's rung quantise did not make it ({}: {}{})", v.made_by.string(), decision.empty() ? "no decision" : decision,
                                failed.empty() ? "" : fmt::format(", {}", fmt::join(failed, "; ")));
    return;
  }
  auto section = [&](const char* key) -> const json& {
    static const json none = json::object();
    auto it = j.find(key);
    return it != j.end() && it->is_object() ? *it : none;
  };
  v.sha256 = json_string_or(section("output"), "sha256", "");
  v.stable_sha256 = json_string_or(section("output"), "stable_sha256", "");
  v.made_from = json_string_or(section("source"), "sha256", "");
  v.made_by_report = json_text(j);
  if (!fs::is_regular_file(v.file, ec)) v.unavailable = fmt::format("its file {} is missing, though {} says it was written", v.file.string(), v.made_by.string());
}

Result<Variant> parse_variant(const json& v, const Group& g, const fs::path& file, const fs::path& base, const Expansion& defaults) {
  Variant out;
  out.key = json_string_or(v, "key", "");
  const std::string where = fmt::format("group {} variant '{}'", g.name, out.key);
  JsonFields f(v, fmt::format("{}: {}", file.string(), where));
  out.key = f.text("key", "");
  if (!f.ok()) return f.problems().error();
  if (out.key.empty()) return bad(file, fmt::format("group {}: a variant has no key", g.name));
  const json* rungs = f.array("rungs", kMaxEntries, false);
  if (!f.ok()) return f.problems().error();
  if (rungs == nullptr || rungs->empty()) return bad(file, where + ": names no rungs");
  for (const auto& r : *rungs) {
    if (!r.is_string() || r.get<std::string>().empty()) return bad(file, where + ": a rung is not a name");
    out.rungs.push_back(canonical_rung_name(r.get<std::string>()));  // "CUDA" is the rung cuda
  }
  const std::string form_name = f.text("form", "");
  if (!f.ok()) return f.problems().error();
  auto form = parse_form(form_name);
  if (!form) return bad(file, fmt::format("{}: form '{}' is none of f32, f16, i8, a16w8, a16w16, w8", where, form_name));
  out.form = *form;
  // An embedder's non-f32 variant is vetoed at resolution, so only the others must match their rungs.
  if (!(g.role == Role::kEmbedder && out.form != NumericForm::kF32)) {
    for (const auto& r : out.rungs) {
      auto runs = forms_run_on(r, g.role);
      if (std::find(runs.begin(), runs.end(), out.form) == runs.end()) {
        return bad(file, fmt::format("{}: a {} file on {}: the engine runs {} there, so its model id would name arithmetic that never ran",
                                     where, numeric_form_name(out.form), r, numeric_form_name(runs.front())));
      }
    }
  }
  const json* given = f.object("file", false);
  if (!f.ok()) return f.problems().error();
  const json& file_entry = given != nullptr ? *given : json::object();
  if (file_entry.contains("path") == file_entry.contains("url")) return bad(file, where + ": \"file\" holds a \"path\" or a \"url\" with its \"cached\" copy");
  JsonFields ff(file_entry, f.where() + ": \"file\"");
  if (file_entry.contains("url")) {
    out.url = ff.text("url");
    if (!file_entry.contains("cached")) return bad(file, where + ": a URL needs its local \"cached\" copy");
    if (file_entry.contains("made_by")) return bad(file, where + ": \"made_by\" goes with a \"path\": a URL's file is published, not made on the device");
    out.file = local_path(ff.text("cached"), base, defaults);
  } else {
    out.file = local_path(ff.text("path"), base, defaults);
    if (file_entry.contains("made_by")) out.made_by = local_path(ff.text("made_by"), base, defaults);
  }
  RUNG_RETURN_IF_ERROR(ff.finish());
  const bool pinned_by_hash = v.contains("sha256") || v.contains("stable_sha256");
  out.sha256 = f.text("sha256", "");
  out.stable_sha256 = f.text("stable_sha256", "");
  out.release = f.text("release", "");
  if (!f.ok()) return f.problems().error();
  if (!out.made_by.empty()) {
    if (pinned_by_hash) return bad(file, where + ": a file made on the device is pinned by the report that made it (\"made_by\"), not by \"sha256\"");
    if (out.form == NumericForm::kF32 || out.form == NumericForm::kF16) {
      return bad(file, fmt::format("{}: \"made_by\" names a rung quantise report, which makes quantised forms, not {}", where, numeric_form_name(out.form)));
    }
    read_made_by(out);
  } else if (out.sha256.size() != 64) {
    return bad(file, where + ": \"sha256\" is not a SHA-256 (64 hex digits)");
  }
  RUNG_RETURN_IF_ERROR(f.finish());
  return out;
}

Result<Pin> parse_pin(const json& p, const Group& g, const fs::path& file) {
  JsonFields f(p, fmt::format("{}: group {}: a pin", file.string(), g.name));
  Pin pin{f.text("platform", ""), f.text("variant", ""), f.text("reason", ""), {}};
  const json* then = f.array("then", kMaxEntries, false);
  RUNG_RETURN_IF_ERROR(f.finish());
  for (const auto& key : then != nullptr ? *then : json::array()) {
    if (!key.is_string() || !g.find(key.get<std::string>())) {
      return bad(file, fmt::format("group {}: the pin for {}: \"then\" names no variant of it ({})", g.name, pin.platform, json_text(key).substr(0, 60)));
    }
    pin.then.push_back(key.get<std::string>());
  }
  return pin;
}

// `specs_read`: the input specs this load has read, by path: groups that share one read it once.
Result<Group> parse_group(const json& g, const fs::path& file, const Expansion& defaults, std::map<fs::path, InputSpec>& specs_read) {
  Group out;
  const std::string name = json_string_or(g, "name", "");
  JsonFields f(g, name.empty() ? fmt::format("{}: a group", file.string()) : fmt::format("{}: group {}", file.string(), name));
  out.name = f.text("name", "");
  if (!f.ok()) return f.problems().error();
  if (out.name.empty()) return bad(file, "a group has no name");
  const std::string role_name = f.text("role", "generic");
  if (!f.ok()) return f.problems().error();
  auto role = parse_role(role_name);
  if (!role) return bad(file, fmt::format("group {}: role '{}' is none of detector, embedder, segmenter, generic", out.name, role_name));
  out.role = *role;
  const fs::path base = file.parent_path();
  if (f.has("input_spec")) {
    const std::string spec_file = f.text("input_spec");
    if (!f.ok()) return f.problems().error();
    const fs::path spec_path = local_path(spec_file, base, defaults);
    if (auto read = specs_read.find(spec_path); read != specs_read.end()) {
      out.inputs = read->second;
    } else {
      auto spec = InputSpec::from_json_file(spec_path);
      if (!spec) return bad(file, fmt::format("group {}: input_spec: {}", out.name, spec.error().message));
      out.inputs = *spec;
      specs_read.emplace(spec_path, *spec);
    }
  }
  const json* variants = f.array("variants", kMaxEntries, false);
  const json* pins = f.array("pins", kMaxEntries, false);
  RUNG_RETURN_IF_ERROR(f.finish());
  for (const auto& v : variants != nullptr ? *variants : json::array()) {
    auto variant = parse_variant(v, out, file, base, defaults);
    if (!variant) return variant.error();
    if (out.find(variant->key)) return bad(file, fmt::format("group {}: variant '{}' is declared twice", out.name, variant->key));
    out.variants.push_back(std::move(*variant));
  }
  if (out.variants.empty()) return bad(file, fmt::format("group {} declares no variant", out.name));
  std::vector<std::string> platforms = {kAnyPlatform};
  for (const auto& p : known_platforms()) platforms.push_back(p.id);
  for (const auto& p : pins != nullptr ? *pins : json::array()) {
    auto read = parse_pin(p, out, file);
    if (!read) return read.error();
    Pin pin = std::move(*read);
    if (std::find(platforms.begin(), platforms.end(), pin.platform) == platforms.end()) {
      return bad(file, fmt::format("group {}: a pin names platform '{}', none of {}", out.name, pin.platform, fmt::join(platforms, ", ")));
    }
    if (!out.find(pin.variant)) return bad(file, fmt::format("group {}: the pin for {} names no variant of it ('{}')", out.name, pin.platform, pin.variant));
    auto twice = std::find_if(out.pins.begin(), out.pins.end(), [&](const Pin& q) { return q.platform == pin.platform; });
    if (twice != out.pins.end()) return bad(file, fmt::format("group {}: two pins for {}", out.name, pin.platform));
    out.pins.push_back(std::move(pin));
  }
  return out;
}

}  // namespace

std::vector<std::string> Pin::chain() const {
  std::vector<std::string> out = {variant};
  out.insert(out.end(), then.begin(), then.end());
  return out;
}

bool Variant::serves(const std::string& rung) const {
  return std::any_of(rungs.begin(), rungs.end(), [&](const std::string& r) { return same_rung_name(r, rung); });
}

const Variant* Group::find(const std::string& key) const {
  for (const auto& v : variants) {
    if (v.key == key) return &v;
  }
  return nullptr;
}

const Variant* Group::floor() const {
  for (const auto& v : variants) {
    if (v.serves("cpu") && v.form == NumericForm::kF32) return &v;
  }
  return nullptr;
}

bool Deployment::provisioned(const std::string& rung) const {
  return same_rung_name(rung, "cpu") || std::any_of(provisions.begin(), provisions.end(), [&](const std::string& r) { return same_rung_name(r, rung); });
}

std::optional<NumericForm> parse_form(const std::string& name) {
  for (auto f : kNumericForms) {
    if (name == numeric_form_name(f)) return f;
  }
  return std::nullopt;
}

std::optional<Role> parse_role(const std::string& name) {
  for (auto r : {Role::kDetector, Role::kEmbedder, Role::kSegmenter, Role::kGeneric}) {
    if (name == role_name(r)) return r;
  }
  return std::nullopt;
}

Result<Manifest> load_manifest(const fs::path& path, const PathVariables& values, bool read_environment) {
  const Expansion defaults{values, read_environment};
  const fs::path file = fs::absolute(path);
  auto j = read_document(file, kManifestSchema, "variant manifest");
  if (!j) return j.error();
  Manifest out;
  out.path = file;
  JsonFields f(*j, file.string());
  f.skip("schema");
  f.skip("schema_version");
  f.text("description", "");
  const json* groups = f.array("groups", kMaxEntries, false);
  RUNG_RETURN_IF_ERROR(f.finish());
  // Every value is read by kind above; this is a last guard, so no exception leaves the library.
  try {
    std::map<fs::path, InputSpec> specs_read;
    for (const auto& g : groups != nullptr ? *groups : json::array()) {
      auto group = parse_group(g, file, defaults, specs_read);
      if (!group) return group.error();
      bool twice = std::any_of(out.groups.begin(), out.groups.end(), [&](const Group& x) { return x.name == group->name; });
      if (twice) return bad(file, fmt::format("group {} is declared twice", group->name));
      out.groups.push_back(std::move(*group));
    }
  } catch (const json::exception& e) {
    return bad(file, fmt::format("an entry has the wrong type ({})", json_error_words(e)));
  }
  if (out.groups.empty()) return bad(file, "declares no group");
  return out;
}

Result<Deployment> load_deployment(const fs::path& path) {
  const fs::path file = fs::absolute(path);
  auto j = read_document(file, kDeploymentSchema, "deployment file");
  if (!j) return j.error();
  Deployment out;
  out.path = file;
  JsonFields f(*j, file.string());
  f.skip("schema");
  f.skip("schema_version");
  f.text("description", "");
  const json* rungs = f.array("provisions", kMaxEntries, false);
  RUNG_RETURN_IF_ERROR(f.finish());
  if (rungs == nullptr) return bad(file, "\"provisions\" is not a list of rungs");
  for (const auto& r : *rungs) {
    if (!r.is_string() || r.get<std::string>().empty()) return bad(file, "a provisioned rung is not a name");
    out.provisions.push_back(canonical_rung_name(r.get<std::string>()));
  }
  return out;
}

}  // namespace rung::variants
