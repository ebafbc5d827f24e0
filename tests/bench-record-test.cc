// The bench record against its JSON Schema (schemas/bench-record.schema.json),
// checked by Debian's python3-jsonschema; appending a second device's run.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "graph/stable_hash.h"
#include "model_builder.h"
#include "os/file_hash.h"
#include "rung/bench.h"
#include "rung/bench_record.h"
#include "test_support.h"

namespace rung {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;

// Empty when `record` is valid; else the validator's messages.
std::string schema_errors(const fs::path& record) { return test::schema_errors(test::schema_path("bench-record.schema.json"), record); }

BenchReport hand_made_report() {
  BenchReport rep;
  rep.date = "2026-11-29T10:00:00Z";
  rep.hostname = "tablet";
  rep.os = "Linux 6.6 aarch64";
  rep.cpu = "Snapdragon";
  rep.logical_cpus = 8;
  rep.hardware_identity = "android; soc Qualcomm SM8635";
  rep.runtime_version = "1.29.0";
  rep.runtime_library = "/opt/ort/libonnxruntime.so";
  rep.api_version = 29;
  rep.inputs_mode = "random";
  BenchModelReport m;
  m.name = "det";
  m.path = "/models/det.onnx";
  m.sha256 = std::string(64, 'a');
  m.stable_sha256 = std::string(64, 'b');
  m.size_bytes = 1234;
  m.form = "f32";
  m.model_id = "det";
  m.opset = 17;
  m.nodes = 10;
  BenchRow cpu;
  cpu.rung = "cpu";
  cpu.display = "CPU";
  cpu.provider = "CPUExecutionProvider";
  cpu.provider_version = "1.29.0";
  cpu.form = "f32";
  cpu.model_id = "det";
  cpu.ok = true;
  cpu.build_cold_ms = 12;
  cpu.first_run_ms = 20;
  cpu.latency = {3, 9, 10, 11, 11.5, 12, 10.3, 1.2, 0.12};
  cpu.round_p50_ms = {10};
  cpu.throughput_per_s = 97;
  cpu.peak_rss_mb = 80;
  cpu.ratio_to_floor = 1;
  cpu.match = OutputMatch::kReference;
  BenchRow failed;
  failed.rung = "qnn-htp";
  failed.display = "QNN HTP";
  failed.provider = "QNNExecutionProvider";
  failed.form = "f32";
  failed.model_id = "det";
  failed.failure_class = "build_failed";
  failed.failure_reason = "QNN refuses float32 tensors (3110)";
  m.rows = {cpu, failed};
  rep.models.push_back(m);
  return rep;
}

class BenchRecordTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::make_temp_dir("rung-bench-record"); }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(BenchRecordTest, HandMadeRecordWithAFailedRowValidates) {
  auto rep = hand_made_report();
  ASSERT_TRUE(write_bench_records(rep, {dir_ / "det.json"}, "rung bench det.onnx"));
  EXPECT_EQ(schema_errors(dir_ / "det.json"), "");
  auto j = nlohmann::json::parse(test::read_file(dir_ / "det.json"));
  EXPECT_EQ(j["schema_version"], kBenchRecordSchemaVersion);
  const auto& row = j["measurements"][0]["rows"][1];
  EXPECT_EQ(row["ok"], false);
  EXPECT_EQ(row["failure_class"], "build_failed");
  EXPECT_EQ(row["output_match"]["verdict"], "not compared");
  EXPECT_TRUE(row["latency_ms"].is_null());
  EXPECT_EQ(j["measurements"][0]["provenance"]["kind"], "measured");
  EXPECT_EQ(j["measurements"][0]["provenance"]["command"], "rung bench det.onnx");
}

TEST_F(BenchRecordTest, TheSchemaRejectsWhatIsWrong) {
  auto rep = hand_made_report();
  ASSERT_TRUE(write_bench_records(rep, {dir_ / "det.json"}, "rung bench det.onnx"));
  auto j = nlohmann::json::parse(test::read_file(dir_ / "det.json"));
  auto broken = j;
  broken["measurements"][0]["rows"][1]["failure_class"] = nullptr;  // a failed row must say how it failed
  std::ofstream(dir_ / "broken.json") << broken.dump();
  EXPECT_THAT(schema_errors(dir_ / "broken.json"), HasSubstr("failure_class"));
  broken = j;
  broken["measurements"][0]["rows"][0]["latency_ms"].erase("p50");
  std::ofstream(dir_ / "broken.json", std::ios::trunc) << broken.dump();
  EXPECT_THAT(schema_errors(dir_ / "broken.json"), HasSubstr("'p50' is a required property"));
  broken = j;
  broken["model"]["sha256"] = "not-a-hash";
  std::ofstream(dir_ / "broken.json", std::ios::trunc) << broken.dump();
  EXPECT_THAT(schema_errors(dir_ / "broken.json"), HasSubstr("sha256"));
}

