// Model variants: DEFAULT resolved from the five hardware fixture trees and the
// three real runtime builds, narrowed by the deployment, overridden by pins,
// vetoed for an embedder; each lint finding produced by a manifest made for it,
// with the registry's evidence read from a real SQLite registry; and the engine
// loading the resolved variant's file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>

#include "graph/model_file.h"
#include "model_builder.h"
#include "rung/bench.h"
#include "rung/bench_record.h"
#include "rung/engine_core.h"
#include "rung/parity.h"
#include "rung/registry.h"
#include "rung/variants.h"
#include "rung/manifest_lint.h"
#include "quantise_fixture.h"
#include "test_support.h"

namespace rung {
namespace {
namespace fs = std::filesystem;
using json = nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;
using variants::FindingKind;

constexpr const char* kDevice = "linux; cpu Test CPU 9000";

// The facts start() hands choose_models, for a fixture tree and a real build (each build loaded once).
core::StartFacts facts_for(const std::string& fixture, const std::string& version, const std::vector<fs::path>& plugin_dirs = {}) {
  static std::map<std::string, RuntimeBuild> builds;
  if (!builds.count(version)) {
    auto lib = fs::directory_iterator(test::runtime_dir(version));
    fs::path library;
    for (const auto& e : lib) {
      if (e.path().filename().string().rfind("libonnxruntime.so", 0) == 0) library = e.path();
    }
    auto build = load_runtime_build(library);
    EXPECT_TRUE(build) << build.error().message;
    builds[version] = *build;
  }
  return core::start_facts(detect_hardware(test::fixtures_dir() / "hardware" / fixture), builds[version], plugin_dirs);
}

json variant(const std::string& key, const std::vector<std::string>& rungs, const std::string& form, const fs::path& file,
             const std::string& sha = std::string(64, '0')) {
  return {{"key", key}, {"rungs", rungs}, {"form", form}, {"file", {{"path", file.string()}}}, {"sha256", sha}};
}

class VariantsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::make_temp_dir("rung-variants");
    model_ = test::write_elementwise_model(dir_ / "tiny.onnx", {1, 16});
    auto facts = inspect_model_file(model_);
    sha_ = facts->sha256;
    stable_ = facts->stable_sha256;
  }
  void TearDown() override { fs::remove_all(dir_); }

  // One group of the tiny model's variants, as a manifest file, loaded.
  variants::Manifest manifest(json variants_list, json pins = json::array(), const std::string& role = "detector") {
    json m = {{"schema", "rung-variant-manifest"},
              {"schema_version", 1},
              {"groups", {{{"name", "tiny"}, {"role", role}, {"variants", variants_list}, {"pins", pins}}}}};
    const fs::path file = dir_ / ("manifest-" + std::to_string(files_++) + ".json");
    std::ofstream(file) << m.dump(2);
    auto loaded = variants::load_manifest(file);
    EXPECT_TRUE(loaded) << loaded.error().message;
    return loaded ? *loaded : variants::Manifest{};
  }

  variants::Deployment deployment(const std::vector<std::string>& rungs) {
    variants::Deployment d;
    d.path = dir_ / "deployment.json";
    d.provisions = rungs;
    return d;
  }

  // Every accelerator variant a GPU or NPU rung takes, then the CPU's, all of the tiny model.
  json every_rung() {
    return json::array({variant("qnn_a16w8", {"qnn-htp"}, "a16w8", model_), variant("tensorrt_f16", {"tensorrt"}, "f16", model_),
                        variant("migraphx_f16", {"migraphx"}, "f16", model_), variant("openvino_f16", {"openvino"}, "f16", model_),
                        variant("cuda_f32", {"cuda"}, "f32", model_), variant("webgpu_f32", {"webgpu"}, "f32", model_),
                        variant("cpu_f32", {"cpu"}, "f32", model_, sha_)});
  }

  std::string resolved(const variants::Manifest& m, const core::StartFacts& f, const variants::Deployment& d) {
    auto r = variants::resolve(m.groups.at(0), f, &d);
    EXPECT_TRUE(r) << r.error().message;
    return r ? r->variant->key : "";
  }

  std::vector<variants::Finding> findings(const variants::Manifest& m, const variants::Deployment& d, bool files = false) {
    variants::LintOptions o;
    o.check_files = files;
    o.registry_url = "sqlite:" + (dir_ / "registry.sqlite").string();
    auto out = variants::lint(m, d, o);
    EXPECT_TRUE(out) << out.error().message;
    return out ? *out : std::vector<variants::Finding>{};
  }

  static std::vector<std::string> of_kind(const std::vector<variants::Finding>& fs, FindingKind k) {
    std::vector<std::string> out;
    for (const auto& f : fs) {
      if (f.kind == k) out.push_back(f.subject + ": " + f.message);
    }
    return out;
  }

  fs::path dir_, model_;
  std::string sha_, stable_;
  int files_ = 0;
};

// --- resolution ---

TEST_F(VariantsTest, EachFixtureTreeAndBuildResolvesTheFirstDeclaredVariantItOffers) {
  auto m = manifest(every_rung());
  auto all = deployment({"qnn-htp", "tensorrt", "migraphx", "openvino", "cuda", "webgpu"});
  // 1.30.0 carries TensorRT, CUDA and WebGPU; 1.29 and 1.28.2 only the CPU.
  const std::map<std::pair<std::string, std::string>, std::string> expected = {
      {{"nvidia-desktop", "1.30.0"}, "tensorrt_f16"},      {{"nvidia-desktop", "1.29"}, "cpu_f32"},
      {{"nvidia-desktop", "1.28.2"}, "cpu_f32"},           {{"intel-laptop-nvidia", "1.30.0"}, "tensorrt_f16"},
      {{"intel-laptop-nvidia", "1.29"}, "cpu_f32"},        {{"intel-laptop-nvidia", "1.28.2"}, "cpu_f32"},
      {{"amd-rocm-desktop", "1.30.0"}, "cpu_f32"},         {{"amd-rocm-desktop", "1.29"}, "cpu_f32"},
      {{"amd-rocm-desktop", "1.28.2"}, "cpu_f32"},         {{"qualcomm-tablet", "1.30.0"}, "cpu_f32"},
      {{"qualcomm-tablet", "1.29"}, "cpu_f32"},            {{"qualcomm-tablet", "1.28.2"}, "cpu_f32"},
      {{"cpu-vm", "1.30.0"}, "tensorrt_f16"},              {{"cpu-vm", "1.29"}, "cpu_f32"},
      {{"cpu-vm", "1.28.2"}, "cpu_f32"},
  };
  for (const auto& [where, key] : expected) {
    EXPECT_EQ(resolved(m, facts_for(where.first, where.second), all), key) << where.first << " with ONNX Runtime " << where.second;
  }
  // A build that carries the Qualcomm NPU's provider would take the quantised form there.
  core::StartFacts hexagon{{"qualcomm-hexagon"}, {"qnn-htp", "cpu"}, "1.30.0"};
  auto r = variants::resolve(m.groups[0], hexagon, &all);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->variant->key, "qnn_a16w8");
  EXPECT_THAT(r->reason, HasSubstr("qnn_a16w8: first declared whose rung is offered here (qnn-htp, Qualcomm SoC with a Hexagon NPU)"));
}

