// The release registry's rules, one test body run against both databases:
// SQLite in a temporary file, and a real throwaway PostgreSQL server
// (tests/postgres_server.h; skipped, saying why, only where it cannot start).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <sys/stat.h>

#include <fstream>
#include <functional>
#include <tuple>
#include <nlohmann/json.hpp>

#include "graph/model_file.h"
#include "graph/onnx_file.h"
#include "model_builder.h"
#include "os/file_hash.h"
#include "os/sha256.h"
#include "postgres_server.h"
#include "registry/database.h"
#include "registry/migrations.h"
#include "registry/records.h"
#include "rung/bench.h"
#include "rung/bench_record.h"
#include "rung/parity.h"
#include "rung/registry.h"
#include "test_support.h"

namespace rung {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kDevice = "linux; cpu Test CPU 9000";
constexpr const char* kOtherDevice = "android; soc Qualcomm SM8635; cpu Kryo";

using test::Db;

class RegistryTest : public ::testing::TestWithParam<Db> {
 protected:
  void SetUp() override {
    dir_ = test::make_temp_dir("rung-registry");
    std::string skip;
    url_ = test::fresh_registry(GetParam(), dir_, skip);
    if (url_.empty()) GTEST_SKIP() << "PostgreSQL cannot start here: " << skip;
  }
  void TearDown() override { fs::remove_all(dir_); }

  Registry open() {
    auto r = Registry::open(url_);
    if (!r) ADD_FAILURE() << r.error().message;
    return std::move(*r);
  }

  // A real ONNX model; `width` makes other bytes.
  fs::path model(const std::string& name, std::int64_t width = 16) {
    return test::write_elementwise_model(dir_ / name, {1, width});
  }

  // A release of `file` as rung's tools would describe it.
  Release release_of(const fs::path& file, const std::string& version = "1.0") {
    auto inspected = inspect_artifact(file);
    EXPECT_TRUE(inspected) << inspected.error().message;
    Release r;
    r.model = "tiny";
    r.version = version;
    r.target = {"x86_64 CPU", "cpu"};
    std::tie(r.artifact, r.precision) = *inspected;
    r.environment = {"1.30.0", kDevice, {{"CPUExecutionProvider", "1.30.0"}}};
    r.recipe_json = R"({"command": "rung quantise tiny.onnx --form int8", "settings": {"calibrator": "minmax"}})";
    return r;
  }

  // A bench record of `file` written by rung's own writer, measured on `device` with ORT `runtime`.
  EvidenceFile bench_record(const fs::path& file, const std::string& runtime, const std::string& device, double p50 = 1.5,
                            const std::string& date = "2026-11-29T10:00:00Z") {
    auto facts = inspect_model_file(file);
    EXPECT_TRUE(facts);
    BenchReport rep;
    rep.date = date;
    rep.hostname = "host-" + std::to_string(std::hash<std::string>{}(device) % 1000);
    rep.os = "Linux 6.1 x86_64";
    rep.cpu = "Test CPU 9000";
    rep.logical_cpus = 8;
    rep.hardware_identity = device;
    rep.runtime_version = runtime;
    rep.runtime_library = "/opt/onnxruntime-" + runtime + "/libonnxruntime.so";
    rep.api_version = 22;
    rep.inputs_mode = "random";
    BenchModelReport m;
    m.name = "tiny";
    m.path = file;
    m.sha256 = facts->sha256;
    m.stable_sha256 = facts->stable_sha256;
    m.size_bytes = facts->size_bytes;
    m.form = "f32";
    m.model_id = "tiny";
    m.opset = facts->opset;
    m.nodes = facts->nodes;
    for (const char* rung : {"cpu", "rung_sim_ep"}) {
      BenchRow row;
      row.rung = rung;
      row.display = rung;
      row.provider = rung == std::string("cpu") ? "CPUExecutionProvider" : "RungSimAccelerator";
      row.form = "f32";
      row.model_id = "tiny";
      row.ok = true;
      row.first_run_ms = 2;
      const double p = rung == std::string("cpu") ? p50 : p50 * 2;
      row.latency = {3, p * 0.9, p, p * 1.1, p * 1.2, p * 1.2, p, 0.1, 0.05};
      row.round_p50_ms = {p};
      row.throughput_per_s = 1000 / p;
      row.peak_rss_mb = 50;
      row.ratio_to_floor = p / p50;
      row.match = rung == std::string("cpu") ? OutputMatch::kReference : OutputMatch::kMatch;
      m.rows.push_back(row);
    }
    rep.models.push_back(m);
    const fs::path path = dir_ / ("record-" + std::to_string(records_++) + ".json");
    std::ofstream(path) << bench_record_json(rep, rep.models[0], "rung bench tiny.onnx --json");
    return {path, test::read_file(path)};
  }

  // A parity report written by rung parity's own writer, its candidate `file` on `rung` with ORT `runtime`.
  EvidenceFile parity_report(const fs::path& file, const std::string& runtime, const std::string& device, const std::string& rung = "cpu") {
    auto facts = inspect_model_file(file);
    ParityReport rep;
    rep.ref = "tiny.onnx · CPU · ONNX Runtime 1.30.0";
    rep.cand = "candidate";
    rep.ref_run = {"tiny.onnx", facts->sha256, facts->stable_sha256, "cpu", "1.30.0", device, {}};
    rep.cand_run = {file.filename().string(), facts->sha256, facts->stable_sha256, rung, runtime, device, {}};
    rep.inputs = 3;
    rep.gates.push_back({"tensor", "tensor · y", true, "3 of 3 inputs pass", {}, {}, "{}"});
    const fs::path path = dir_ / ("parity-" + std::to_string(records_++) + ".json");
    EXPECT_TRUE(rep.write_json(path));
    return {path, test::read_file(path)};
  }

