// One id, one display name and one wording per rung, in every command: `rung
// doctor`, `probe`, `bench`, `conform` and `parity` each asked about the TensorRT
// rung on the fetched 1.30.0 build (which carries the provider in its list but
// not its file, libonnxruntime_providers_tensorrt.so) give the same sentence for
// why it cannot run, show it as "TensorRT" in text and as "tensorrt" in JSON;
// the simulated accelerator plugin is "rung_sim_ep" in both, and its EP's own
// name (RungSimAccelerator) appears only where a line says which provider ran nodes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <sstream>

#include "model_builder.h"
#include "session/tensor_file.h"
#include "test_support.h"

namespace rung {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr const char* kTrtId = "tensorrt";
constexpr const char* kTrtDisplay = "TensorRT";
constexpr const char* kSimId = "rung_sim_ep";
constexpr const char* kSimDisplay = "rung_sim_ep";

std::string regex_escape(const std::string& s) { return std::regex_replace(s, std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)"); }

// The first capture of `pattern` (one line, std::regex::multiline not being in C++17's ECMAScript
// for libstdc++, lines are tried one at a time); nullopt when no line matches.
std::optional<std::string> capture(const std::string& text, const std::string& pattern) {
  const std::regex re(pattern);
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_search(line, m, re)) return m[1].str();
  }
  return std::nullopt;
}

// A table may put a long reason in a numbered note under it ("see [1]", then "  [1] reason"): the note's text.
std::optional<std::string> reason_in(const std::string& text, const std::string& pattern) {
  auto cell = capture(text, pattern);
  if (!cell) return cell;
  std::smatch m;
  if (std::regex_search(*cell, m, std::regex(R"(^(?:see )?\[(\d+)\]$)"))) return capture(text, "^  \\[" + m[1].str() + "\\] (.*)$");
  return cell;
}

bool has_line(const std::string& text, const std::string& pattern) {
  return capture(text, "(" + pattern + ")").has_value();
}

class ReasonsCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (fs::exists(test::runtime_dir("1.30.0") / "libonnxruntime_providers_tensorrt.so")) {
      GTEST_SKIP() << "this 1.30.0 build has the TensorRT provider: no reason to compare";
    }
    dir_ = test::make_temp_dir("rung-reasons-cli");
    plugins_ = test::make_plugin_dir(dir_);
    test::ModelBuilder b;
    b.input("x", {1, 8}).node("Relu", {"x"}, {"r"}).node("Add", {"r", "x"}, {"y"}).output("y", {1, 8});
    b.save(dir_ / "tiny.onnx");
    // A one-test suite in ONNX's backend-test layout, for conform.
    const fs::path t = dir_ / "suite" / "node" / "test_relu";
    fs::create_directories(t / "test_data_set_0");
    test::ModelBuilder relu;
    relu.input("x", {2}).node("Relu", {"x"}, {"y"}).output("y", {2});
    relu.save(t / "model.onnx");
    ASSERT_TRUE(write_value_file(Value::of(test::float_tensor("x", {1, -1})), t / "test_data_set_0" / "input_0.pb"));
    ASSERT_TRUE(write_value_file(Value::of(test::float_tensor("y", {1, 0})), t / "test_data_set_0" / "output_0.pb"));
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }


  std::string tiny() const { return (dir_ / "tiny.onnx").string(); }
  std::string sim_library() const { return (plugins_ / "librung_sim_ep.so").string(); }

  // The CLI on the 1.30.0 build, a fixture device without a GPU (its ladder holds
  // every accelerator rung the build carries) and, where asked, the plugin directory.
  std::string rung(const std::string& command, const std::string& args, bool hardware_root = true) const {
    return "env -u RUNG_ORT_DIR -u RUNG_PLUGIN_DIR -u RUNG_FORCE_RUNG -u RUNG_SOFTWARE_GPU '" + test::cli_path().string() + "' " + command +
           " --ort-dir '" + test::runtime_dir("1.30.0").string() + "'" +
           (hardware_root ? " --hardware-root '" + (test::fixtures_dir() / "hardware" / "cpu-vm").string() + "'" : std::string()) + " " + args;
  }
  std::string doctor(const std::string& args) const { return rung("doctor", "--plugin-dir '" + plugins_.string() + "' " + args); }
  // Without the plugin the TensorRT rung is tried (a higher rung taken would leave it untried).
  std::string probe(const std::string& args, bool with_plugin = false) const {
    return rung("probe", "--model tiny=" + tiny() + " --runs 1 --deadline 60 --cache-dir '" + (dir_ / "cache").string() + "' " +
                             (with_plugin ? "--plugin-dir '" + plugins_.string() + "' " : std::string()) + args);
  }
  std::string bench(const std::string& args) const {
    return rung("bench", "tiny=" + tiny() + " --runs 2 --warmup 0 --rung tensorrt --rung rung_sim_ep --plugin-dir '" + plugins_.string() + "' " + args);
  }
  std::string conform(const std::string& args) const {
    return rung("conform", "--suite '" + (dir_ / "suite").string() + "' --rung cpu --rung tensorrt --rung '" + sim_library() + "' " + args);
  }
  std::string parity(const std::string& cand_rung, const std::string& args) const {
    return rung("parity", "--ref " + tiny() + " --cand '" + tiny() + ",rung=" + cand_rung + "' --random 1 " + args, false);
  }

  // A command's JSON document, however the command gives it: `--out-json FILE` where
  // the command has it, else `--json FILE` where its --json takes a file, else `--json` on stdout.
  // The one place that knows the JSON options (they are being made the same for every command).
  nlohmann::json json_of(const std::string& command, const std::string& subcommand, const std::string& name) const {
    const std::string help = test::run_command("'" + test::cli_path().string() + "' " + subcommand + " --help").out;
    const fs::path file = dir_ / (name + ".json");
    std::string flag;
    bool on_stdout = false;
    if (help.find("--out-json") != std::string::npos) {
      flag = " --out-json '" + file.string() + "'";
    } else if (std::regex_search(help, std::regex(R"(--json TEXT)"))) {
      flag = " --json '" + file.string() + "'";
    } else {
      flag = " --json";
      on_stdout = true;
    }
    auto r = test::run_command(command + flag);
    const std::string text = on_stdout ? r.out : test::read_file(file);
    auto j = nlohmann::json::parse(text, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << subcommand << " gave no JSON document: " << r.out << r.err;
    return j;
  }

  // The rung entry of a JSON document whose id is `id`, in whatever list the document keeps its rungs.
  static std::optional<nlohmann::json> rung_entry(const nlohmann::json& doc, const std::string& id) {
    const nlohmann::json* lists[] = {doc.contains("ladder") ? &doc["ladder"] : nullptr, doc.contains("rungs") ? &doc["rungs"] : nullptr,
                                     doc.contains("columns") ? &doc["columns"] : nullptr,
                                     doc.contains("measurements") ? &doc["measurements"][0]["rows"] : nullptr};
    for (const auto* list : lists) {
      if (list == nullptr) continue;
      for (const auto& e : *list) {
        if (e.value("rung", "") == id) return e;
      }
    }
    return std::nullopt;
  }
  // Its display name, under whichever key the document uses for it.
  static std::string display_of(const nlohmann::json& e) {
    for (const char* key : {"display", "rung_display", "rung_name"}) {
      if (e.contains(key) && e[key].is_string()) return e[key];
    }
    return {};
  }

  fs::path dir_, plugins_;
};