TEST_F(VariantsTest, NarrowingTheDeploymentMovesDefaultDownInsteadOfFailing) {
  auto m = manifest(every_rung());
  auto nvidia = facts_for("nvidia-desktop", "1.30.0");
  EXPECT_EQ(resolved(m, nvidia, deployment({"tensorrt", "cuda"})), "tensorrt_f16");
  EXPECT_EQ(resolved(m, nvidia, deployment({"cuda"})), "cuda_f32");
  auto r = variants::resolve(m.groups[0], nvidia, nullptr);
  auto none = deployment({});
  r = variants::resolve(m.groups[0], nvidia, &none);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->variant->key, "cpu_f32");
  EXPECT_THAT(r->reason, HasSubstr("tensorrt_f16 (tensorrt: not provisioned by the deployment)"));
  EXPECT_THAT(r->reason, HasSubstr("qnn_a16w8 (qnn-htp: not on this device and build)"));
}

TEST_F(VariantsTest, APinWinsOnItsPlatformAndItsReasonIsShown) {
  const std::string why = "cuda p50 3.10 ms against tensorrt 3.42 ms on an RTX 4090, 200 runs";
  auto m = manifest(every_rung(), json::array({{{"platform", "nvidia"}, {"variant", "cuda_f32"}, {"reason", why}}}));
  auto all = deployment({"tensorrt", "cuda", "webgpu"});
  auto r = variants::resolve(m.groups[0], facts_for("nvidia-desktop", "1.30.0"), &all);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->variant->key, "cuda_f32");
  EXPECT_EQ(r->pinned_for, "nvidia");
  EXPECT_EQ(r->reason, "cuda_f32: pinned for nvidia (NVIDIA GPU): " + why + " (the declared order would take tensorrt_f16)");
  // The pin is for NVIDIA only: a VM that sees no GPU keeps the declared order.
  EXPECT_EQ(resolved(m, facts_for("cpu-vm", "1.30.0"), all), "tensorrt_f16");
  // A pin to a rung this build does not carry leaves the order to decide.
  EXPECT_EQ(resolved(m, facts_for("nvidia-desktop", "1.29"), all), "cpu_f32");
}

TEST_F(VariantsTest, AnEmbedderVetoesEveryNonF32Variant) {
  auto list = json::array({variant("tensorrt_f16", {"tensorrt"}, "f16", model_), variant("cuda_f32", {"cuda"}, "f32", model_),
                           variant("cpu_f32", {"cpu"}, "f32", model_)});
  auto all = deployment({"tensorrt", "cuda"});
  auto nvidia = facts_for("nvidia-desktop", "1.30.0");
  EXPECT_EQ(resolved(manifest(list, json::array(), "detector"), nvidia, all), "tensorrt_f16");
  auto embedder = manifest(list, json::array(), "embedder");
  auto r = variants::resolve(embedder.groups[0], nvidia, &all);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->variant->key, "cuda_f32");
  EXPECT_THAT(r->reason, HasSubstr("tensorrt_f16 (vetoed: an embedder runs f32, this is f16)"));
  // A pin cannot take an embedder to f16 either.
  auto pinned = manifest(list, json::array({{{"platform", "nvidia"}, {"variant", "tensorrt_f16"}, {"reason", "3.1 ms"}}}), "embedder");
  EXPECT_EQ(resolved(pinned, nvidia, all), "cuda_f32");
}

TEST_F(VariantsTest, AManifestThatCannotBeRightIsRefusedNamingTheEntry) {
  auto write = [&](const json& m) {
    const fs::path f = dir_ / ("bad-" + std::to_string(files_++) + ".json");
    std::ofstream(f) << m.dump();
    auto r = variants::load_manifest(f);
    EXPECT_FALSE(r);
    return r ? std::string() : r.error().message;
  };
  auto group = [&](json variants_list, json pins = json::array()) {
    return json{{"schema", "rung-variant-manifest"}, {"schema_version", 1},
                {"groups", {{{"name", "tiny"}, {"variants", variants_list}, {"pins", pins}}}}};
  };
  EXPECT_THAT(write(group(json::array({variant("cpu_f32", {"cpu"}, "f32", model_), variant("cpu_f32", {"cpu"}, "f32", model_)}))),
              HasSubstr("variant 'cpu_f32' is declared twice"));
  // The CPU runs f32 or a QDQ file's integers, never fp16: an f16 file there would get a model id naming arithmetic that never ran.
  EXPECT_THAT(write(group(json::array({variant("cpu_f16", {"cpu"}, "f16", model_)}))),
              HasSubstr("variant 'cpu_f16': a f16 file on cpu: the engine runs f32 there"));
  // A QDQ file on the simulated accelerator, a plugin that compiles f32 graphs: refused alike.
  EXPECT_THAT(write(group(json::array({variant("rung_sim_ep_i8", {"rung_sim_ep"}, "i8", model_), variant("cpu_f32", {"cpu"}, "f32", model_)}))),
              HasSubstr("a i8 file on rung_sim_ep: the engine runs f32 there"));
  EXPECT_THAT(write(group(json::array({variant("tensorrt_f32", {"tensorrt"}, "f32", model_)}))), HasSubstr("the engine runs f16 there"));
  // A w8 file computes in float on int8 weights: the CPU's form, never an NPU's, which runs quantised graphs.
  EXPECT_THAT(write(group(json::array({variant("qnn_w8", {"qnn-htp"}, "w8", model_), variant("cpu_f32", {"cpu"}, "f32", model_)}))),
              HasSubstr("a w8 file on qnn-htp: the engine runs i8 there"));
  EXPECT_THAT(write(group(json::array({variant("cpu_f32", {"cpu"}, "f32", model_)}),
                          json::array({{{"platform", "nvidia"}, {"variant", "gpu"}, {"reason", "1 ms"}}}))),
              HasSubstr("the pin for nvidia names no variant of it ('gpu')"));
  EXPECT_THAT(write(group(json::array({variant("cpu_f32", {"cpu"}, "f32", model_)}),
                          json::array({{{"platform", "ios"}, {"variant", "cpu_f32"}, {"reason", "1 ms"}}}))),
              HasSubstr("a pin names platform 'ios'"));
  EXPECT_THAT(write(json{{"schema", "rung-bench-record"}}), HasSubstr("is not a variant manifest"));
  EXPECT_EQ(variants::load_manifest(dir_ / "absent.json").error().code, ErrorCode::kNotFound);
}