  fs::path dir_;
  std::string url_;
  int records_ = 0;
};

TEST_P(RegistryTest, ARegisteredReleaseReadsBackWhole) {
  auto reg = open();
  Release r = release_of(model("tiny.onnx"));
  auto out = reg.add(r, {bench_record(r.artifact.path, "1.30.0", kDevice)}, {parity_report(r.artifact.path, "1.30.0", kDevice)});
  ASSERT_TRUE(out) << out.error().message;
  ASSERT_EQ(out->kind, AddOutcome::Kind::kAdded) << out->reason;
  EXPECT_EQ(out->evidence_added, 2);
  EXPECT_EQ(out->measurements_added, 1);  // the record's one measurement (a cpu and a rung_sim_ep row), for the fleet view

  auto found = reg.find("tiny@1.0");
  ASSERT_TRUE(found) << found.error().message;
  ASSERT_EQ(found->size(), 1u);
  const Release& back = found->front();
  EXPECT_GT(back.id, 0);
  EXPECT_EQ(back.release_key(), r.release_key());
  EXPECT_EQ(back.artifact.sha256, r.artifact.sha256);
  EXPECT_EQ(back.artifact.stable_sha256, r.artifact.stable_sha256);
  EXPECT_EQ(back.artifact.size_bytes, r.artifact.size_bytes);
  EXPECT_TRUE(back.artifact.retained);
  EXPECT_EQ(back.environment.providers, r.environment.providers);
  ASSERT_EQ(back.precision.kind, PrecisionEvidence::Kind::kInitializers);
  EXPECT_EQ(back.precision.by_type.at("float32").tensors, r.precision.by_type.at("float32").tensors);
  ASSERT_EQ(back.evidence.size(), 2u);
  EXPECT_EQ(back.evidence[0].kind, "bench");
  EXPECT_THAT(back.evidence[0].summary, HasSubstr("cpu: p50 1.5 ms, output reference"));
  EXPECT_EQ(back.evidence[1].kind, "parity");
  EXPECT_THAT(back.evidence[1].summary, HasSubstr("parity PASS"));
  EXPECT_EQ(back.target_label(), "x86_64 CPU / ORT 1.30.0 / cpu");

  auto j = nlohmann::json::parse(back.to_json());
  EXPECT_EQ(j["recipe"]["settings"]["calibrator"], "minmax");
  EXPECT_EQ(j["artifact"]["retention"], "retained");
  EXPECT_EQ(j["precision"]["initializers"]["float32"]["tensors"], r.precision.by_type.at("float32").tensors);
  EXPECT_EQ(reg.list()->size(), 1u);
}

TEST_P(RegistryTest, TheSameKeyWithOtherBytesIsRefusedNamingBothHashes) {
  auto reg = open();
  Release first = release_of(model("a.onnx", 16));
  ASSERT_EQ(reg.add(first, {}, {})->kind, AddOutcome::Kind::kAdded);
  // The same recipe, environment and target made other bytes: a second build that did not reproduce.
  Release second = release_of(model("b.onnx", 32));
  ASSERT_EQ(second.release_key(), first.release_key());
  auto out = reg.add(second, {}, {});
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(out->kind, AddOutcome::Kind::kRefused);
  EXPECT_THAT(out->reason, HasSubstr(first.artifact.sha256));
  EXPECT_THAT(out->reason, HasSubstr(second.artifact.sha256));
  EXPECT_THAT(out->reason, HasSubstr("not reproducible"));
  ASSERT_EQ(reg.list()->size(), 1u);
  EXPECT_EQ(reg.list()->front().artifact.sha256, first.artifact.sha256);
}

TEST_P(RegistryTest, TheSameBytesAgainAreTheSameReleaseAndGainTheirNewEvidence) {
  auto reg = open();
  Release r = release_of(model("tiny.onnx"));
  ASSERT_EQ(reg.add(r, {}, {})->kind, AddOutcome::Kind::kAdded);
  auto again = reg.add(r, {bench_record(r.artifact.path, "1.30.0", kDevice)}, {});
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(again->kind, AddOutcome::Kind::kAlreadyRegistered);
  EXPECT_EQ(again->evidence_added, 1);
  EXPECT_EQ(reg.list()->size(), 1u);
}

TEST_P(RegistryTest, TheSameBytesForAnotherTargetAreASecondRelease) {
  auto reg = open();
  Release cpu = release_of(model("tiny.onnx"));
  ASSERT_EQ(reg.add(cpu, {}, {})->kind, AddOutcome::Kind::kAdded);
  Release sim = cpu;
  sim.target.rung = "rung_sim_ep";
  sim.environment.providers = {{"rung_sim_ep", "sha256:" + std::string(64, '5')}};
  auto out = reg.add(sim, {}, {});
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(out->kind, AddOutcome::Kind::kAdded) << out->reason;
  Release arm = cpu;
  arm.target.device_class = "aarch64 CPU";
  arm.environment.device = kOtherDevice;
  EXPECT_EQ(reg.add(arm, {}, {})->kind, AddOutcome::Kind::kAdded);
  EXPECT_EQ(reg.list()->size(), 3u);
  EXPECT_EQ(reg.find("tiny")->size(), 3u);
}

TEST_P(RegistryTest, ARecipeSettingIsPartOfTheKeyButAReportsResultsAreNot) {
  auto reg = open();
  // Two builder settings on one target (TF32 on and off): two releases.
  Release on = release_of(model("a.onnx", 16));
  on.recipe_json = R"({"recipe": {"tool": "trtexec", "tf32": true}, "output_sha256": "aaa", "date": "2026-11-01"})";
  Release off = release_of(model("b.onnx", 32));
  off.recipe_json = R"({"recipe": {"tool": "trtexec", "tf32": false}, "output_sha256": "bbb", "date": "2026-11-02"})";
  EXPECT_EQ(reg.add(on, {}, {})->kind, AddOutcome::Kind::kAdded);
  EXPECT_EQ(reg.add(off, {}, {})->kind, AddOutcome::Kind::kAdded);
  // A rebuild with TF32 on: its report differs (output hash, date), its recipe does not, its bytes do.
  Release rebuild = release_of(model("c.onnx", 48));
  rebuild.recipe_json = R"({"recipe": {"tf32": true, "tool": "trtexec"}, "output_sha256": "ccc", "date": "2026-11-03"})";
  EXPECT_EQ(rebuild.release_key(), on.release_key());
  auto out = reg.add(rebuild, {}, {});
  EXPECT_EQ(out->kind, AddOutcome::Kind::kRefused);
  EXPECT_EQ(reg.list()->size(), 2u);
}

TEST_P(RegistryTest, EvidenceMeasuredOnAnotherRuntimeBuildIsRefusedAndNothingIsWritten) {
  auto reg = open();
  Release r = release_of(model("tiny.onnx"));
  auto bench = reg.add(r, {bench_record(r.artifact.path, "1.28.2", kDevice)}, {});
  ASSERT_TRUE(bench) << bench.error().message;
  EXPECT_EQ(bench->kind, AddOutcome::Kind::kRefused);
  EXPECT_THAT(bench->reason, HasSubstr("measured on ORT 1.28.2, release targets 1.30.0"));
  auto parity = reg.add(r, {}, {parity_report(r.artifact.path, "1.28.2", kDevice)});
  EXPECT_EQ(parity->kind, AddOutcome::Kind::kRefused);
  EXPECT_THAT(parity->reason, HasSubstr("parity report"));
  EXPECT_THAT(parity->reason, HasSubstr("measured on ORT 1.28.2, release targets 1.30.0"));
  // One good document beside a refused one: still refused, nothing written.
  auto mixed = reg.add(r, {bench_record(r.artifact.path, "1.30.0", kDevice)}, {parity_report(r.artifact.path, "1.28.2", kDevice)});
  EXPECT_EQ(mixed->kind, AddOutcome::Kind::kRefused);
  EXPECT_TRUE(reg.list()->empty());
  EXPECT_TRUE(reg.fleet()->empty());
}

TEST_P(RegistryTest, EvidenceFromAnotherDeviceRungOrModelIsRefused) {
  auto reg = open();
  Release r = release_of(model("tiny.onnx"));
  auto device = reg.add(r, {bench_record(r.artifact.path, "1.30.0", kOtherDevice)}, {});
  EXPECT_EQ(device->kind, AddOutcome::Kind::kRefused);
  EXPECT_THAT(device->reason, HasSubstr("measured on device"));
  auto rung = reg.add(r, {}, {parity_report(r.artifact.path, "1.30.0", kDevice, "rung_sim_ep")});
  EXPECT_EQ(rung->kind, AddOutcome::Kind::kRefused);
  EXPECT_THAT(rung->reason, HasSubstr("ran its candidate on rung 'rung_sim_ep', release targets 'cpu'"));
  const fs::path other = model("other.onnx", 8);
  auto model_hash = reg.add(r, {bench_record(other, "1.30.0", kDevice)}, {});
  EXPECT_EQ(model_hash->kind, AddOutcome::Kind::kRefused);
  EXPECT_THAT(model_hash->reason, HasSubstr("another model"));
  EXPECT_THAT(model_hash->reason, HasSubstr(sha256_of_file(other)->substr(0, 12)));
  Release no_row = r;
  no_row.target.rung = "cuda";
  no_row.environment.providers = {{"CUDAExecutionProvider", "1.30.0"}};
  auto cuda = reg.add(no_row, {bench_record(r.artifact.path, "1.30.0", kDevice)}, {});
  EXPECT_EQ(cuda->kind, AddOutcome::Kind::kRefused);
  EXPECT_THAT(cuda->reason, HasSubstr("no row for rung 'cuda'"));
  EXPECT_TRUE(reg.list()->empty());
}

TEST_P(RegistryTest, EvidenceOfTheSameGraphWithOtherDocStringsIsAccepted) {
  auto reg = open();
  const fs::path file = model("tiny.onnx");
  auto read = read_onnx_model(file);
  ASSERT_TRUE(read);
  onnx::ModelProto m = *read;
  m.mutable_graph()->mutable_node(0)->set_doc_string("/home/ana/export/model.py(12)");
  const fs::path moved = dir_ / "moved.onnx";
  std::ofstream(moved, std::ios::binary) << m.SerializeAsString();
  Release r = release_of(file);
  // Measured on the copy exported elsewhere: other bytes, the same stable hash.
  auto out = reg.add(r, {bench_record(moved, "1.30.0", kDevice)}, {});
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(out->kind, AddOutcome::Kind::kAdded) << out->reason;
}

TEST_P(RegistryTest, ARecordFromSeveralDevicesKeepsOnlyTheTargetsMeasurements) {
  auto reg = open();
  Release r = release_of(model("tiny.onnx"));
  auto here = bench_record(r.artifact.path, "1.30.0", kDevice);
  auto there = bench_record(r.artifact.path, "1.29.0", kOtherDevice);
  auto merged = merge_bench_records(here.text, there.text);
  ASSERT_TRUE(merged) << merged.error().message;
  auto out = reg.add(r, {{dir_ / "merged.json", *merged}}, {});
  ASSERT_EQ(out->kind, AddOutcome::Kind::kAdded) << out->reason;
  auto doc = nlohmann::json::parse(out->release.evidence.at(0).document);
  ASSERT_EQ(doc["measurements"].size(), 1u);
  EXPECT_EQ(doc["measurements"][0]["device"], kDevice);
  EXPECT_THAT(out->release.evidence.at(0).summary, HasSubstr("1 measurement"));
}

TEST_P(RegistryTest, VerifyTellsMissingFromNotRetainedAndSaysWhatChanged) {
  auto reg = open();
  const fs::path kept = model("kept.onnx", 16), gone = model("gone.onnx", 24), plan = model("plan.onnx", 32), docs = model("docs.onnx", 40),
                 graph = model("graph.onnx", 48);
  for (const auto& [file, version] : std::vector<std::pair<fs::path, std::string>>{{kept, "1"}, {gone, "2"}, {plan, "3"}, {docs, "4"}, {graph, "5"}}) {
    Release r = release_of(file, version);
    if (file == plan) {
      r.artifact.retained = false;
      r.artifact.not_retained_reason = "a 119 MB plan, gitignored: its recipe and cache are the identity";
    }
    ASSERT_EQ(reg.add(r, {}, {})->kind, AddOutcome::Kind::kAdded);
  }
  fs::remove(gone);
  fs::remove(plan);  // not kept, deliberately: the same absence as `gone`, another verdict
  auto read = read_onnx_model(docs);
  ASSERT_TRUE(read);
  onnx::ModelProto m = *read;
  m.set_doc_string("re-exported from /tmp/elsewhere");
  std::ofstream(docs, std::ios::binary | std::ios::trunc) << m.SerializeAsString();
  test::write_elementwise_model(graph, {1, 49});

  auto lines = reg.verify();
  ASSERT_TRUE(lines) << lines.error().message;
  ASSERT_EQ(lines->size(), 5u);
  std::map<std::string, VerifyLine> by_version;
  for (const auto& l : *lines) by_version[l.release.version] = l;
  EXPECT_EQ(by_version["1"].state, VerifyState::kOk);
  EXPECT_EQ(by_version["2"].state, VerifyState::kMissing);
  EXPECT_THAT(by_version["2"].detail, HasSubstr("gone.onnx: does not exist"));
  EXPECT_EQ(by_version["3"].state, VerifyState::kNotRetained);
  EXPECT_EQ(by_version["3"].detail, "a 119 MB plan, gitignored: its recipe and cache are the identity");
  EXPECT_EQ(by_version["4"].state, VerifyState::kChanged);
  EXPECT_THAT(by_version["4"].detail, HasSubstr("the stable hash holds"));
  EXPECT_EQ(by_version["5"].state, VerifyState::kChanged);
  EXPECT_THAT(by_version["5"].detail, HasSubstr("the stable hash changed too"));
  EXPECT_STREQ(verify_state_name(VerifyState::kNotRetained), "not retained");
  EXPECT_STREQ(verify_state_name(VerifyState::kMissing), "missing");
}

TEST_P(RegistryTest, OpaquePrecisionRoundTripsDistinctFromNotInspected) {
  auto reg = open();
  // A compiled plan: not ONNX, so its weights cannot be read unless we say why not.
  const fs::path plan = dir_ / "detector.plan";
  std::ofstream(plan, std::ios::binary) << std::string("\x01\x02plan bytes", 12);
  auto refused = inspect_artifact(plan);
  ASSERT_FALSE(refused);
  EXPECT_THAT(refused.error().message, HasSubstr("--opaque"));
  auto opaque = inspect_artifact(plan, "tensorrt plan: weights are not inspectable");
  ASSERT_TRUE(opaque) << opaque.error().message;
  EXPECT_EQ(opaque->first.stable_sha256, "");
  Release engine = release_of(model("tiny.onnx"));
  std::tie(engine.artifact, engine.precision) = *opaque;
  engine.target.rung = "tensorrt";
  Release unread = release_of(model("tiny.onnx"), "2.0");
  unread.precision = {};  // not inspected: nobody looked
  ASSERT_EQ(reg.add(engine, {}, {})->kind, AddOutcome::Kind::kAdded);
  ASSERT_EQ(reg.add(unread, {}, {})->kind, AddOutcome::Kind::kAdded);

  auto e = reg.find("tiny@1.0")->front();
  auto u = reg.find("tiny@2.0")->front();
  EXPECT_EQ(e.precision.kind, PrecisionEvidence::Kind::kOpaque);
  EXPECT_EQ(e.precision.opaque_why, "tensorrt plan: weights are not inspectable");
  EXPECT_EQ(u.precision.kind, PrecisionEvidence::Kind::kNotInspected);
  EXPECT_EQ(nlohmann::json::parse(e.to_json())["precision"], "opaque: tensorrt plan: weights are not inspectable");
  EXPECT_TRUE(nlohmann::json::parse(u.to_json())["precision"].is_null());
  EXPECT_TRUE(nlohmann::json::parse(e.to_json())["artifact"]["stable_sha256"].is_null());
}

TEST_P(RegistryTest, AnEpContextModelIsOpaqueByItself) {
  test::ModelBuilder b;
  b.input("x", {1, 4}).node("Relu", {"x"}, {"y"}).output("y", {1, 4});
  onnx::ModelProto m;
  ASSERT_TRUE(m.ParseFromString(b.serialize()));
  auto* n = m.mutable_graph()->mutable_node(0);
  n->set_op_type("EPContext");
  n->set_domain("com.microsoft");
  const fs::path file = dir_ / "engine_ctx.onnx";
  std::ofstream(file, std::ios::binary) << m.SerializeAsString();
  auto a = inspect_artifact(file);
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_EQ(a->second.kind, PrecisionEvidence::Kind::kOpaque);
  EXPECT_THAT(a->second.opaque_why, HasSubstr("1 EPContext node"));
  EXPECT_FALSE(a->first.stable_sha256.empty());
}

TEST_P(RegistryTest, ImportAppendsMeasurementsFromEveryDeviceOnceAndTheFleetViewShowsThemSideBySide) {
  auto reg = open();
  const fs::path file = model("tiny.onnx");
  std::vector<EvidenceFile> records = {bench_record(file, "1.30.0", kDevice, 1.5, "2026-11-01T10:00:00Z"),
                                       bench_record(file, "1.30.0", kDevice, 1.2, "2026-11-02T10:00:00Z"),
                                       bench_record(file, "1.29.0", kOtherDevice, 7.0)};
  auto first = reg.import_records(records);
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_EQ(first->records, 3);
  EXPECT_EQ(first->measurements_new, 3);
  EXPECT_EQ(first->measurements_known, 0);
  EXPECT_EQ(first->devices, 2);
  auto again = reg.import_records(records);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->measurements_new, 0);
  EXPECT_EQ(again->measurements_known, 3);

