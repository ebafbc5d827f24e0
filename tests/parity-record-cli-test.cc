// `rung parity --record DIR`: one side run alone and stored with its inputs, to be
// compared on another machine (an ARM board, qemu) as `expected:DIR`; and a recording
// read back: what it says ran where, its outputs checked against the running model's.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "model_builder.h"
#include "os/json_input.h"
#include "parity_test_support.h"

namespace rung {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

class ParityRecordTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::make_temp_dir("rung-parity-record");
    relu_ = model("relu", "Relu", "y");
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path model(const std::string& name, const std::string& op, const std::string& output) {
    test::ModelBuilder b;
    b.input("x", {1, 4}).node(op, {"x"}, {output}).output(output, {1, 4});
    return b.save(dir_ / (name + ".onnx"));
  }
  test::CommandResult record(const fs::path& m, const fs::path& into, const std::string& rest = "--random 3 --seed 7") {
    return test::parity("--ref " + test::side(m) + " --record '" + into.string() + "' " + rest);
  }
  test::CommandResult compare_with(const fs::path& recording, const std::string& cand, const std::string& rest = "") {
    return test::parity("--ref 'expected:" + recording.string() + "' --inputs '" + recording.string() + "' --cand " + cand + " " + rest);
  }
  nlohmann::json side_json(const fs::path& recording) {
    auto j = read_json_file(recording / "side.json");
    EXPECT_TRUE(j.ok()) << (j ? "" : j.error().message);
    return j ? *j : nlohmann::json();
  }
  // Anything the recording left beside its destination (a staging folder, a partial one).
  std::vector<std::string> leftovers() {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) {
      if (e.path().extension() != ".onnx" && e.path().filename() != "kept") names.push_back(e.path().filename().string());
    }
    return names;
  }

  fs::path dir_, relu_;
};

TEST_F(ParityRecordTest, ARecordingHoldsEachInputSetsTensorsAndSaysWhatRanWhere) {
  const fs::path rec = dir_ / "arm-side";
  auto r = record(relu_, rec);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("recorded 3 input sets into " + rec.string() + ": relu.onnx · cpu · ONNX Runtime 1.30.0 · recorded on "));
  for (const char* set : {"random_0", "random_1", "random_2"}) {
    EXPECT_TRUE(fs::is_regular_file(rec / set / "input_0.pb")) << set;
    EXPECT_TRUE(fs::is_regular_file(rec / set / "output_0.pb")) << set;
  }
  const auto j = side_json(rec);
  EXPECT_EQ(j.value("schema", ""), "rung-recorded-side/1");
  EXPECT_EQ(j.value("model_file", ""), "relu.onnx");
  EXPECT_EQ(j.value("model_sha256", "").size(), 64u);
  EXPECT_EQ(j.value("rung", ""), "cpu");
  EXPECT_EQ(j["runtime"].value("version", ""), "1.30.0");
  EXPECT_EQ(j["outputs"], nlohmann::json::array({"y"}));
  EXPECT_EQ(j.value("input_sets", 0), 3);
  // The machine as its kernel names it: x86_64 here, aarch64 under qemu-aarch64 or on an ARM board.
  EXPECT_FALSE(j.value("architecture", "").empty());
  EXPECT_THAT(j.value("system", ""), HasSubstr(j.value("architecture", "?")));
  EXPECT_THAT(leftovers(), ::testing::ElementsAre("arm-side"));
}

TEST_F(ParityRecordTest, TheSameModelAgainstItsRecordingPassesAndTheReportNamesTheRecording) {
  const fs::path rec = dir_ / "side";
  ASSERT_EQ(record(relu_, rec).exit_code, 0);
  const std::string arch = side_json(rec).value("architecture", "?");
  auto r = compare_with(rec, test::side(relu_, "1.28.2"), "--json");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto report = parse_json(r.out);
  ASSERT_TRUE(report.ok()) << r.out;
  EXPECT_THAT((*report)["ref"].get<std::string>(), HasSubstr("relu.onnx · cpu · ONNX Runtime 1.30.0 · recorded on " + arch));
  // The recorded side's own facts, not "expected": what the release registry matches a report on.
  EXPECT_EQ((*report)["sides"]["ref"]["rung"], "cpu");
  EXPECT_EQ((*report)["sides"]["ref"]["runtime"]["version"], "1.30.0");
  EXPECT_EQ((*report)["sides"]["ref"]["model_sha256"], side_json(rec)["model_sha256"]);
  EXPECT_EQ((*report)["inputs"], 3);
  EXPECT_EQ((*report)["passed"], true);
}

TEST_F(ParityRecordTest, AModelThatDecidesOtherwiseFailsAgainstTheRecording) {
  const fs::path rec = dir_ / "side";
  ASSERT_EQ(record(relu_, rec).exit_code, 0);
  auto r = compare_with(rec, test::side(model("neg", "Neg", "y")));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("FAIL  tensor · y: 0 of 3 inputs within"));
}

TEST_F(ParityRecordTest, ARecordingFromAnArmDeviceIsReadTheSameWay) {
  // As a Raspberry Pi would have written it: only side.json says where it ran.
  const fs::path rec = dir_ / "pi";
  ASSERT_EQ(record(relu_, rec).exit_code, 0);
  auto j = side_json(rec);
  j["architecture"] = "aarch64";
  j["system"] = "Linux 6.6.51+rpt-rpi-v8 aarch64";
  j["device"] = "linux; cpu Raspberry Pi 4 Model B Rev 1.4";
  test::write_text(rec / "side.json", j.dump(2));
  auto r = compare_with(rec, test::side(relu_), "--json");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto report = parse_json(r.out);
  ASSERT_TRUE(report.ok()) << r.out;
  EXPECT_THAT((*report)["ref"].get<std::string>(), HasSubstr("recorded on aarch64 (linux; cpu Raspberry Pi 4 Model B Rev 1.4)"));
  EXPECT_EQ((*report)["sides"]["ref"]["device"], "linux; cpu Raspberry Pi 4 Model B Rev 1.4");
}