// --- the lint: each finding from a manifest made for it ---

TEST_F(VariantsTest, AMissingFileAndAHashThatDiffersAreFindings) {
  auto fine = manifest(json::array({[&] {
    auto v = variant("cpu_f32", {"cpu"}, "f32", model_, sha_);
    v["stable_sha256"] = stable_;
    return v;
  }()}));
  EXPECT_TRUE(findings(fine, deployment({}), true).empty());
  auto missing = manifest(json::array({variant("cpu_f32", {"cpu"}, "f32", dir_ / "gone.onnx", sha_)}));
  EXPECT_THAT(of_kind(findings(missing, deployment({}), true), FindingKind::kFile),
              ::testing::ElementsAre(HasSubstr("tiny/cpu_f32: its file " + (dir_ / "gone.onnx").string() + " is missing")));
  auto other = manifest(json::array({variant("cpu_f32", {"cpu"}, "f32", model_, std::string(64, 'a'))}));
  EXPECT_THAT(of_kind(findings(other, deployment({}), true), FindingKind::kFile),
              ::testing::ElementsAre(HasSubstr("the hash differs: " + model_.string() + " has sha256 " + sha_)));
}

TEST_F(VariantsTest, TwoAcceleratedVariantsOnOnePlatformNeedAPin) {
  auto list = json::array({variant("tensorrt_f16", {"tensorrt"}, "f16", model_), variant("cuda_f32", {"cuda"}, "f32", model_),
                           variant("cpu_f32", {"cpu"}, "f32", model_, sha_)});
  auto d = deployment({"tensorrt", "cuda"});
  auto unpinned = of_kind(findings(manifest(list), d), FindingKind::kUnpinned);
  EXPECT_THAT(unpinned, ::testing::ElementsAre(HasSubstr("tiny on nvidia: 2 accelerated variants are offered (tensorrt_f16, cuda_f32)"),
                                               HasSubstr("tiny on no-gpu-seen: 2 accelerated")));
  auto pinned = manifest(list, json::array({{{"platform", "nvidia"}, {"variant", "tensorrt_f16"}, {"reason", "4.1 ms against 6.0 ms"}}}));
  EXPECT_THAT(of_kind(findings(pinned, d), FindingKind::kUnpinned), ::testing::ElementsAre(HasSubstr("tiny on no-gpu-seen")));
}

TEST_F(VariantsTest, APinWithoutAReasonOrWithoutItsNumbersIsAFinding) {
  auto list = json::array({variant("cpu_f32", {"cpu"}, "f32", model_, sha_)});
  auto blank = manifest(list, json::array({{{"platform", "any"}, {"variant", "cpu_f32"}, {"reason", " "}}}));
  EXPECT_THAT(of_kind(findings(blank, deployment({})), FindingKind::kPin), ::testing::ElementsAre(HasSubstr("pins cpu_f32 without a reason")));
  auto vague = manifest(list, json::array({{{"platform", "any"}, {"variant", "cpu_f32"}, {"reason", "it is faster"}}}));
  EXPECT_THAT(of_kind(findings(vague, deployment({})), FindingKind::kPin), ::testing::ElementsAre(HasSubstr("quotes no measurement")));
  auto measured = manifest(list, json::array({{{"platform", "any"}, {"variant", "cpu_f32"}, {"reason", "1.2 ms against 3.4 ms"}}}));
  EXPECT_TRUE(of_kind(findings(measured, deployment({})), FindingKind::kPin).empty());
}

TEST_F(VariantsTest, AVariantNoPlatformCanResolveToIsAFinding) {
  // Declared after the CPU's: the CPU is offered everywhere, so the order never reaches it.
  auto shadowed = manifest(json::array({variant("cpu_f32", {"cpu"}, "f32", model_, sha_), variant("cuda_f32", {"cuda"}, "f32", model_)}));
  EXPECT_THAT(of_kind(findings(shadowed, deployment({"cuda"})), FindingKind::kUnreachable),
              ::testing::ElementsAre(HasSubstr("tiny/cuda_f32: no platform can resolve to it: cpu_f32, declared before it")));
  // A rung no platform has and the deployment does not provision.
  auto nowhere = manifest(json::array({variant("mlx_f32", {"mlx"}, "f32", model_), variant("cpu_f32", {"cpu"}, "f32", model_, sha_)}));
  EXPECT_THAT(of_kind(findings(nowhere, deployment({"cuda"})), FindingKind::kUnreachable),
              ::testing::ElementsAre(HasSubstr("no platform offers its rungs (mlx) under the deployment, which provisions cuda")));
  // An embedder's f16 variant.
  auto vetoed = manifest(json::array({variant("tensorrt_f16", {"tensorrt"}, "f16", model_), variant("cpu_f32", {"cpu"}, "f32", model_, sha_)}),
                         json::array(), "embedder");
  EXPECT_THAT(of_kind(findings(vetoed, deployment({"tensorrt"})), FindingKind::kUnreachable),
              ::testing::ElementsAre(HasSubstr("an embedder, which runs f32 only")));
  // The loser of a pinned pair stays reachable: a deployment without the winner's rung resolves to it.
  auto pair = manifest(json::array({variant("tensorrt_f16", {"tensorrt"}, "f16", model_), variant("cuda_f32", {"cuda"}, "f32", model_),
                                    variant("cpu_f32", {"cpu"}, "f32", model_, sha_)}),
                       json::array({{{"platform", "any"}, {"variant", "tensorrt_f16"}, {"reason", "4.1 ms against 6.0 ms"}}}));
  EXPECT_TRUE(of_kind(findings(pair, deployment({"tensorrt", "cuda"})), FindingKind::kUnreachable).empty());
}