  auto fleet = reg.fleet();
  ASSERT_TRUE(fleet) << fleet.error().message;
  ASSERT_EQ(fleet->size(), 1u);
  const FleetModel& m = fleet->front();
  EXPECT_EQ(m.name, "tiny");
  EXPECT_EQ(m.sha256, *sha256_of_file(file));
  EXPECT_EQ(m.rungs, (std::vector<std::string>{"cpu", "rung_sim_ep"}));
  ASSERT_EQ(m.devices.size(), 2u);
  const FleetDevice* mine = m.devices[0].device == kDevice ? &m.devices[0] : &m.devices[1];
  const FleetDevice* phone = mine == &m.devices[0] ? &m.devices[1] : &m.devices[0];
  EXPECT_EQ(mine->runtime_version, "1.30.0");
  EXPECT_DOUBLE_EQ(*mine->rungs.at("cpu").p50_ms, 1.2);  // the latest of the two measurements
  EXPECT_EQ(mine->rungs.at("cpu").measurements, 2);
  EXPECT_EQ(mine->rungs.at("rung_sim_ep").output_match, "match");
  EXPECT_EQ(phone->runtime_version, "1.29.0");
  EXPECT_DOUBLE_EQ(*phone->rungs.at("rung_sim_ep").p50_ms, 14.0);
}