TEST_F(ReasonsCliTest, EveryCommandGivesTheTensorRtRungOneNameAndOneReason) {
  const std::string d = regex_escape(kTrtDisplay);
  std::map<std::string, std::string> reasons;

  auto doc = test::run_command(doctor(""));
  ASSERT_EQ(doc.exit_code, 0) << doc.err;
  // "  TensorRT   TensorrtExecutionProvider    f32 model, fp16 engine   REASON"
  if (auto r = reason_in(doc.out, "^  " + d + " {2,}TensorrtExecutionProvider {2,}\\S.*?\\S {2,}(\\S.*)$")) reasons["doctor"] = *r;

  auto pr = test::run_command(probe("--force"));
  ASSERT_EQ(pr.exit_code, 0) << pr.err;
  // "  TensorRT             -   ...   -  failed: REASON"
  if (auto r = reason_in(pr.out, "^  " + d + " {2,}- .* failed: (.*)$")) reasons["probe"] = *r;

  auto be = test::run_command(bench(""));
  ASSERT_EQ(be.exit_code, 0) << be.err;
  // "  TensorRT    f32  tiny_f16 failed (provider_unavailable): REASON"
  if (auto r = reason_in(be.out, "^  " + d + " +(?:\\S+ +)*?tiny\\S* failed \\([a-z_]+\\): (.*)$")) reasons["bench"] = *r;

  auto co = test::run_command(conform(""));
  ASSERT_EQ(co.exit_code, 0) << co.out << co.err;
  // "  TensorRT: not available here — REASON" (several rungs of one reason: "  CUDA, TensorRT: ..."),
  // or a grid row "  TensorRT · ONNX Runtime 1.30.0   unavailable: REASON"
  if (auto r = reason_in(co.out, "^  (?:[^:]+, )?" + d + "(?:, [^:]+)?: not available here — (.*)$")) reasons["conform"] = *r;
  else if (auto grid_reason = reason_in(co.out, "^  " + d + " · ONNX Runtime 1\\.30\\.0 +unavailable: (.*)$")) reasons["conform"] = *grid_reason;

  auto pa = test::run_command(parity(kTrtId, ""));
  EXPECT_EQ(pa.exit_code, 1) << "a side that cannot run fails the gate: " << pa.out << pa.err;
  // "rung: cand (tiny.onnx on TensorRT, the chosen ONNX Runtime build): the rung is not available: REASON"
  if (auto r = reason_in(pa.err, "cand \\(tiny\\.onnx on " + d + ", [^)]*\\): the rung is not available: (.*)$")) reasons["parity"] = *r;

  for (const char* command : {"doctor", "probe", "bench", "conform", "parity"}) {
    EXPECT_TRUE(reasons.count(command)) << command << " shows no " << kTrtDisplay << " row with a reason:\n"
                                        << (std::string(command) == "doctor"    ? doc.out
                                            : std::string(command) == "probe"   ? pr.out
                                            : std::string(command) == "bench"   ? be.out
                                            : std::string(command) == "conform" ? co.out
                                                                                : pa.err);
  }
  ASSERT_TRUE(reasons.count("doctor"));
  // The standing's sentence: what the rung needs and what is missing, never ONNX Runtime's words for the failed load.
  EXPECT_EQ(reasons["doctor"], "ONNX Runtime's TensorRT provider (libonnxruntime_providers_tensorrt.so) is not beside libonnxruntime.so.1");
  for (const auto& [command, reason] : reasons) EXPECT_EQ(reason, reasons["doctor"]) << command;
  for (const auto& [command, reason] : reasons) EXPECT_THAT(reason, ::testing::Not(HasSubstr("provider bridge"))) << command;
}