TEST_F(VariantsTest, ADefaultOnARungTheDeploymentDoesNotProvisionIsAFinding) {
  auto m = manifest(json::array({variant("cuda_f32", {"cuda"}, "f32", model_), variant("cpu_f32", {"cpu"}, "f32", model_, sha_)}));
  EXPECT_THAT(of_kind(findings(m, deployment({"webgpu"})), FindingKind::kUnprovisioned),
              ::testing::ElementsAre(HasSubstr("tiny on nvidia: DEFAULT is cuda_f32 on cuda, which the deployment does not provision: it "
                                               "would silently fall back to cpu_f32"),
                                     HasSubstr("tiny on no-gpu-seen")));
  EXPECT_TRUE(of_kind(findings(m, deployment({"cuda"})), FindingKind::kUnprovisioned).empty());
}

TEST_F(VariantsTest, NoF32VariantForTheCpuIsAFinding) {
  auto m = manifest(json::array({variant("cuda_f32", {"cuda"}, "f32", model_)}));
  EXPECT_THAT(of_kind(findings(m, deployment({"cuda"})), FindingKind::kNoFloor), ::testing::ElementsAre(HasSubstr("has no f32 variant")));
}

// --- evidence: an accelerated DEFAULT needs a release that beat the CPU and passed its gates against the f32 variant ---

class VariantsEvidenceTest : public VariantsTest {
 protected:
  // A release of the tiny model on the simulated accelerator, with a bench record where it ran at
  // `sim_p50` against the CPU's 1.0 ms and a parity report against `parity_ref` with `gates`.
  std::string register_release(double sim_p50, const fs::path& parity_ref, const std::vector<GateOutcome>& gates,
                               const std::function<void(json&)>& damage = {}) {
    auto inspected = inspect_artifact(model_);
    Release r;
    r.model = "tiny";
    r.version = "1.0";
    r.target = {"x86_64 CPU", "rung_sim_ep"};
    std::tie(r.artifact, r.precision) = *inspected;
    r.environment = {"1.30.0", kDevice, {{"RungSimAccelerator", "sha256:abc"}}};
    r.recipe_json = R"({"command": "test"})";
    auto reg = Registry::open("sqlite:" + (dir_ / "registry.sqlite").string());
    EXPECT_TRUE(reg) << reg.error().message;
    EvidenceFile parity = parity_report(parity_ref, gates);
    if (damage) {
      json doc = json::parse(parity.text);
      damage(doc);
      parity.text = doc.dump();
    }
    auto added = reg->add(r, {bench_record(sim_p50)}, {parity});
    EXPECT_TRUE(added) << added.error().message;
    EXPECT_EQ(added->kind, AddOutcome::Kind::kAdded) << added->reason;
    return r.release_key();
  }

  EvidenceFile bench_record(double sim_p50) {
    auto facts = inspect_model_file(model_);
    BenchReport rep;
    rep.date = "2026-11-30T10:00:00Z";
    rep.hostname = "host";
    rep.os = "Linux";
    rep.cpu = "Test CPU 9000";
    rep.hardware_identity = kDevice;
    rep.runtime_version = "1.30.0";
    rep.inputs_mode = "random";
    BenchModelReport m;
    m.name = "tiny";
    m.path = model_;
    m.sha256 = facts->sha256;
    m.stable_sha256 = facts->stable_sha256;
    m.form = "f32";
    m.model_id = "tiny";
    for (auto [rung, p] : {std::pair<std::string, double>{"cpu", 1.0}, {"rung_sim_ep", sim_p50}}) {
      BenchRow row;
      row.rung = rung;
      row.display = rung;
      row.form = "f32";
      row.model_id = "tiny";
      row.ok = true;
      row.latency = {3, p, p, p, p, p, p, 0.1, 0.05};
      row.round_p50_ms = {p};
      row.ratio_to_floor = p;
      row.match = rung == "cpu" ? OutputMatch::kReference : OutputMatch::kMatch;
      m.rows.push_back(row);
    }
    rep.models.push_back(m);
    const fs::path path = dir_ / ("bench-" + std::to_string(files_++) + ".json");
    std::ofstream(path) << bench_record_json(rep, rep.models[0], "rung bench tiny.onnx");
    return {path, test::read_file(path)};
  }

  EvidenceFile parity_report(const fs::path& ref, const std::vector<GateOutcome>& gates) {
    auto r = inspect_model_file(ref);
    auto c = inspect_model_file(model_);
    ParityReport rep;
    rep.ref = "ref";
    rep.cand = "cand";
    rep.ref_run = {ref.filename().string(), r->sha256, r->stable_sha256, "cpu", "1.30.0", kDevice, {}};
    rep.cand_run = {model_.filename().string(), c->sha256, c->stable_sha256, "rung_sim_ep", "1.30.0", kDevice, {}};
    rep.inputs = 4;
    rep.gates = gates;
    const fs::path path = dir_ / ("parity-" + std::to_string(files_++) + ".json");
    EXPECT_TRUE(rep.write_json(path));
    return {path, test::read_file(path)};
  }

  variants::Manifest sim_first(const std::string& release) {
    auto sim = variant("rung_sim_ep_f32", {"rung_sim_ep"}, "f32", model_, sha_);
    if (!release.empty()) sim["release"] = release;
    return manifest(json::array({sim, variant("cpu_f32", {"cpu"}, "f32", model_, sha_)}));
  }

