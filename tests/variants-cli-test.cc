// `rung variants resolve|lint` and `rung prepare --variants`, driven as a user
// (or an application's CI) would: exit codes, the findings named, the bundled
// manifest resolved on every hardware fixture tree with every runtime build, and
// the bundled manifest and deployment valid against their schemas.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "model_builder.h"
#include "test_support.h"

namespace rung {
namespace {
namespace fs = std::filesystem;
using json = nlohmann::json;
using ::testing::HasSubstr;

const fs::path kSource = fs::path(RUNG_TEST_FIXTURES).parent_path().parent_path();
const std::vector<std::string> kBundled = {"ppocr_det_v4", "ppocr_rec_v4", "ppocr_cls", "silero_vad", "silero_vad_half", "silero_vad_16k_op15",
                                           "silero_vad_op18_ifless"};

std::string rung(const std::string& args) { return "env -u RUNG_ORT_DIR -u RUNG_PLUGIN_DIR '" + test::cli_path().string() + "' " + args; }

// The form tools/make-forms.sh makes for a bundled group: int8 for the detector and the
// recogniser, w8 (int8 weights, float arithmetic) for the classifier; none for the rest.
std::string made_form(const std::string& group) {
  if (group == "ppocr_det_v4" || group == "ppocr_rec_v4") return "i8";
  if (group == "ppocr_cls") return "w8";
  return "";
}

// Whether tools/make-forms.sh made this group's form here (its report says written, its file is there):
// the bundled manifest pins it where it is made, and the f32 file where it is not.
bool made_here(const std::string& group) {
  const std::string form = made_form(group);
  if (form.empty()) return false;
  const fs::path report = test::deps_dir() / "forms" / (group + "_" + form + ".report.json");
  if (!fs::exists(report) || !fs::exists(test::deps_dir() / "forms" / (group + "_" + form + ".onnx"))) return false;
  return json::parse(test::read_file(report)).value("decision", "") == "written";
}

class VariantsCliTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::make_temp_dir("rung-variants-cli"); }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path write(const std::string& name, const json& j) {
    std::ofstream(dir_ / name) << j.dump(2);
    return dir_ / name;
  }

  fs::path dir_;
};

TEST_F(VariantsCliTest, TheBundledManifestIsCleanAndNamesEveryFetchedModel) {
  auto r = test::run_command(rung("variants lint --scan " + test::deps_dir().string() + "/models"));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("7 groups, 17 variants · deployment"));
  EXPECT_THAT(r.out, HasSubstr("\nclean\n"));
}