TEST_F(ReasonsCliTest, EveryJsonDocumentGivesTheTensorRtRungOneIdAndOneDisplayName) {
  const std::map<std::string, nlohmann::json> docs = {
      {"doctor", json_of(doctor(""), "doctor", "doctor")},
      {"probe", json_of(probe("--force"), "probe", "probe")},
      {"bench", json_of(bench(""), "bench", "bench")},
      {"conform", json_of(conform(""), "conform", "conform")},
  };
  for (const auto& [command, doc] : docs) {
    auto e = rung_entry(doc, kTrtId);
    ASSERT_TRUE(e.has_value()) << command << " has no rung '" << kTrtId << "': " << doc.dump().substr(0, 2000);
    EXPECT_EQ(display_of(*e), kTrtDisplay) << command;
  }
  // The reason in JSON is the text's sentence too.
  const std::string reason = rung_entry(docs.at("doctor"), kTrtId)->at("note");
  EXPECT_EQ(rung_entry(docs.at("probe"), kTrtId)->at("reason"), reason);
  EXPECT_EQ(rung_entry(docs.at("bench"), kTrtId)->at("failure_reason"), reason);
  EXPECT_EQ(rung_entry(docs.at("bench"), kTrtId)->at("failure_class"), "provider_unavailable");
  EXPECT_EQ(rung_entry(docs.at("conform"), kTrtId)->at("unavailable"), reason);
}

TEST_F(ReasonsCliTest, TheSimulatedAcceleratorHasOneIdAndOneDisplayNameEverywhere) {
  const std::string d = regex_escape(kSimDisplay);
  auto doc = test::run_command(doctor(""));
  ASSERT_EQ(doc.exit_code, 0) << doc.err;
  EXPECT_TRUE(has_line(doc.out, "^  " + d + " ")) << doc.out;
  auto pr = test::run_command(probe("--force --accept-ratio 1000", true));
  ASSERT_EQ(pr.exit_code, 0) << pr.err;
  EXPECT_TRUE(has_line(pr.out, "^  " + d + " {2,}tiny ")) << pr.out;
  auto be = test::run_command(bench(""));
  ASSERT_EQ(be.exit_code, 0) << be.err;
  EXPECT_TRUE(has_line(be.out, "^  " + d + " +(?:\\S+ +)*?tiny\\S* ")) << be.out;
  auto co = test::run_command(conform(""));
  ASSERT_EQ(co.exit_code, 0) << co.out << co.err;
  EXPECT_TRUE(has_line(co.out, "^  " + d + " · ONNX Runtime 1\\.30\\.0 ")) << co.out;
  auto pa = test::run_command(parity(sim_library(), ""));
  ASSERT_EQ(pa.exit_code, 0) << pa.out << pa.err;
  EXPECT_TRUE(has_line(pa.out, "tiny\\.onnx · " + d + " · ONNX Runtime 1\\.30\\.0")) << pa.out;
  // The EP's registered name says which provider ran nodes, and nothing else.
  for (const auto* out : {&doc.out, &pr.out, &be.out, &co.out, &pa.out}) {
    std::istringstream in(*out);
    for (std::string line; std::getline(in, line);) {
      if (line.find("RungSimAccelerator") != std::string::npos) {
        EXPECT_THAT(line, HasSubstr("RungSimAccelerator ran")) << *out;
      }
    }
  }

  const std::map<std::string, nlohmann::json> docs = {
      {"doctor", json_of(doctor(""), "doctor", "doctor-sim")},
      {"probe", json_of(probe("--force --accept-ratio 1000", true), "probe", "probe-sim")},
      {"bench", json_of(bench(""), "bench", "bench-sim")},
      {"conform", json_of(conform(""), "conform", "conform-sim")},
  };
  for (const auto& [command, json_doc] : docs) {
    auto e = rung_entry(json_doc, kSimId);
    ASSERT_TRUE(e.has_value()) << command << " has no rung '" << kSimId << "': " << json_doc.dump().substr(0, 2000);
    EXPECT_EQ(display_of(*e), kSimDisplay) << command;
  }
  auto pj = json_of(parity(sim_library(), ""), "parity", "parity-sim");
  EXPECT_EQ(pj.dump().find("\"rung\":\"RungSimAccelerator\""), std::string::npos) << pj.dump();
  EXPECT_NE(pj.dump().find(std::string("\"rung\":\"") + kSimId + "\""), std::string::npos) << pj.dump().substr(0, 2000);
}

}  // namespace
}  // namespace rung