TEST_P(RegistryTest, ABadRecordImportsNothing) {
  auto reg = open();
  auto good = bench_record(model("tiny.onnx"), "1.30.0", kDevice);
  auto bad = reg.import_records({good, {dir_ / "bad.json", R"({"schema": "rung-bench-record", "schema_version": 7})"}});
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message, HasSubstr("bad.json"));
  EXPECT_THAT(bad.error().message, HasSubstr("schema version 7"));
  EXPECT_TRUE(reg.fleet()->empty());
}

TEST_P(RegistryTest, AnImportedFigureOutsideItsRangeIsRefusedByNameAndNothingIsStored) {
  auto reg = open();
  const auto good = bench_record(model("tiny.onnx"), "1.30.0", kDevice);
  // One field of the record changed, each alone: the row of rung cpu (the first).
  const auto with = [&](const std::string& pointer, const nlohmann::json& value) {
    nlohmann::json j = nlohmann::json::parse(good.text);
    j[nlohmann::json::json_pointer("/measurements/0/rows/0" + pointer)] = value;
    return EvidenceFile{dir_ / "edited.json", j.dump()};
  };
  struct Case {
    std::string pointer;
    nlohmann::json value;
    bool taken;
  };
  const std::vector<Case> cases = {
      {"/latency_ms/p50", "x", false},          {"/latency_ms/p50", -1, false},
      {"/latency_ms/p50", 0, false},            {"/latency_ms/p50", 1e300, false},
      {"/latency_ms/p50", 86'400'000.5, false}, {"/latency_ms/p50", 86'400'000, true},
      {"/latency_ms/p50", 1e-9, true},          {"/latency_ms/p50", nullptr, false},  // a rung that ran has a p50
      {"/latency_ms/p50", true, false},         {"/output_match/max_abs_diff", -1e-9, false},
      {"/output_match/max_abs_diff", "0", false}, {"/output_match/max_abs_diff", 0, true},
      {"/output_match/max_abs_diff", nullptr, true},
  };
  const auto stored = [&reg] {
    int n = 0;
    const auto fleet = reg.fleet();
    for (const auto& m : *fleet)
      for (const auto& d : m.devices)
        for (const auto& [rung, cell] : d.rungs) n += cell.measurements;
    return n;
  };
  for (const auto& c : cases) {
    const int before = stored();
    auto r = reg.import_records({with(c.pointer, c.value)});
    EXPECT_EQ(r.ok(), c.taken) << c.pointer << " = " << c.value.dump() << (r ? "" : ": " + r.error().message);
    if (!r) {
      EXPECT_THAT(r.error().message, HasSubstr("edited.json")) << c.pointer;
      EXPECT_THAT(r.error().message, HasSubstr(c.pointer.substr(1, c.pointer.find('/', 1) - 1))) << r.error().message;
      EXPECT_THAT(r.error().message, HasSubstr("rung cpu")) << r.error().message;
      EXPECT_EQ(stored(), before) << c.pointer;
    }
  }
  // A rung that did not run carries no p50 at all.
  nlohmann::json failed = nlohmann::json::parse(good.text);
  auto& row = failed["measurements"][0]["rows"][0];
  row["ok"] = false;
  row["latency_ms"]["p50"] = "x";
  EXPECT_TRUE(reg.import_records({{dir_ / "failed.json", failed.dump()}}));
}

TEST_P(RegistryTest, TheSchemaIsMigratedOnceAndANewerOneIsRefused) {
  { auto reg = open(); }
  auto db = registry::open_database(url_);  // a second open applies nothing again
  ASSERT_TRUE(db) << db.error().message;
  auto versions = (*db)->query("SELECT version, name FROM schema_migrations ORDER BY version");
  ASSERT_TRUE(versions);
  ASSERT_EQ(versions->size(), 3u);
  EXPECT_EQ(registry::as_int((*versions)[0][0]), 1);
  EXPECT_EQ(registry::as_text((*versions)[0][1]), "releases");
  EXPECT_EQ(registry::as_text((*versions)[1][1]), "fleet");
  EXPECT_EQ(registry::as_int((*versions)[2][0]), 3);
  EXPECT_EQ(registry::as_text((*versions)[2][1]), "gate_failed");
  ASSERT_TRUE((*db)->query("INSERT INTO schema_migrations (version, name, applied_at) VALUES (99, 'future', 'then')"));
  auto newer = Registry::open(url_);
  ASSERT_FALSE(newer);
  EXPECT_THAT(newer.error().message, HasSubstr("schema version 99"));
}

TEST_P(RegistryTest, ARegistryOfSchemaVersionOneIsUpgradedWithItsMeasurementsInTheFleetView) {
  // The registry as a rung that knew only migration 1 left it, with three measurements in it.
  auto old = GetParam() == Db::kSqlite ? registry::open_sqlite(url_.substr(7)) : registry::open_postgresql(url_);
  ASSERT_TRUE(old) << old.error().message;
  registry::Database& db = **old;
  ASSERT_TRUE(db.execute_script("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"));
  ASSERT_TRUE(db.execute_script(registry::migrations_for(db.backend()).at(0).sql));
  ASSERT_TRUE(db.query("INSERT INTO schema_migrations VALUES (1, 'releases', 'then')"));
  const std::string insert =
      "INSERT INTO measurements (digest, model_name, model_sha256, device, hostname, runtime_version, measured_at, rung, model_id, ok, "
      "p50_ms, output_match) VALUES (?, 'det', 'abc', ?, 'h', '1.30.0', ?, 'cpu', 'det', 1, ?, 'reference')";
  ASSERT_TRUE(db.query(insert, {std::string("d1"), std::string(kDevice), std::string("2026-11-01T00:00:00Z"), 9.0}));
  ASSERT_TRUE(db.query(insert, {std::string("d2"), std::string(kDevice), std::string("2026-11-02T00:00:00Z"), 8.0}));
  ASSERT_TRUE(db.query(insert, {std::string("d3"), std::string(kOtherDevice), std::string("2026-11-01T00:00:00Z"), 30.0}));

  auto reg = open();
  auto fleet = reg.fleet();
  ASSERT_TRUE(fleet) << fleet.error().message;
  ASSERT_EQ(fleet->size(), 1u);
  ASSERT_EQ(fleet->front().devices.size(), 2u);
  for (const auto& d : fleet->front().devices) {
    const FleetCell& cpu = d.rungs.at("cpu");
    EXPECT_EQ(cpu.measurements, d.device == kDevice ? 2 : 1);
    EXPECT_DOUBLE_EQ(*cpu.p50_ms, d.device == kDevice ? 8.0 : 30.0);
  }
}

TEST_P(RegistryTest, AReleaseOfSchemaVersionTwoIsReadBackUnmarkedAfterTheUpgrade) {
  // A release as a rung that knew migrations 1 and 2 stored it: no gate_failed column.
  Release r = release_of(model("tiny.onnx"));
  {
    auto old = GetParam() == Db::kSqlite ? registry::open_sqlite(url_.substr(7)) : registry::open_postgresql(url_);
    ASSERT_TRUE(old) << old.error().message;
    registry::Database& db = **old;
    ASSERT_TRUE(db.execute_script("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"));
    const auto all = registry::migrations_for(db.backend());
    for (int v : {0, 1}) {
      ASSERT_TRUE(db.execute_script(all.at(static_cast<std::size_t>(v)).sql));
      ASSERT_TRUE(db.query("INSERT INTO schema_migrations VALUES (?, ?, 'then')", {std::int64_t{all[static_cast<std::size_t>(v)].version},
                                                                                   std::string(all[static_cast<std::size_t>(v)].name)}));
    }
    ASSERT_TRUE(db.query("INSERT INTO releases (release_key, model, version, device_class, rung, artifact_path, artifact_sha256, artifact_size, "
                         "retained, recipe, runtime_version, device, providers, precision_kind, registered_at) "
                         "VALUES (?, 'tiny', '1.0', 'x86_64 CPU', 'cpu', ?, ?, 1, 1, ?, '1.30.0', ?, '{}', 'not inspected', 'then')",
                         {r.release_key(), r.artifact.path.string(), r.artifact.sha256, r.recipe_json, std::string(kDevice)}));
  }
  auto reg = open();
  auto found = reg.find("tiny@1.0");
  ASSERT_TRUE(found) << found.error().message;
  ASSERT_EQ(found->size(), 1u);
  EXPECT_FALSE(found->front().gate_failed);
  EXPECT_TRUE(nlohmann::json::parse(found->front().to_json())["gate_failed"].is_null());
}