TEST_F(VariantsCliTest, TheBundledManifestAndDeploymentFollowTheirSchemas) {
  const std::string script =
      "import json, sys, jsonschema\n"
      "for schema, doc in ((sys.argv[1], sys.argv[2]), (sys.argv[3], sys.argv[4])):\n"
      "    s = json.load(open(schema)); jsonschema.Draft202012Validator.check_schema(s)\n"
      "    for e in jsonschema.Draft202012Validator(s).iter_errors(json.load(open(doc))): print(doc, e.message); sys.exit(1)\n";
  std::ofstream(dir_ / "validate.py") << script;
  auto r = test::run_command("/usr/bin/python3 " + (dir_ / "validate.py").string() + " " +
                             (kSource / "schemas" / "variant-manifest.schema.json").string() + " " +
                             (kSource / "manifests" / "bundled.variants.json").string() + " " +
                             (kSource / "schemas" / "deployment.schema.json").string() + " " +
                             (kSource / "manifests" / "bundled.deployment.json").string());
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

// Every fixture tree with every build: the simulated accelerator is no platform's own rung, so without
// the plugin the order reaches the CPU's variant too; with it, only the pin keeps the CPU, and says why.
TEST_F(VariantsCliTest, TheBundledGroupsResolveAsDeclaredOnEveryFixtureTreeAndBuild) {
  const fs::path plugins = test::make_plugin_dir(dir_);
  for (const char* fixture : {"cpu-vm", "nvidia-desktop", "intel-laptop-nvidia", "amd-rocm-desktop", "qualcomm-tablet"}) {
    for (const char* build : {"1.30.0", "1.29", "1.28.2"}) {
      for (bool with_plugin : {false, true}) {
        const std::string where = std::string(fixture) + " with " + build + (with_plugin ? " and the plugin" : "");
        // RUNG_ORT_DIR's build wins outright (--ort-dir is only searched first).
        auto r = test::run_command("RUNG_ORT_DIR=" + test::runtime_dir(build).string() + " '" + test::cli_path().string() +
                                   "' variants resolve --json --hardware-root " + (test::fixtures_dir() / "hardware" / fixture).string() +
                                   (with_plugin ? " --plugin-dir " + plugins.string() : ""));
        ASSERT_EQ(r.exit_code, 0) << where << r.err;
        auto j = json::parse(r.out);
        EXPECT_EQ(j["runtime"]["version"].get<std::string>().rfind(build, 0), 0u) << where;
        ASSERT_EQ(j["groups"].size(), kBundled.size()) << where;
        for (std::size_t i = 0; i < kBundled.size(); ++i) {
          const auto& g = j["groups"][i];
          const std::string reason = g["reason"].get<std::string>();
          EXPECT_EQ(g["group"], kBundled[i]) << where;
          EXPECT_EQ(g["pinned_for"], "any") << where;
          const std::string form = made_form(kBundled[i]);
          const bool has_form = !form.empty();
          const std::string key = "cpu_" + form;
          const bool made = made_here(kBundled[i]);
          // Made here: its form on the CPU, under its form's model id; not made: the pin's next, the f32 file.
          EXPECT_EQ(g["variant"], made ? key : "cpu_f32") << where;
          EXPECT_EQ(g["model_id"], made ? kBundled[i] + "_" + form : kBundled[i]) << where;
          if (made) {
            EXPECT_THAT(reason, HasSubstr(key + ": pinned for any platform: " + key + " (made here by rung quantise")) << where;
          } else if (has_form) {
            EXPECT_THAT(reason, HasSubstr("cpu_f32: pinned for any platform after " + key + " (")) << where;
            EXPECT_THAT(reason, HasSubstr("): " + key + " (made here")) << where;
          } else {
            EXPECT_THAT(reason, HasSubstr("cpu_f32: pinned for any platform: rung_sim_ep ")) << where;
          }
          std::vector<std::string> passed_over = {"rung_sim_ep_f32 (rung_sim_ep: not on this device and build)"};
          if (has_form && !made) passed_over.push_back(g["passed_over"].size() > 1 ? g["passed_over"][1].get<std::string>() : key + " missing");
          if (with_plugin) {
            EXPECT_EQ(g["by_order"], "rung_sim_ep_f32") << where;
            EXPECT_THAT(reason, HasSubstr("(the declared order would take rung_sim_ep_f32)")) << where;
          } else {
            EXPECT_EQ(g["by_order"], made ? key : "cpu_f32") << where;
            EXPECT_EQ(g["passed_over"], json(passed_over)) << where;
            if (has_form && !made) {
              EXPECT_THAT(passed_over[1], HasSubstr(key + " (")) << where;
            }
          }
        }
      }
    }
  }
}

TEST_F(VariantsCliTest, TheTableSaysWhichVariantAndWhy) {
  auto r = test::run_command(rung("variants resolve --hardware-root " + (test::fixtures_dir() / "hardware" / "nvidia-desktop").string() +
                                  " --ort-dir " + test::runtime_dir("1.30.0").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("ONNX Runtime 1.30.0 · platforms nvidia · rungs tensorrt, cuda, cpu · offered by the deployment cpu"));
  // The long reason is a note under the table, the row naming it.
  EXPECT_THAT(r.out, HasSubstr("  silero_vad               cpu_f32            cpu          silero_vad                   [4]\n"));
  EXPECT_THAT(r.out, HasSubstr("\n  [4] cpu_f32: pinned for any platform: rung_sim_ep p50 0.484 ms against the CPU's 0.281 ms"));
}

TEST_F(VariantsCliTest, EachFindingIsNamedAndTheAnswerIsNo) {
  const fs::path model = test::write_elementwise_model(dir_ / "tiny.onnx", {1, 4});
  std::ofstream(dir_ / "stray.onnx") << "not named by any variant";
  auto v = [&](const std::string& key, const std::string& rung, const std::string& form) {
    return json{{"key", key}, {"rungs", json::array({rung})}, {"form", form}, {"file", {{"path", model.filename().string()}}}, {"sha256", std::string(64, 'a')}};
  };
  auto manifest = write("m.json", {{"schema", "rung-variant-manifest"},
                                   {"schema_version", 1},
                                   {"groups",
                                    {{{"name", "tiny"},
                                      {"variants", {v("tensorrt_f16", "tensorrt", "f16"), v("cuda_f32", "cuda", "f32"),
                                                    v("webgpu_f32", "webgpu", "f32"), v("cpu_f32", "cpu", "f32")}},
                                      {"pins", {{{"platform", "other-gpu"}, {"variant", "webgpu_f32"}, {"reason", ""}}}}}}}});
  auto deployment = write("d.json", {{"schema", "rung-deployment"}, {"schema_version", 1}, {"provisions", {"webgpu", "cuda"}}});
  auto r = test::run_command(rung("variants lint --variants " + manifest.string() + " --deployment " + deployment.string() + " --registry " +
                                  (dir_ / "reg.sqlite").string() + " --scan " + dir_.string()));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("  file          tiny/cuda_f32: the hash differs: " + model.string()));
  EXPECT_THAT(r.out, HasSubstr("  pin           tiny pin for other-gpu: pins webgpu_f32 without a reason"));
  EXPECT_THAT(r.out, HasSubstr("  unpinned      tiny on no-gpu-seen: 2 accelerated variants are offered (cuda_f32, webgpu_f32)"));
  EXPECT_THAT(r.out, HasSubstr("  unprovisioned tiny on nvidia: DEFAULT is tensorrt_f16 on tensorrt, which the deployment does not provision"));
  EXPECT_THAT(r.out, HasSubstr("  unreachable   tiny/tensorrt_f16: no platform can resolve to it"));
  EXPECT_THAT(r.out, HasSubstr("  evidence      tiny/cuda_f32: DEFAULT on nvidia, no-gpu-seen, but it names no registry release"));
  EXPECT_THAT(r.out, HasSubstr("  evidence      tiny/webgpu_f32: DEFAULT on windows-directx, arm-soc-gpu, other-gpu, but it names no registry release"));
  EXPECT_THAT(r.out, HasSubstr("  unnamed       " + (dir_ / "stray.onnx").string() + ": a model file no variant names"));
  EXPECT_THAT(r.err, HasSubstr("rung: the manifest has"));
  auto j = test::run_command(rung("variants lint --json --variants " + manifest.string() + " --deployment " + deployment.string() +
                                  " --registry " + (dir_ / "reg.sqlite").string()));
  EXPECT_EQ(j.exit_code, 1);
  EXPECT_FALSE(json::parse(j.out)["findings"].empty());
}

TEST_F(VariantsCliTest, AManifestThatIsNotThereOrNotOneIsAUsageError) {
  auto r = test::run_command(rung("variants lint --variants " + (dir_ / "none.json").string()));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("none.json: does not exist"));
  auto bad = write("bad.json", {{"schema", "rung-variant-manifest"}, {"schema_version", 2}});
  r = test::run_command(rung("variants resolve --variants " + bad.string()));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("has schema_version 2; this rung reads 1"));
}