  std::vector<std::string> evidence(const std::string& release) {
    return of_kind(findings(sim_first(release), deployment({"rung_sim_ep"})), FindingKind::kEvidence);
  }

  static GateOutcome boxes(int detections_ref) {
    return {"boxes", "boxes · y", true, "counts", {}, {}, json{{"detections_ref", detections_ref}, {"detections_cand", detections_ref}}.dump()};
  }
  static GateOutcome tensor() { return {"tensor", "tensor · y", true, "4 of 4", {}, {}, "{}"}; }
};

TEST_F(VariantsEvidenceTest, AnAcceleratedDefaultWithoutARegistryReleaseIsAFinding) {
  EXPECT_THAT(evidence(""), ::testing::ElementsAre(HasSubstr("tiny/rung_sim_ep_f32: DEFAULT on qualcomm-hexagon, macos, nvidia")));
  EXPECT_THAT(evidence(""), ::testing::ElementsAre(HasSubstr("it names no registry release")));
  ASSERT_TRUE(Registry::open("sqlite:" + (dir_ / "registry.sqlite").string()));  // a lint reads a registry; it never makes one
  EXPECT_THAT(evidence(std::string(64, 'b')), ::testing::ElementsAre(HasSubstr("is not in the registry")));
}

TEST_F(VariantsEvidenceTest, SlowerThanTheCpuOnBenchIsAFinding) {
  auto key = register_release(2.5, model_, {boxes(7)});
  EXPECT_THAT(evidence(key), ::testing::ElementsAre(HasSubstr("has no bench measurement where rung_sim_ep beat the CPU with matching outputs "
                                                              "(seen: rung_sim_ep p50 2.5 ms against the CPU's 1 ms, output match)")));
}

TEST_F(VariantsEvidenceTest, GatesThatAreTensorOnlyVacuousOrAgainstAnotherModelAreFindings) {
  EXPECT_THAT(evidence(register_release(0.5, model_, {tensor()})), ::testing::ElementsAre(HasSubstr("tensor gates only: no decision gate")));
  fs::remove(dir_ / "registry.sqlite");
  EXPECT_THAT(evidence(register_release(0.5, model_, {boxes(0)})),
              ::testing::ElementsAre(HasSubstr("gate 'boxes · y' is vacuous: the reference decided nothing on its 4 inputs")));
  fs::remove(dir_ / "registry.sqlite");
  auto other = test::write_elementwise_model(dir_ / "other.onnx", {1, 8});
  EXPECT_THAT(evidence(register_release(0.5, other, {boxes(7)})), ::testing::ElementsAre(HasSubstr("not the f32 variant cpu_f32")));
}

// An evidence document another tool wrote may be damaged: a value of the wrong kind is a finding, never a throw.
TEST_F(VariantsEvidenceTest, DamagedParityEvidenceIsAFindingNotAThrow) {
  const std::vector<std::pair<std::string, std::function<void(json&)>>> damages{
      {"inputs past int64, stats an array", [](json& d) { d["inputs"] = 1e300; d["gates"][0]["stats"] = json::array(); }},
      {"gates an object", [](json& d) { d["gates"] = json::object(); }},
      {"a gate a number", [](json& d) { d["gates"][0] = 5; }}};
  for (const auto& [what, damage] : damages) {
    SCOPED_TRACE(what);
    fs::remove(dir_ / "registry.sqlite");
    const auto key = register_release(0.5, model_, {boxes(7)}, damage);
    std::vector<std::string> found;
    EXPECT_NO_THROW(found = evidence(key));
    EXPECT_EQ(found.size(), 1u);
  }
}

TEST_F(VariantsEvidenceTest, ReleaseThatBeatTheCpuAndPassedNonVacuousGatesIsClean) {
  auto key = register_release(0.5, model_, {tensor(), boxes(7)});
  EXPECT_TRUE(evidence(key).empty());
  EXPECT_TRUE(findings(sim_first(key), deployment({"rung_sim_ep"}), true).empty());
}

// --- the engine loads the resolved variant's file ---

// A quantised form the CPU runs, declared before the floor: its DEFAULT needs
// the `rung quantise` report that wrote it as its release's recipe: from the
// group's f32 variant, every gate passed, timed faster on the CPU.
class CpuFormEvidenceTest : public VariantsEvidenceTest {
 protected:
  void SetUp() override {
    VariantsEvidenceTest::SetUp();
    // Any file serves as the form's bytes here: the lint reads hashes and the recipe, not the graph.
    form_ = test::write_elementwise_model(dir_ / "tiny_i8.onnx", {1, 8});
    form_sha_ = inspect_model_file(form_)->sha256;
  }

  std::string register_form(const std::function<void(json&)>& change = {}) {
    json report = {{"schema", "rung-quantise-report"},
                   {"decision", "written"},
                   {"failed", json::array()},
                   {"source", {{"file", model_.string()}, {"sha256", sha_}, {"stable_sha256", stable_}}},
                   {"gates", json::array({json{{"title", "classification · y"}, {"passed", true}}})},
                   {"speed", {{"verdict", "faster"}, {"speedup", 1.5}}},
                   {"recipe", {{"form", "i8"}, {"target", "cpu"}}}};
    if (change) change(report);
    return register_cpu_release(report, false);
  }

  // A release of the form for the CPU whose recipe is `report` (marked gate failed when it failed).
  std::string register_cpu_release(const json& report, bool gate_failed) {
    auto inspected = inspect_artifact(form_);
    Release r;
    r.model = "tiny";
    r.version = "1.0-i8-" + std::to_string(files_++);
    r.target = {"x86_64 CPU", "cpu"};
    std::tie(r.artifact, r.precision) = *inspected;
    r.environment = {"1.30.0", kDevice, {}};
    r.recipe_json = report.dump();
    if (gate_failed) r.gate_failed = RecipeGates{};
    auto reg = Registry::open("sqlite:" + (dir_ / "registry.sqlite").string());
    EXPECT_TRUE(reg) << reg.error().message;
    auto added = reg->add(r, {}, {});
    EXPECT_TRUE(added) << added.error().message;
    EXPECT_EQ(added->kind, AddOutcome::Kind::kAdded) << added->reason;
    return r.release_key();
  }