// A `rung quantise` report as a recipe: `decision`, `failed` and one gate.
std::string quantise_report(const std::string& decision, bool gate_passed, const std::string& failed = "") {
  nlohmann::json j = {{"schema", "rung-quantise-report"},
                      {"schema_version", 1},
                      {"decision", decision},
                      {"failed", failed.empty() ? nlohmann::json::array() : nlohmann::json::array({failed})},
                      {"recipe", {{"form", "int8"}, {"calibrator", {{"method", "minmax"}}}}},
                      {"gates", {{{"decoder", "classification"}, {"title", "classification · y"}, {"passed", gate_passed}}}}};
  return j.dump();
}

TEST_P(RegistryTest, AReportWhoseGateFailedIsTakenOnlyMarkedAndTheMarkIsStored) {
  Release forced = release_of(model("forced.onnx", 16));
  forced.recipe_json = quantise_report("forced", false, "classification · y");
  {
    auto reg = open();
    auto unmarked = reg.add(forced, {}, {});
    ASSERT_FALSE(unmarked);
    EXPECT_EQ(unmarked.error().code, ErrorCode::kInvalidArgument);
    EXPECT_THAT(unmarked.error().message, HasSubstr("gate failed: classification · y (decision: forced)"));
    EXPECT_TRUE(reg.list()->empty());
    // Marked, with anything: the mark holds what the recipe says.
    forced.gate_failed = RecipeGates{"whatever", {"something else"}};
    auto marked = reg.add(forced, {}, {});
    ASSERT_TRUE(marked) << marked.error().message;
    ASSERT_EQ(marked->kind, AddOutcome::Kind::kAdded) << marked->reason;
    ASSERT_TRUE(marked->release.gate_failed);
    EXPECT_EQ(marked->release.gate_failed->decision, "forced");
    EXPECT_THAT(marked->release.gate_failed->failed, ::testing::ElementsAre("classification · y"));
  }
  // Another process, later: the mark was stored with the release, and listing reads it too.
  auto reg = open();
  auto found = reg.find("tiny@1.0");
  ASSERT_TRUE(found) << found.error().message;
  ASSERT_EQ(found->size(), 1u);
  ASSERT_TRUE(found->front().gate_failed);
  EXPECT_EQ(found->front().gate_failed->decision, "forced");
  EXPECT_THAT(found->front().gate_failed->failed, ::testing::ElementsAre("classification · y"));
  auto j = nlohmann::json::parse(found->front().to_json());
  EXPECT_EQ(j["gate_failed"]["decision"], "forced");
  EXPECT_EQ(j["gate_failed"]["failed"], nlohmann::json::array({"classification · y"}));
  EXPECT_EQ(found->front().release_key(), forced.release_key());  // the mark is not part of the key
  ASSERT_EQ(reg.list()->size(), 1u);
  ASSERT_TRUE(reg.list()->front().gate_failed);
  // A passing report of another form, unmarked: stored unmarked.
  Release written = release_of(model("written.onnx", 32), "2.0");
  written.recipe_json = quantise_report("written", true);
  auto added = reg.add(written, {}, {});
  ASSERT_TRUE(added) << added.error().message;
  EXPECT_FALSE(added->release.gate_failed);
  EXPECT_TRUE(nlohmann::json::parse(added->release.to_json())["gate_failed"].is_null());
  EXPECT_FALSE(reg.find("tiny@2.0")->front().gate_failed);
}

TEST_P(RegistryTest, TheMarkIsAnErrorWhereNoGateFailed) {
  auto reg = open();
  Release r = release_of(model("tiny.onnx"));
  r.gate_failed = RecipeGates{"forced", {"classification · y"}};
  r.recipe_json = quantise_report("written", true);
  auto passed = reg.add(r, {}, {});
  ASSERT_FALSE(passed);
  EXPECT_THAT(passed.error().message, HasSubstr("its recipe's gates all passed (decision: written)"));
  r.recipe_json = R"({"command": "rung quantise", "decision": "forced", "gates": [{"passed": false}]})";  // not a report: no gates
  auto other = reg.add(r, {}, {});
  ASSERT_FALSE(other);
  EXPECT_THAT(other.error().message, HasSubstr("not a rung quantise report"));
  // Unmarked, that recipe is taken as it is.
  r.gate_failed.reset();
  auto taken = reg.add(r, {}, {});
  ASSERT_TRUE(taken) << taken.error().message;
  EXPECT_EQ(taken->kind, AddOutcome::Kind::kAdded);
  EXPECT_FALSE(taken->release.gate_failed);
}

TEST_P(RegistryTest, AnIncompleteReleaseIsAnErrorNotARow) {
  auto reg = open();
  Release r = release_of(model("tiny.onnx"));
  r.version.clear();
  auto out = reg.add(r, {}, {});
  ASSERT_FALSE(out);
  EXPECT_THAT(out.error().message, HasSubstr("a version"));
  r = release_of(model("tiny.onnx"));
  r.recipe_json = "[1, 2]";
  EXPECT_FALSE(reg.add(r, {}, {}));
  r = release_of(model("tiny.onnx"));
  r.artifact.retained = false;
  EXPECT_FALSE(reg.add(r, {}, {}));  // not retained needs its reason
  auto garbage = reg.add(release_of(model("tiny.onnx")), {{dir_ / "x.json", "{\"schema\": 3}"}}, {});
  ASSERT_FALSE(garbage);
  EXPECT_THAT(garbage.error().message, HasSubstr(": not a rung bench record: "));
  EXPECT_TRUE(reg.list()->empty());
}

// A valid JSON text padded with spaces to exactly `bytes` (the parser skips them; what is stored is compact).
std::string padded_to(std::string text, std::size_t bytes) {
  EXPECT_LE(text.size(), bytes);
  text.resize(bytes, ' ');
  return text;
}

TEST_P(RegistryTest, EachDocumentKindIsTakenUpToItsLimitAndRefusedPastIt) {
  auto reg = open();
  Release r = release_of(model("tiny.onnx"));
  // Bench records and parity reports, each at its limit and one byte past it.
  auto bench = bench_record(r.artifact.path, "1.30.0", kDevice);
  auto parity = parity_report(r.artifact.path, "1.30.0", kDevice);
  auto at_bench = reg.add(r, {{bench.path, padded_to(bench.text, kRegistryLimits.bench_record_bytes)}}, {});
  ASSERT_TRUE(at_bench) << at_bench.error().message;
  EXPECT_EQ(at_bench->kind, AddOutcome::Kind::kAdded) << at_bench->reason;
  EXPECT_LT(at_bench->release.evidence.at(0).document.size(), bench.text.size());  // stored compact
  auto past_bench = reg.add(r, {{bench.path, padded_to(bench.text, kRegistryLimits.bench_record_bytes + 1)}}, {});
  ASSERT_FALSE(past_bench);
  EXPECT_THAT(past_bench.error().message, HasSubstr(bench.path.string()));
  EXPECT_THAT(past_bench.error().message, HasSubstr("at most 16.0 MiB"));
  auto at_parity = reg.add(r, {}, {{parity.path, padded_to(parity.text, kRegistryLimits.parity_report_bytes)}});
  ASSERT_TRUE(at_parity) << at_parity.error().message;
  EXPECT_EQ(at_parity->evidence_added, 1);
  auto past_parity = reg.add(r, {}, {{parity.path, padded_to(parity.text, kRegistryLimits.parity_report_bytes + 1)}});
  ASSERT_FALSE(past_parity);
  EXPECT_THAT(past_parity.error().message, HasSubstr(parity.path.string()));
  EXPECT_THAT(past_parity.error().message, HasSubstr("at most 8.0 MiB"));
  auto past_import = reg.import_records({{bench.path, padded_to(bench.text, kRegistryLimits.bench_record_bytes + 1)}});
  ASSERT_FALSE(past_import);
  EXPECT_THAT(past_import.error().message, HasSubstr("at most 16.0 MiB"));
  // A recipe at its limit, and one byte past it.
  Release big = release_of(model("big.onnx", 24));
  big.recipe_json = padded_to(R"({"command": "rung quantise big.onnx"})", kRegistryLimits.recipe_bytes);
  auto at_recipe = reg.add(big, {}, {});
  ASSERT_TRUE(at_recipe) << at_recipe.error().message;
  EXPECT_EQ(at_recipe->kind, AddOutcome::Kind::kAdded);
  big.version = "2";
  big.recipe_json += ' ';
  auto past_recipe = reg.add(big, {}, {});
  ASSERT_FALSE(past_recipe);
  EXPECT_THAT(past_recipe.error().message, HasSubstr("the registry takes a recipe of at most 4.0 MiB"));
  EXPECT_EQ(reg.list()->size(), 2u);
}