TEST_F(BenchRecordTest, ARealRunValidatesAndASecondDeviceIsAppended) {
  test::ModelBuilder b;
  b.input("x", {1, 8}).node("Relu", {"x"}, {"r"}).node("Add", {"r", "x"}, {"y"}).output("y", {1, 8});
  b.save(dir_ / "tiny.onnx");
  BenchOptions o;
  o.models = {{"tiny", dir_ / "tiny.onnx", {}}};
  o.runs = 3;
  o.warmup = 0;
  o.rungs = {"cuda"};  // a real failure row beside the CPU's
  o.runtimes.explicit_dir = test::runtime_dir("1.30.0");
  o.runtimes.include_default_locations = false;
  o.runtimes.read_environment = false;
  o.hardware_root = test::fixtures_dir() / "hardware" / "cpu-vm";
  o.worker = test::worker_path();
  auto rep = run_bench(o);
  ASSERT_TRUE(rep) << rep.error().message;
  const fs::path file = dir_ / "tiny.json";
  ASSERT_TRUE(check_bench_record_target(file, dir_ / "tiny.onnx"));
  ASSERT_TRUE(write_bench_records(*rep, {file}, "rung bench tiny.onnx --rung cuda"));
  EXPECT_EQ(schema_errors(file), "");

  // Another device measures the same file later: its run is appended, the first kept.
  auto other = *rep;
  other.hardware_identity = "linux; gpu 10de:2684 NVIDIA; nvidia driver 550.54.14; cpu AMD Ryzen 9 7950X";
  other.hostname = "desktop";
  ASSERT_TRUE(check_bench_record_target(file, dir_ / "tiny.onnx"));
  ASSERT_TRUE(write_bench_records(other, {file}, "rung bench tiny.onnx"));
  EXPECT_EQ(schema_errors(file), "");
  auto j = nlohmann::json::parse(test::read_file(file));
  ASSERT_EQ(j["measurements"].size(), 2u);
  EXPECT_EQ(j["measurements"][0]["device"], rep->hardware_identity);
  EXPECT_EQ(j["measurements"][1]["device"], other.hardware_identity);
  EXPECT_EQ(j["measurements"][1]["env"]["hostname"], "desktop");
  EXPECT_EQ(j["measurements"][0]["rows"][1]["failure_class"], "provider_unavailable");
  // Both of the model's hashes: the file's, and the one doc strings do not move (the registry matches on either).
  EXPECT_EQ(j["model"]["sha256"], *sha256_of_file(dir_ / "tiny.onnx"));
  EXPECT_EQ(j["model"]["stable_sha256"], *stable_model_hash_of_file(dir_ / "tiny.onnx"));
}

TEST_F(BenchRecordTest, ARecordOfAnotherSchemaVersionIsNotAppendedTo) {
  auto rep = hand_made_report();
  const fs::path file = dir_ / "det.json";
  ASSERT_TRUE(write_bench_records(rep, {file}, "rung bench det.onnx"));
  auto j = nlohmann::json::parse(test::read_file(file));
  j["schema_version"] = 1;  // written before the stable hash existed
  j["model"].erase("stable_sha256");
  std::ofstream(file, std::ios::trunc) << j.dump();
  auto s = check_bench_record_target(file, dir_ / "det.onnx");
  ASSERT_FALSE(s);
  EXPECT_THAT(s.error().message, HasSubstr("schema version 1; this rung writes 2"));
}