  std::vector<std::string> findings_for(const std::string& release) {
    auto form = variant("cpu_i8", {"cpu"}, "i8", form_, form_sha_);
    if (!release.empty()) form["release"] = release;
    auto all = findings(manifest(json::array({form, variant("cpu_f32", {"cpu"}, "f32", model_, sha_)})), deployment({}));
    auto evidence = of_kind(all, FindingKind::kEvidence);
    auto unreachable = of_kind(all, FindingKind::kUnreachable);
    evidence.insert(evidence.end(), unreachable.begin(), unreachable.end());
    return evidence;
  }

  fs::path form_;
  std::string form_sha_;
};

TEST_F(CpuFormEvidenceTest, AQuantisedCpuDefaultWithoutItsReportIsAFindingAndTheFloorStaysReachable) {
  // The floor, declared after it, is shadowed on every platform: not a finding (every fallback loads it).
  EXPECT_THAT(findings_for(""), ::testing::ElementsAre(HasSubstr("tiny/cpu_i8: DEFAULT on qualcomm-hexagon")));
  EXPECT_THAT(findings_for(""), ::testing::ElementsAre(HasSubstr("it names no registry release")));
}

TEST_F(CpuFormEvidenceTest, ItsReportMustHavePassedFromTheF32VariantAndTimedItFaster) {
  EXPECT_THAT(findings_for(register_form()), ::testing::IsEmpty());
  EXPECT_THAT(findings_for(register_form([](json& r) { r["speed"]["verdict"] = "within noise"; })),
              ::testing::ElementsAre(HasSubstr("did not time it faster than f32 on the CPU (within noise)")));
  EXPECT_THAT(findings_for(register_form([](json& r) { r["speed"] = nullptr; })),
              ::testing::ElementsAre(HasSubstr("did not time it faster than f32 on the CPU (not timed)")));
  EXPECT_THAT(findings_for(register_form([&](json& r) {
                r["source"]["sha256"] = std::string(64, 'c');
                r["source"]["stable_sha256"] = std::string(64, 'd');
              })),
              ::testing::ElementsAre(HasSubstr("made it from " + model_.string() + " (sha256 cccccccccccc), not from the f32 variant cpu_f32")));
  // A forced report enters the registry only marked, and is no evidence.
  const std::string forced = register_cpu_release(
      {{"schema", "rung-quantise-report"}, {"decision", "forced"}, {"failed", json::array({"classification · y"})}}, true);
  EXPECT_THAT(findings_for(forced), ::testing::ElementsAre(HasSubstr("quantise report decided 'forced' (failed: classification · y")));
  // Not a quantise report at all.
  EXPECT_THAT(findings_for(register_form([](json& r) { r = json{{"command", "made by hand"}}; })),
              ::testing::ElementsAre(HasSubstr("recipe is no rung quantise report")));
}

// A form made on the device ("made_by": the rung quantise report that made it)
// is pinned by that report's hashes; until it is made, and where the device's
// quantise refused it, resolution passes it over to the pin's next choice.
TEST_F(VariantsTest, AFormMadeOnTheDeviceIsPinnedByItsReportAndPassedOverUntilMade) {
  test::write_classifier_sets(dir_);
  const fs::path forms = dir_ / "forms", form = forms / "classifier_i8.onnx", report = forms / "classifier_i8.report.json";
  fs::create_directories(forms);
  auto f32 = inspect_model_file(dir_ / "classifier.onnx");
  json made = {{"key", "cpu_i8"}, {"rungs", {"cpu"}}, {"form", "i8"}, {"file", {{"path", form.string()}, {"made_by", report.string()}}}};
  json list = json::array({variant("rung_sim_ep_f32", {"rung_sim_ep"}, "f32", dir_ / "classifier.onnx", f32->sha256), made,
                           variant("cpu_f32", {"cpu"}, "f32", dir_ / "classifier.onnx", f32->sha256)});
  json pins = json::array({{{"platform", "any"}, {"variant", "cpu_i8"}, {"then", {"cpu_f32"}}, {"reason", "i8 1.5x faster than f32; the sim 2.3x slower"}}});
  auto load = [&] {
    json m = {{"schema", "rung-variant-manifest"},
              {"schema_version", 1},
              {"groups", {{{"name", "classifier"}, {"role", "generic"}, {"variants", list}, {"pins", pins}}}}};
    std::ofstream(dir_ / "made.variants.json") << m.dump(2);
    auto loaded = variants::load_manifest(dir_ / "made.variants.json");
    EXPECT_TRUE(loaded) << loaded.error().message;
    return loaded ? *loaded : variants::Manifest{};
  };
  const auto device = facts_for("cpu-vm", "1.30.0", {test::make_plugin_dir(dir_)});
  const auto sim = deployment({"rung_sim_ep"});
  auto lint = [&](const variants::Manifest& m) {
    std::vector<std::string> out;
    for (const auto& f : findings(m, sim, true)) out.push_back(std::string(finding_kind_name(f.kind)) + " " + f.subject + ": " + f.message);
    return out;
  };

  // Not made: passed over for the pin's next choice, not for the declared order's simulated accelerator.
  auto unmade = load();
  auto r = variants::resolve(unmade.groups[0], device, &sim);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->variant->key, "cpu_f32");
  EXPECT_THAT(r->reason, HasSubstr("cpu_f32: pinned for any platform after cpu_i8 (not made on this device: " + report.string() +
                                   " is missing (tools/make-forms.sh makes it)): i8 1.5x faster"));
  EXPECT_THAT(lint(unmade), ::testing::ElementsAre("file classifier/cpu_i8: not made on this device: " + report.string() +
                                                   " is missing (tools/make-forms.sh makes it)"));
  // Without "then", a pin to what cannot load leaves the declared order to decide: the simulated accelerator first.
  pins[0].erase("then");
  auto by_order = load();
  auto r_order = variants::resolve(by_order.groups[0], device, &sim);
  ASSERT_TRUE(r_order);
  EXPECT_EQ(r_order->variant->key, "rung_sim_ep_f32");
  pins[0]["then"] = {"cpu_f32"};

  // Made by rung quantise on this device: its report pins the bytes, and is the evidence for its DEFAULT.
  auto q = test::quantise(test::classifier_quantise_args(dir_, "int8", "calibration", form) + " --out-json '" + report.string() + "'");
  ASSERT_EQ(q.exit_code, 0) << q.out << q.err;
  auto written = load();
  EXPECT_EQ(written.groups[0].variants[1].sha256, inspect_model_file(form)->sha256);
  r = variants::resolve(written.groups[0], device, &sim);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->variant->key, "cpu_i8");
  // At 8x8 its int8 form is not faster than f32: the report says so, and the lint holds it against the DEFAULT.
  EXPECT_THAT(lint(written), ::testing::ElementsAre(HasSubstr("evidence classifier/cpu_i8: DEFAULT on qualcomm-hexagon")));
  EXPECT_THAT(lint(written), ::testing::ElementsAre(HasSubstr(report.string() + "'s quantise report did not time it faster than f32 on the CPU (")));
  auto edit = [&](const std::function<void(json&)>& change) {
    json j = json::parse(test::read_text(report));
    change(j);
    std::ofstream(report) << j.dump(2);
    return load();
  };
  EXPECT_THAT(lint(edit([](json& j) { j["speed"]["verdict"] = "faster"; })), ::testing::IsEmpty());
  // Other bytes in its place: the hash its report pinned differs.
  const std::string bytes = test::read_text(form);
  std::ofstream(form, std::ios::binary) << test::read_text(dir_ / "classifier.onnx");
  EXPECT_THAT(lint(load()), ::testing::Contains(HasSubstr("file classifier/cpu_i8: the hash differs")));
  std::ofstream(form, std::ios::binary) << bytes;
  // Made from another file than the group's f32 variant.
  EXPECT_THAT(lint(edit([](json& j) { j["source"]["sha256"] = std::string(64, 'e'); })),
              ::testing::Contains(HasSubstr("made it from other bytes (sha256 eeeeeeeeeeee) than the f32 variant cpu_f32")));

  // This device's quantise refused it: passed over with the report's reasons, and no file finding (the device has answered).
  auto refused = edit([](json& j) {
    j["decision"] = "refused";
    j["failed"] = {"speed · slower than f32 on this CPU (1.2-1.4x its time)"};
  });
  r = variants::resolve(refused.groups[0], device, &sim);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->variant->key, "cpu_f32");
  EXPECT_THAT(r->reason, HasSubstr("pinned for any platform after cpu_i8 (this device's rung quantise did not make it (" + report.string() +
                                   ": refused, speed · slower than f32 on this CPU (1.2-1.4x its time))): i8 1.5x"));
  EXPECT_THAT(lint(refused), ::testing::IsEmpty());
}