// A record's rows, one measurement of `count` rows of the smallest kind the schema allows.
std::string record_with_rows(std::size_t count) {
  std::string rows;
  rows.reserve(count * 120);
  for (std::size_t i = 0; i < count; ++i) {
    rows += i ? "," : "";
    rows += R"({"rung":"cpu","model_id":"m","ok":false,"latency_ms":null,"output_match":{"verdict":"not compared"},"failure_class":"crash"})";
  }
  return R"({"schema":"rung-bench-record","schema_version":2,"model":{"name":"m","sha256":")" + std::string(64, 'a') +
         R"("},"measurements":[{"device":"d","env":{"hostname":"h","runtime":{"version":"1.30.0"}},"provenance":{"date":"2026-11-01"},"rows":[)" + rows +
         "]}]}";
}

TEST_P(RegistryTest, ARecordWithMoreRowsThanTheLimitIsRefusedBeforeItsRowsAreBuilt) {
  const std::string at = record_with_rows(kRegistryLimits.measurement_rows);
  ASSERT_LT(at.size(), kRegistryLimits.bench_record_bytes);
  auto rows = registry::measurement_rows(at, "at.json");
  ASSERT_TRUE(rows) << rows.error().message;
  EXPECT_EQ(rows->size(), kRegistryLimits.measurement_rows);
  auto past = registry::measurement_rows(record_with_rows(kRegistryLimits.measurement_rows + 1), "past.json");
  ASSERT_FALSE(past);
  EXPECT_THAT(past.error().message, HasSubstr("past.json: measurement 1: more rows than the registry takes at once (100000 in all)"));
  auto reg = open();
  auto imported = reg.import_records({{dir_ / "past.json", record_with_rows(kRegistryLimits.measurement_rows + 1)}});
  ASSERT_FALSE(imported);
  EXPECT_THAT(imported.error().message, HasSubstr("more rows than the registry takes"));
  EXPECT_TRUE(reg.fleet()->empty());
}

TEST_P(RegistryTest, NamesAndTextsAreStoredOnlyWithinTheirLengthAndWithoutControlCharacters) {
  auto reg = open();
  const fs::path file = model("tiny.onnx");
  const std::size_t name = kRegistryLimits.name_bytes, text = kRegistryLimits.text_bytes;
  // At the limit: stored.
  Release longest = release_of(file, std::string(name, 'v'));
  longest.model = std::string(name, 'm');
  longest.artifact.retained = false;
  longest.artifact.not_retained_reason = std::string(text, 'r');
  auto stored = reg.add(longest, {}, {});
  ASSERT_TRUE(stored) << stored.error().message;
  EXPECT_EQ(stored->kind, AddOutcome::Kind::kAdded);
  // One past, or holding a control character, a DEL, a C1 control or bytes that are not UTF-8: refused, naming the field.
  const std::vector<std::tuple<std::string, std::function<void(Release&)>, std::string>> cases{
      {"a long model name", [&](Release& r) { r.model = std::string(name + 1, 'm'); }, "the model name (NAME=PATH) is 129 bytes; the registry stores at most 128"},
      {"a 120000-byte version", [](Release& r) { r.version = std::string(120000, 'v'); }, "the version (--version) is 120000 bytes"},
      {"a long reason", [&](Release& r) { r.artifact.retained = false; r.artifact.not_retained_reason = std::string(text + 1, 'r'); },
       "the reason it is not retained (--not-retained) is 1025 bytes"},
      {"an escape sequence", [](Release& r) { r.model = "tiny\x1b]0;owned\x07"; }, "the model name (NAME=PATH) holds a control character (\\x1b at byte 4)"},
      {"a newline", [](Release& r) { r.version = "1.0\nrelease 9: fake 1.0"; }, "the version (--version) holds a control character (\\n at byte 3)"},
      {"a DEL", [](Release& r) { r.target.rung = "cpu\x7f"; }, "the rung (--rung) holds a control character (\\x7f at byte 3)"},
      {"a C1 control", [](Release& r) { r.environment.device = "linux\xc2\x9b" "31m"; }, "the device (--device) holds a control character (\\u009b at byte 5)"},
      {"not UTF-8", [](Release& r) { r.target.device_class = "x86_64 \xff CPU"; }, "the device class (--device-class) is not UTF-8 (byte \\xff at 7)"},
      {"a bidi override", [](Release& r) { r.model = "tiny\xe2\x80\xae"; }, "holds a control character (\\u202e at byte 4)"}};
  for (const auto& [what, damage, words] : cases) {
    SCOPED_TRACE(what);
    Release r = release_of(file, "2.0");
    damage(r);
    auto out = reg.add(r, {}, {});
    ASSERT_FALSE(out);
    EXPECT_EQ(out.error().code, ErrorCode::kInvalidArgument);
    EXPECT_THAT(out.error().message, HasSubstr(words));
    EXPECT_THAT(out.error().message, Not(HasSubstr("\x1b")));
  }
  // A bench record's text fields likewise, before any row is made from them.
  auto record = nlohmann::json::parse(bench_record(file, "1.30.0", kDevice).text);
  record["measurements"][0]["device"] = "linux\x1b[2J";
  auto bad = reg.import_records({{dir_ / "esc.json", record.dump()}});
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message, HasSubstr("esc.json: measurement 1: 'device' holds a control character (\\x1b at byte 5)"));
  record["measurements"][0]["device"] = std::string(kRegistryLimits.text_bytes + 1, 'd');
  auto huge = reg.import_records({{dir_ / "huge.json", record.dump()}});
  ASSERT_FALSE(huge);
  EXPECT_THAT(huge.error().message, HasSubstr("'device' is 1025 bytes"));
  EXPECT_EQ(reg.list()->size(), 1u);
  EXPECT_TRUE(reg.fleet()->empty());
}

TEST_P(RegistryTest, AListingDoesNotLoadRecipesButKnowsEachKey) {
  auto reg = open();
  Release r = release_of(model("tiny.onnx"));
  r.recipe_json = R"({"command": "rung quantise", "calibration": ")" + std::string(3u << 20, 'c') + R"("})";
  ASSERT_EQ(reg.add(r, {}, {})->kind, AddOutcome::Kind::kAdded);
  auto listed = reg.list();
  ASSERT_TRUE(listed) << listed.error().message;
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_TRUE(listed->front().recipe_json.empty());
  EXPECT_EQ(listed->front().release_key(), r.release_key());
  auto full = reg.find("tiny@1.0");
  ASSERT_TRUE(full);
  EXPECT_GT(full->front().recipe_json.size(), 3u << 20);
  EXPECT_EQ(full->front().release_key(), r.release_key());
}