TEST_F(VariantsCliTest, PrepareShowsEachModelsResolvedVariantAndModelId) {
  const fs::path model = test::write_elementwise_model(dir_ / "tiny.onnx", {1, 4});
  auto v = [&](const std::string& key, const std::string& rung) {
    return json{{"key", key}, {"rungs", json::array({rung})}, {"form", "f32"}, {"file", {{"path", "tiny.onnx"}}}, {"sha256", std::string(64, 'a')}};
  };
  auto manifest = write("m.json", {{"schema", "rung-variant-manifest"},
                                   {"schema_version", 1},
                                   {"groups", {{{"name", "tiny"}, {"variants", {v("rung_sim_ep_f32", "rung_sim_ep"), v("cpu_f32", "cpu")}}}}}});
  auto deployment = write("d.json", {{"schema", "rung-deployment"}, {"schema_version", 1}, {"provisions", json::array({"rung_sim_ep"})}});
  const fs::path plugins = test::make_plugin_dir(dir_);
  const std::string args = "prepare --variants " + manifest.string() + " --deployment " + deployment.string() + " --cache-dir " +
                           (dir_ / "cache").string() + " --ort-dir " + test::runtime_dir("1.30.0").string() + " --hardware-root " +
                           (test::fixtures_dir() / "hardware" / "cpu-vm").string() + " --plugin-dir " + plugins.string() + " --accept-ratio 1000";
  auto r = test::run_command(rung(args + " --json"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto j = json::parse(r.out);
  ASSERT_EQ(j["models"].size(), 1u);
  EXPECT_EQ(j["models"][0]["variant"]["key"], "rung_sim_ep_f32");
  EXPECT_EQ(j["models"][0]["variant"]["model_id"], "tiny");
  EXPECT_EQ(j["models"][0]["rung"], "rung_sim_ep");
  EXPECT_EQ(j["models"][0]["model_id"], "tiny");
  auto text = test::run_command(rung(args));
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("  model                    variant          rung           model id                     why"));
  EXPECT_THAT(text.out, HasSubstr("  tiny                     rung_sim_ep_f32  rung_sim_ep    tiny                         the chosen rung's engine"));
  EXPECT_THAT(text.out, HasSubstr("variant: rung_sim_ep_f32: first declared whose rung is offered here (rung_sim_ep, a plugin EP)"));
}

}  // namespace
}  // namespace rung