// The Done-when of the issue on the sample models: `rung bench` prints the table
// and writes records that validate.
TEST_F(BenchRecordTest, SampleModelsThroughTheCliWriteValidRecords) {
  std::ofstream(dir_ / "cls.json") << R"({"dims": {"x:0": 1}})";
  std::ofstream(dir_ / "vad.json") << R"({"dims": {"input:1": 512, "state:1": 1}, "values": {"sr": [16000]}})";
  fs::create_directories(dir_ / "plugins");
  fs::copy_file(test::sim_ep_path(), dir_ / "plugins" / "librung_sim_ep.so");
  auto r = test::run_command("env -u RUNG_ORT_DIR -u RUNG_PLUGIN_DIR '" + test::cli_path().string() + "' bench --ort-dir " +
                             test::runtime_dir("1.30.0").string() + " --plugin-dir " + (dir_ / "plugins").string() + " --hardware-root " +
                             (test::fixtures_dir() / "hardware" / "cpu-vm").string() + " --rung rung_sim_ep --rung webgpu --runs 3 --warmup 1" +
                             " ppocr_cls=" + test::model_path("ppocr/ch_ppocr_mobile_v2.0_cls_infer.onnx").string() +
                             " silero_vad=" + test::model_path("silero-vad/silero_vad.onnx").string() +
                             " --input-spec ppocr_cls=" + (dir_ / "cls.json").string() +
                             " --input-spec silero_vad=" + (dir_ / "vad.json").string() + " --out-json " + (dir_ / "records").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("ppocr_cls (ch_ppocr_mobile_v2.0_cls_infer.onnx, f32"));
  EXPECT_THAT(r.out, HasSubstr("silero_vad (silero_vad.onnx, f32"));
  for (const char* name : {"ppocr_cls", "silero_vad"}) {
    const fs::path file = dir_ / "records" / (std::string(name) + ".json");
    EXPECT_EQ(schema_errors(file), "") << name;
    auto j = nlohmann::json::parse(test::read_file(file));
    const auto& rows = j["measurements"][0]["rows"];
    ASSERT_EQ(rows.size(), 3u) << name;
    EXPECT_EQ(rows[0]["rung"], "cpu");
    EXPECT_EQ(rows[1]["output_match"]["verdict"], "match") << name;  // the simulated accelerator computes the same
    EXPECT_EQ(rows[2]["failure_class"], "build_failed") << name;    // no WebGPU adapter here
  }
}

TEST_F(BenchRecordTest, AppendingIsRefusedForAnotherModelOrANonRecord) {
  auto rep = hand_made_report();
  const fs::path file = dir_ / "det.json";
  ASSERT_TRUE(write_bench_records(rep, {file}, "rung bench det.onnx"));
  const std::string before = test::read_file(file);
  auto other = rep;
  other.models[0].sha256 = std::string(64, 'b');
  auto s = write_bench_records(other, {file}, "rung bench det.onnx");
  ASSERT_FALSE(s);
  EXPECT_THAT(s.error().message, HasSubstr("another model file"));
  EXPECT_EQ(test::read_file(file), before);  // untouched

  std::ofstream(dir_ / "notes.json") << "{\"hello\": 1}";
  auto t = check_bench_record_target(dir_ / "notes.json", dir_ / "det.onnx");
  ASSERT_FALSE(t);
  EXPECT_THAT(t.error().message, HasSubstr(": not a rung bench record: "));
  EXPECT_TRUE(check_bench_record_target(dir_ / "new.json", dir_ / "det.onnx"));
}

TEST_F(BenchRecordTest, OneFilePerModel) {
  auto one = bench_record_paths(dir_ / "r.json", {"det"});
  ASSERT_TRUE(one);
  EXPECT_EQ(*one, std::vector<fs::path>{dir_ / "r.json"});
  auto into_dir = bench_record_paths(dir_, {"det"});
  ASSERT_TRUE(into_dir);
  EXPECT_EQ(*into_dir, std::vector<fs::path>{dir_ / "det.json"});
  auto several = bench_record_paths(dir_ / "records", {"det", "rec"});
  ASSERT_TRUE(several);
  EXPECT_EQ(*several, (std::vector<fs::path>{dir_ / "records" / "det.json", dir_ / "records" / "rec.json"}));
  std::ofstream(dir_ / "file.json") << "{}";
  EXPECT_FALSE(bench_record_paths(dir_ / "file.json", {"det", "rec"}));
  EXPECT_FALSE(bench_record_paths(dir_ / "records", {"det", "det"}));
}

}  // namespace
}  // namespace rung