TEST_F(VariantsTest, AMadeFormIsPinnedByItsReportAloneAndAPinsFallbacksMustBeItsVariants) {
  auto write = [&](const json& variant_entry, const json& pins = json::array()) {
    json m = {{"schema", "rung-variant-manifest"},
              {"schema_version", 1},
              {"groups", {{{"name", "tiny"}, {"variants", json::array({variant_entry, variant("cpu_f32", {"cpu"}, "f32", model_)})}, {"pins", pins}}}}};
    const fs::path f = dir_ / ("made-" + std::to_string(files_++) + ".json");
    std::ofstream(f) << m.dump();
    auto r = variants::load_manifest(f);
    return r ? std::string("loaded") : r.error().message;
  };
  json made = {{"key", "cpu_i8"}, {"rungs", {"cpu"}}, {"form", "i8"}, {"file", {{"path", "f.onnx"}, {"made_by", "f.report.json"}}}};
  EXPECT_EQ(write(made), "loaded");
  json hashed = made;
  hashed["sha256"] = sha_;
  EXPECT_THAT(write(hashed), HasSubstr("variant 'cpu_i8': a file made on the device is pinned by the report that made it (\"made_by\"), not by \"sha256\""));
  json f32 = made;
  f32["form"] = "f32";
  EXPECT_THAT(write(f32), HasSubstr("\"made_by\" names a rung quantise report, which makes quantised forms, not f32"));
  json url = made;
  url["file"] = {{"url", "https://example.invalid/f.onnx"}, {"cached", "f.onnx"}, {"made_by", "r.json"}};
  EXPECT_THAT(write(url), HasSubstr("\"made_by\" goes with a \"path\""));
  EXPECT_THAT(write(made, json::array({{{"platform", "any"}, {"variant", "cpu_i8"}, {"then", {"cpu_f16"}}, {"reason", "1 ms"}}})),
              HasSubstr("the pin for any: \"then\" names no variant of it (\"cpu_f16\")"));
}