TEST_P(RegistryTest, AReadOnlyOpenOfADatabaseWithoutARegistryCreatesNothing) {
  if (GetParam() == Db::kSqlite) {
    const fs::path missing = dir_ / "typo" / "x.sqlite";
    auto r = Registry::open("sqlite:" + missing.string(), Registry::OpenMode::kExistingOnly);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, ErrorCode::kNotFound);
    EXPECT_THAT(r.error().message, HasSubstr(missing.string() + ": does not exist"));
    EXPECT_FALSE(fs::exists(dir_ / "typo"));
    auto plain = Registry::open(missing.string(), Registry::OpenMode::kExistingOnly);
    ASSERT_FALSE(plain);
    EXPECT_FALSE(fs::exists(dir_ / "typo"));
    // A file that is there but empty holds no registry, and is not made one.
    std::ofstream(dir_ / "empty.sqlite").close();
    auto empty = Registry::open((dir_ / "empty.sqlite").string(), Registry::OpenMode::kExistingOnly);
    ASSERT_FALSE(empty);
    EXPECT_THAT(empty.error().message, HasSubstr("holds no registry"));
  } else {
    // url_ is a fresh database with nothing in it; another name is no database at all.
    auto empty = Registry::open(url_, Registry::OpenMode::kExistingOnly);
    ASSERT_FALSE(empty);
    EXPECT_EQ(empty.error().code, ErrorCode::kNotFound);
    EXPECT_THAT(empty.error().message, HasSubstr("holds no registry"));
    auto db = registry::open_postgresql(url_);
    ASSERT_TRUE(db) << db.error().message;
    auto tables = (*db)->query("SELECT count(*) FROM pg_catalog.pg_tables WHERE schemaname = 'public'");
    ASSERT_TRUE(tables);
    EXPECT_EQ(registry::as_int((*tables)[0][0]), 0);
    std::string other = url_;
    other.replace(other.find("postgresql://rung@/") + 19, other.find('?') - other.find("postgresql://rung@/") - 19, "no_such_registry");
    auto missing = Registry::open(other, Registry::OpenMode::kExistingOnly);
    ASSERT_FALSE(missing);
    EXPECT_THAT(missing.error().message, HasSubstr("\"no_such_registry\" does not exist"));
  }
  // Opening to write still makes it, and then a read-only open finds it.
  ASSERT_TRUE(Registry::open(url_));
  auto again = Registry::open(url_, Registry::OpenMode::kExistingOnly);
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_TRUE(again->list()->empty());
}

INSTANTIATE_TEST_SUITE_P(Databases, RegistryTest, ::testing::Values(Db::kSqlite, Db::kPostgresql),
                         [](const auto& param_info) { return test::db_name(param_info.param); });

TEST(RegistryUrl, AFilePathOrSqliteUrlIsSqliteAndAnythingElseIsRefused) {
  const fs::path dir = test::make_temp_dir("rung-registry-url");
  auto plain = Registry::open((dir / "sub" / "r.sqlite").string());
  ASSERT_TRUE(plain) << plain.error().message;
  EXPECT_THAT(plain->describe(), HasSubstr("SQLite"));
  EXPECT_TRUE(fs::exists(dir / "sub" / "r.sqlite"));
  auto mysql = Registry::open("mysql://db/rung");
  ASSERT_FALSE(mysql);
  EXPECT_THAT(mysql.error().message, HasSubstr("postgresql://"));
  std::ofstream(dir / "notes.txt") << "these are notes, not a database, and there are enough of them to fill a page";
  auto text = Registry::open("sqlite:" + (dir / "notes.txt").string());
  ASSERT_FALSE(text);
  EXPECT_THAT(text.error().message, HasSubstr("notes.txt"));
  auto down = Registry::open("postgresql:///rung?host=" + (dir / "no-server").string());
  ASSERT_FALSE(down);
  EXPECT_THAT(down.error().message, HasSubstr("cannot connect"));
  fs::remove_all(dir);
}

TEST(RegistryUrl, TheDefaultLivesUnderTheUsersDataDirectory) {
  test::ScopedEnv no_override("RUNG_REGISTRY", nullptr);
  {
    test::ScopedEnv xdg("XDG_DATA_HOME", "/data/ana");
    EXPECT_EQ(Registry::default_url().value(), "sqlite:/data/ana/rung/registry.sqlite");
  }
  {
    // HOME counts when it is a directory of the user's (else the private fallback: os-safety-test).
    const fs::path home_dir = test::make_temp_dir("rung-home");
    test::ScopedEnv xdg("XDG_DATA_HOME", nullptr);
    test::ScopedEnv home("HOME", home_dir.c_str());
    EXPECT_EQ(Registry::default_url().value(), "sqlite:" + (home_dir / ".local/share/rung/registry.sqlite").string());
    fs::remove_all(home_dir);
  }
  test::ScopedEnv set("RUNG_REGISTRY", "postgresql://fleet/rung");
  EXPECT_EQ(Registry::default_url().value(), "postgresql://fleet/rung");
}

TEST(RegistrySecrets, EveryFormOfPasswordIsMasked) {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"postgresql://ana:s3cret@db.example/rung", "postgresql://ana:***@db.example/rung"},
      {"postgresql://ana:s3cret@h1:5432,h2/rung?sslmode=require", "postgresql://ana:***@h1:5432,h2/rung?sslmode=require"},
      {"postgresql://ana@db/rung?password=s3cret", "postgresql://ana@db/rung?password=***"},
      {"postgresql://ana@db/rung?sslmode=require&password=s3cret&application_name=x",
       "postgresql://ana@db/rung?sslmode=require&password=***&application_name=x"},
      {"postgresql://ana@db/rung?PassWord=s3cret", "postgresql://ana@db/rung?PassWord=***"},
      {"postgresql://ana@db/rung?pass%77ord=s3cret", "postgresql://ana@db/rung?pass%77ord=***"},
      {"postgresql://ana@db/rung?password=s3%63ret", "postgresql://ana@db/rung?password=***"},
      {"postgresql://ana@db/rung?sslpassword=s3cret", "postgresql://ana@db/rung?sslpassword=***"},
      {"host=db user=ana password=s3cret dbname=rung", "host=db user=ana password=*** dbname=rung"},
      {"host=db password = 's3 cr\\'et' dbname=rung", "host=db password = *** dbname=rung"},
      {"cannot connect to the registry mysql://ana:s3cret@db/x: no", "cannot connect to the registry mysql://ana:***@db/x: no"},
      {"postgresql:///rung?host=/tmp/x", "postgresql:///rung?host=/tmp/x"},
      // A password carried inside another parameter's value: the whole value goes.
      {"postgresql://db/rung?options=-c%20password%3Ds3cret&sslmode=require", "postgresql://db/rung?options=***&sslmode=require"},
      {"postgresql://db/rung?application_name=password=s3cret", "postgresql://db/rung?application_name=***"},
      {"postgresql://db/rung?application_name=x%20PASSWORD%3ds3cret", "postgresql://db/rung?application_name=***"},
      {"host=db options='-c password=s3cret' dbname=rung", "host=db options=*** dbname=rung"},
      {"postgresql://db/rung?application_name=passwd", "postgresql://db/rung?application_name=passwd"}};
  for (const auto& [text, masked] : cases) {
    EXPECT_EQ(registry::mask_secrets(text), masked) << text;
  }
  // A client's own words quoting the URL's secret, raw or decoded, are masked too.
  EXPECT_EQ(registry::mask_secrets(R"(invalid percent-encoded token: "s3%zzret")", "postgresql://db/r?password=s3%zzret"),
            R"(invalid percent-encoded token: "***")");
  EXPECT_EQ(registry::mask_secrets("it was s3cret", "postgresql://db/r?password=s3%63ret"), "it was ***");
  // A short password is masked where it stands alone, never inside other words: masking every "p" would
  // print "***ort 54999" and "ex***ired", telling the reader what the password is made of.
  const std::string url_p = "postgresql://ana:p@localhost:54999/rung";
  EXPECT_EQ(registry::mask_secrets("connection to server on port 54999 failed: password expired", url_p),
            "connection to server on port 54999 failed: password expired");
  EXPECT_EQ(registry::mask_secrets(R"(bad password "p" for ana; p)", url_p), R"(bad password "***" for ana; ***)");
  EXPECT_EQ(registry::mask_secrets("pp p-p", url_p), "pp ***-***");
  // A password made of punctuation has no word around it to respect: every copy goes.
  EXPECT_EQ(registry::mask_secrets("token '%%' in %%x", "postgresql://ana:%25%25@db/r"), "token '***' in ***x");
}