TEST_F(ParityRecordTest, TheRecordedOutputsMustBeTheRunningModels) {
  const fs::path rec = dir_ / "side";
  ASSERT_EQ(record(relu_, rec).exit_code, 0);
  // Same tensors, another output name: output_0.pb would be read as the wrong output.
  auto r = compare_with(rec, test::side(model("renamed", "Relu", "z")));
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr(rec.string() + ": recorded outputs [y] are not the cand model's [z]"));
}

TEST_F(ParityRecordTest, ADamagedDescriptionIsNamed) {
  const fs::path rec = dir_ / "side";
  ASSERT_EQ(record(relu_, rec).exit_code, 0);
  for (const std::string& text : {std::string("{\"schema\": 5}"), std::string("[1, 2]"), std::string("{\"schema\": \"rung-recorded-side/1\"}"),
                                  std::string("not json"), std::string(100000, '[')}) {
    test::write_text(rec / "side.json", text);
    auto r = compare_with(rec, test::side(relu_));
    EXPECT_EQ(r.exit_code, 2) << text.substr(0, 40) << r.out << r.err;
    EXPECT_THAT(r.err, HasSubstr((rec / "side.json").string() + ": ")) << text.substr(0, 40);
  }
  // Without side.json it is a folder of stored outputs as an ONNX test folder holds them.
  fs::remove(rec / "side.json");
  auto plain = compare_with(rec, test::side(relu_));
  EXPECT_EQ(plain.exit_code, 0) << plain.out << plain.err;
  EXPECT_THAT(plain.out, HasSubstr("ref   the outputs stored in " + rec.string()));
}

TEST_F(ParityRecordTest, NothingThereIsReplacedAndAFailedRecordingLeavesNothing) {
  const fs::path kept = dir_ / "kept";
  fs::create_directories(kept);
  test::write_text(kept / "mine.txt", "precious");
  auto there = record(relu_, kept);
  EXPECT_EQ(there.exit_code, 2) << there.out << there.err;
  EXPECT_THAT(there.err, HasSubstr(kept.string() + ": already there: a recording goes into a new directory (nothing was replaced)"));
  EXPECT_EQ(test::read_text(kept / "mine.txt"), "precious");

  auto no_parent = record(relu_, dir_ / "missing" / "side");
  EXPECT_EQ(no_parent.exit_code, 2) << no_parent.out << no_parent.err;
  EXPECT_THAT(no_parent.err, HasSubstr("does not exist"));

  // The side crashes on its first input: no recording, no staging folder left.
  auto crashed = test::parity("--ref " + test::sim_ep_side(relu_, ",option.abort_at=compute") + " --record '" + (dir_ / "side").string() +
                              "' --random 2");
  EXPECT_EQ(crashed.exit_code, 1) << crashed.out << crashed.err;
  EXPECT_THAT(crashed.err, HasSubstr("the worker was killed by SIGABRT"));
  EXPECT_FALSE(fs::exists(dir_ / "side"));
  EXPECT_THAT(leftovers(), ::testing::IsEmpty());
}

TEST_F(ParityRecordTest, RecordTakesTheRefSideAlone) {
  const fs::path rec = dir_ / "side";
  auto both = test::parity("--ref " + test::side(relu_) + " --cand " + test::side(relu_) + " --record '" + rec.string() + "' --random 1");
  EXPECT_EQ(both.exit_code, 2) << both.out << both.err;
  EXPECT_THAT(both.err, HasSubstr("--record DIR runs the ref side alone: give no --cand"));
  auto neither = test::parity("--ref " + test::side(relu_) + " --random 1");
  EXPECT_EQ(neither.exit_code, 2) << neither.out << neither.err;
  EXPECT_THAT(neither.err, HasSubstr("give --cand SPEC (the side to compare), or --record DIR"));
  ASSERT_EQ(record(relu_, rec).exit_code, 0);
  auto of_a_recording = test::parity("--ref 'expected:" + rec.string() + "' --record '" + (dir_ / "again").string() + "' --random 1");
  EXPECT_EQ(of_a_recording.exit_code, 2) << of_a_recording.out << of_a_recording.err;
  EXPECT_THAT(of_a_recording.err, HasSubstr("the ref side must run a model"));
  EXPECT_FALSE(fs::exists(dir_ / "again"));
}

TEST_F(ParityRecordTest, ImagesAreRecordedAsTheTensorsTheModelWasGiven) {
  // The recording holds what went in after preprocessing, so the other machine needs no images or gate preprocessing.
  fs::create_directories(dir_ / "tensors");
  ASSERT_TRUE(write_tensor_file(test::float_tensor("x", {1, 4}, {-1, 0.5f, 2, -3}), dir_ / "tensors" / "a b.pb"));
  const fs::path rec = dir_ / "side";
  auto r = record(relu_, rec, "--inputs '" + (dir_ / "tensors").string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(fs::is_regular_file(rec / "a_b.pb" / "input_0.pb"));
  auto back = compare_with(rec, test::side(relu_), "--show");
  EXPECT_EQ(back.exit_code, 0) << back.out << back.err;
  EXPECT_THAT(back.out, Not(HasSubstr("side.json")));
}

}  // namespace
}  // namespace rung