// The CPU runs a quantised variant's own file, under its form's model id; its
// optimised graph, once built, is built from that file. Both forms the CPU
// runs: int8 on its integer kernels, w8 on float ones with its weights made
// float when the session is built.
TEST_F(VariantsTest, TheCpuRunsAQuantisedVariantsFileUnderItsFormsModelId) {
  test::write_classifier_sets(dir_);
  auto f32 = inspect_model_file(dir_ / "classifier.onnx");
  core::EngineOptions o;
  o.runtimes.explicit_dir = test::runtime_dir("1.30.0");
  o.runtimes.include_default_locations = false;
  o.runtimes.read_environment = false;
  o.hardware_root = test::fixtures_dir() / "hardware" / "cpu-vm";
  o.worker = test::worker_path();
  fs::path form;
  for (auto [asked, name] : {std::pair{"w8", "w8"}, std::pair{"int8", "i8"}}) {
    SCOPED_TRACE(name);
    form = dir_ / fmt::format("classifier_{}.onnx", name);
    auto q = test::quantise(test::classifier_quantise_args(dir_, asked, "calibration", form));
    ASSERT_EQ(q.exit_code, 0) << q.out << q.err;
    const std::string key = fmt::format("cpu_{}", name), id = fmt::format("classifier_{}", name);
    json list = json::array({variant(key, {"cpu"}, name, form), variant("cpu_f32", {"cpu"}, "f32", dir_ / "classifier.onnx", f32->sha256)});
    json m = {{"schema", "rung-variant-manifest"},
              {"schema_version", 1},
              {"groups", {{{"name", "classifier"}, {"role", "generic"}, {"variants", list}, {"pins", json::array()}}}}};
    std::ofstream(dir_ / "q.variants.json") << m.dump(2);
    auto loaded = variants::load_manifest(dir_ / "q.variants.json");
    ASSERT_TRUE(loaded) << loaded.error().message;
    o.cache_dir = dir_ / ("cache-" + id);
    const auto none = deployment({});
    ASSERT_TRUE(variants::attach(o, *loaded, &none));
    auto engine = core::Engine::start(o);
    ASSERT_TRUE(engine) << engine.error().message;
    (*engine)->wait_until_settled();
    EXPECT_EQ((*engine)->chosen_rung(), "cpu");
    EXPECT_EQ((*engine)->model_choices().at("classifier").model_id, id);
    auto job = (*engine)->open_job();
    auto s = (*job)->session("classifier");
    ASSERT_TRUE(s) << s.error().message;
    EXPECT_EQ((*s)->model_id(), id);
    EXPECT_THAT((*s)->placement_reason(), HasSubstr(fmt::format("its variant's {} form", name)));
    EXPECT_THAT((*s)->placement_reason(), HasSubstr("optimised graph from the cache"));
    // The optimised graph the CPU loads is the form's (named by the form's hash), not the f32 file's.
    bool from_form = false;
    for (const auto& e : fs::recursive_directory_iterator(o.cache_dir)) {
      if (e.path().extension() == ".ort" && e.path().filename().string().rfind("classifier-", 0) == 0) {
        from_form = e.path().filename().string().find(inspect_model_file(form)->sha256.substr(0, 12)) != std::string::npos;
      }
    }
    EXPECT_TRUE(from_form);
  }

  // The (int8) form damaged after the manifest was read: it fails to open, and the CPU serves the f32 file, saying so.
  std::ofstream(form, std::ios::binary | std::ios::trunc) << "not a model";
  o.cache_dir = dir_ / "cache-damaged";
  auto again = core::Engine::start(o);
  ASSERT_TRUE(again) << again.error().message;
  (*again)->wait_until_settled();
  auto job2 = (*again)->open_job();
  auto s2 = (*job2)->session("classifier");
  ASSERT_TRUE(s2) << s2.error().message;
  EXPECT_EQ((*s2)->model_id(), "classifier");
  EXPECT_THAT((*s2)->placement_reason(), HasSubstr("the f32 file, below its variant's i8 form"));
  EXPECT_THAT((*s2)->placement_reason(), HasSubstr("classifier on CPU failed to load"));
}

TEST_F(VariantsTest, TheEngineLoadsTheResolvedVariantsFileAndSaysWhy) {
  // Two files of one group that compute different things, so the output shows which one was loaded.
  auto write = [&](const std::string& name, const std::string& op) {
    test::ModelBuilder b;
    b.input("x", {1, 4}).node("Relu", {"x"}, {"r"}).node(op, {"r", "x"}, {"y"}).output("y", {1, 4});
    return b.save(dir_ / name);
  };
  const fs::path sim_file = write("sim.onnx", "Mul"), cpu_file = write("cpu.onnx", "Add");
  auto m = manifest(json::array({variant("rung_sim_ep_f32", {"rung_sim_ep"}, "f32", sim_file), variant("cpu_f32", {"cpu"}, "f32", cpu_file)}));
  const fs::path plugins = test::make_plugin_dir(dir_);
  auto run = [&](const variants::Deployment& d, std::string& rung, std::string& reason) {
    core::EngineOptions o;
    o.cache_dir = dir_ / ("cache-" + std::to_string(files_++));
    o.runtimes.explicit_dir = test::runtime_dir("1.30.0");
    o.runtimes.include_default_locations = false;
    o.runtimes.read_environment = false;
    o.hardware_root = test::fixtures_dir() / "hardware" / "cpu-vm";
    o.plugin_dirs = {plugins};
    o.acceptance_ratio = 1000;
    o.worker = test::worker_path();
    EXPECT_TRUE(variants::attach(o, m, &d));
    auto engine = core::Engine::start(o);
    EXPECT_TRUE(engine) << engine.error().message;
    (*engine)->wait_until_settled();
    EXPECT_EQ((*engine)->chosen_rung(), "rung_sim_ep");
    const core::ModelChoice& choice = (*engine)->model_choices().at("tiny");
    reason = choice.reason;
    auto job = (*engine)->open_job();
    auto s = (*job)->session("tiny");
    EXPECT_TRUE(s) << s.error().message;
    rung = (*s)->rung() + " · " + (*s)->placement_reason();
    Tensor x{"x", ElementType::kFloat, {1, 4}, {}, {}};
    const std::vector<float> v = {3, 3, 3, 3};
    x.bytes.resize(v.size() * sizeof(float));
    std::memcpy(x.bytes.data(), v.data(), x.bytes.size());
    auto out = (*s)->run({x});
    EXPECT_TRUE(out) << out.error().message;
    return choice.variant + " = " + std::to_string(static_cast<int>(out->at(0).to_doubles().at(0)));
  };
  std::string rung, reason;
  EXPECT_EQ(run(deployment({"rung_sim_ep"}), rung, reason), "rung_sim_ep_f32 = 9");  // relu(3) * 3
  EXPECT_THAT(rung, HasSubstr("rung_sim_ep · the chosen rung's engine"));
  EXPECT_THAT(reason, HasSubstr("rung_sim_ep_f32: first declared whose rung is offered here (rung_sim_ep, a plugin EP)"));
  // Narrowed: the probe still takes the simulated accelerator, but this model's variant is the CPU's.
  EXPECT_EQ(run(deployment({}), rung, reason), "cpu_f32 = 6");  // relu(3) + 3
  EXPECT_THAT(rung, HasSubstr("cpu · rung_sim_ep is not a rung of its variant (cpu)"));
  EXPECT_THAT(reason, HasSubstr("passed over rung_sim_ep_f32 (rung_sim_ep: not provisioned by the deployment)"));
}

}  // namespace
}  // namespace rung