TEST(RegistryPostgres, TheStatementTimeoutDefaultsToThirtySecondsAndCanBeSet) {
  std::string skip;
  const std::string url = test::fresh_postgres_database(skip);
  if (url.empty()) GTEST_SKIP() << "PostgreSQL cannot start here: " << skip;
  const auto setting = [](const std::string& u) -> std::string {
    auto db = registry::open_database(u);
    if (!db) return "error: " + db.error().message;
    auto r = (*db)->query("SELECT current_setting('statement_timeout')");
    return r ? registry::as_text((*r)[0][0]) : "error: " + r.error().message;
  };
  test::ScopedEnv none("RUNG_REGISTRY_STATEMENT_TIMEOUT", nullptr);
  EXPECT_EQ(setting(url), "30s");
  EXPECT_EQ(setting(url + "&options=-c%20statement_timeout%3D7s"), "7s");  // the URL's own setting stands
  {
    test::ScopedEnv set("RUNG_REGISTRY_STATEMENT_TIMEOUT", "1");
    EXPECT_EQ(setting(url + "&options=-c%20statement_timeout%3D7s"), "1s");
    auto db = registry::open_database(url);
    ASSERT_TRUE(db) << db.error().message;
    auto slow = (*db)->query("SELECT pg_sleep(20)");
    ASSERT_FALSE(slow);
    EXPECT_THAT(slow.error().message, HasSubstr("statement timeout"));
  }
  for (const char* bad : {"abc", "-1", "1.5", "86401"}) {
    test::ScopedEnv set("RUNG_REGISTRY_STATEMENT_TIMEOUT", bad);
    auto db = registry::open_database(url);
    ASSERT_FALSE(db) << bad;
    EXPECT_EQ(db.error().code, ErrorCode::kInvalidArgument);
    EXPECT_THAT(db.error().message, HasSubstr(std::string("RUNG_REGISTRY_STATEMENT_TIMEOUT=") + bad));
  }
}

// A release's key is stored and compared across versions of rung, so the text
// it hashes is pinned here byte for byte: sorted keys, no spaces, no cache as
// null (never ""), a quantise report's recipe unwrapped, a recipe that is not
// JSON kept as its string, and a listed key taken as it is.
TEST(ReleaseKeyTest, TheKeyIsTheHashOfOnePinnedTextWhateverIsEmptyOrAbsent) {
  Release r;
  r.model = "tiny";
  r.version = "1.0";
  r.target = {"x86_64 CPU", "cpu"};
  r.environment.runtime_version = "1.30.0";
  r.environment.device = "dev";
  r.environment.providers = {{"CPUExecutionProvider", "1.30.0"}};
  r.recipe_json = R"({"b":2,"a":1})";
  const std::string env = R"("environment":{"device":"dev","providers":{"CPUExecutionProvider":"1.30.0"},"runtime":{"name":"onnxruntime","version":"1.30.0"}})";
  const std::string tail = R"("target":{"device_class":"x86_64 CPU","rung":"cpu"},"version":"1.0"})";
  auto text = [&](const std::string& cache, const std::string& recipe) {
    return R"({"cache":)" + cache + "," + env + R"(,"model":"tiny","recipe":)" + recipe + "," + tail;
  };
  EXPECT_EQ(r.release_key(), sha256_hex(text("null", R"({"a":1,"b":2})")));
  r.cache_sha256 = "c0ffee";
  EXPECT_EQ(r.release_key(), sha256_hex(text(R"("c0ffee")", R"({"a":1,"b":2})")));
  r.cache_sha256.clear();
  r.recipe_json = R"({"schema":"rung-quantise-report","recipe":{"form":"i8"}})";
  EXPECT_EQ(r.release_key(), sha256_hex(text("null", R"({"form":"i8"})")));
  r.recipe_json = "not json";
  EXPECT_EQ(r.release_key(), sha256_hex(text("null", R"("not json")")));
  r.recipe_json = "";
  EXPECT_EQ(r.release_key(), sha256_hex(text("null", R"("")")));
  r.environment.providers.clear();
  EXPECT_NE(r.release_key(), sha256_hex(text("null", R"("")")));  // no providers is another environment
  r.listed_key = "listed";
  EXPECT_EQ(r.release_key(), "listed");
}

TEST(RecipeGatesTest, OnlyAQuantiseReportHasGatesAndOnlyWrittenWithEveryGatePassedPasses) {
  EXPECT_FALSE(recipe_gates(R"({"command": "trtexec", "settings": {}})"));
  EXPECT_FALSE(recipe_gates(R"({"schema": "rung-bench-record", "decision": "forced", "gates": [{"passed": false}]})"));
  EXPECT_FALSE(recipe_gates("not json"));
  EXPECT_FALSE(recipe_gates(R"(["rung-quantise-report"])"));
  auto written = recipe_gates(quantise_report("written", true));
  ASSERT_TRUE(written);
  EXPECT_TRUE(written->passed());
  EXPECT_TRUE(written->failed.empty());
  // One step from it, each way: not passed.
  auto gate = recipe_gates(quantise_report("written", false));
  ASSERT_TRUE(gate);
  EXPECT_FALSE(gate->passed());
  EXPECT_THAT(gate->failed, ::testing::ElementsAre("classification · y"));
  auto named = recipe_gates(quantise_report("written", true, "the prepared graph"));
  EXPECT_FALSE(named->passed());
  EXPECT_THAT(named->failed, ::testing::ElementsAre("the prepared graph"));
  for (const char* decision : {"forced", "refused", ""}) {
    auto d = recipe_gates(quantise_report(decision, true));
    ASSERT_TRUE(d);
    EXPECT_FALSE(d->passed()) << decision;
    EXPECT_EQ(d->decision, decision);
  }
  // A failing gate named in "failed" and by its gate is listed once.
  auto forced = recipe_gates(quantise_report("forced", false, "classification · y"));
  EXPECT_THAT(forced->failed, ::testing::ElementsAre("classification · y"));
  // Damaged reports fail: a gate without a verdict (named by its place when it has no title), no gates at all.
  auto damaged = recipe_gates(R"({"schema": "rung-quantise-report", "decision": "written", "failed": [], "gates": [{"passed": true}, {"passed": "yes"}]})");
  EXPECT_FALSE(damaged->passed());
  EXPECT_THAT(damaged->failed, ::testing::ElementsAre("gate 2"));
  auto no_gates = recipe_gates(R"({"schema": "rung-quantise-report", "decision": "written", "failed": []})");
  EXPECT_FALSE(no_gates->passed());
}

TEST(RegistryDocuments, EachKindIsReadUpToItsLimitFromARegularFileOnly) {
  const fs::path dir = test::make_temp_dir("rung-registry-documents");
  const fs::path fifo = dir / "fifo.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (RegistryDocument kind : {RegistryDocument::kRecipe, RegistryDocument::kBenchRecord, RegistryDocument::kParityReport}) {
    auto f = read_registry_document(fifo, kind);
    ASSERT_FALSE(f);
    EXPECT_THAT(f.error().message, HasSubstr(fifo.string() + ": is a FIFO"));
    auto zero = read_registry_document("/dev/zero", kind);
    ASSERT_FALSE(zero);
    EXPECT_THAT(zero.error().message, HasSubstr("/dev/zero: is a character device"));
  }
  for (const auto& [kind, limit, words] : {std::tuple{RegistryDocument::kRecipe, kRegistryLimits.recipe_bytes, "recipe"},
                                           {RegistryDocument::kBenchRecord, kRegistryLimits.bench_record_bytes, "bench record"},
                                           {RegistryDocument::kParityReport, kRegistryLimits.parity_report_bytes, "parity report"}}) {
    const fs::path file = dir / "doc.json";
    { std::ofstream(file) << "{}"; }
    fs::resize_file(file, limit);
    auto at = read_registry_document(file, kind);
    ASSERT_TRUE(at) << at.error().message;
    EXPECT_EQ(at->text.size(), limit);
    fs::resize_file(file, limit + 1);
    auto past = read_registry_document(file, kind);
    ASSERT_FALSE(past);
    EXPECT_EQ(past.error().code, ErrorCode::kInvalidArgument);
    EXPECT_THAT(past.error().message, HasSubstr(std::string(words) + " " + file.string()));
    EXPECT_THAT(past.error().message, HasSubstr("at most " + std::to_string(limit >> 20) + ".0 MiB"));
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace rung
