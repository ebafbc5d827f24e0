// Parity gates that say what they saw: NaN agrees with NaN and no other number,
// the "would pass at" figures pass when used, a decision gate whose reference
// decided nothing fails as vacuous, and each side's placement heads the report.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <regex>

#include "model_builder.h"
#include "parity/gates/gate.h"
#include "parity_test_support.h"

namespace rung {
namespace {
namespace fs = std::filesystem;
using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;

class ParityDecisionsTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::make_temp_dir("rung-parity-decisions"); }
  void TearDown() override { fs::remove_all(dir_); }

  // y = sqrt(x - 0.5), or sqrt(|x - 0.5|): uniform inputs in [0, 1) make half of the first NaN.
  fs::path sqrt_model(const std::string& name, bool abs, std::int64_t width = -1) {
    test::ModelBuilder b;
    b.input("x", {1, width}).initializer("half", {}, {0.5f}).node("Sub", {"x", "half"}, {"d"});
    if (abs) {
      b.node("Abs", {"d"}, {"a"}).node("Sqrt", {"a"}, {"y"});
    } else {
      b.node("Sqrt", {"d"}, {"y"});
    }
    return b.output("y", {1, width}).save(dir_ / (name + ".onnx"));
  }

  fs::path write(const std::string& name, const std::string& text) {
    test::write_text(dir_ / name, text);
    return dir_ / name;
  }

  fs::path dir_;
};

TEST_F(ParityDecisionsTest, ANanModelPassesAgainstItselfAndCountsItsNans) {
  const fs::path m = sqrt_model("sqrt", false, 64);
  auto r = test::parity("--ref " + test::side(m) + " --cand " + test::side(m) + " --random 3 --seed 5 --out-json '" + (dir_ / "r.json").string() + "'");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("PASS  tensor · y: 3 of 3 inputs"));
  const auto j = nlohmann::json::parse(test::read_text(dir_ / "r.json"));
  const auto& nan = j["gates"][0]["stats"]["outputs"][0]["nan"];
  EXPECT_GT(nan["ref"].get<int>(), 0);
  EXPECT_EQ(nan["ref"], nan["cand"]);
  const int n = nan["ref"].get<int>();
  EXPECT_THAT(r.out, HasSubstr(fmt::format("NaN {} ref / {} cand", n, n)));
  EXPECT_THAT(r.out, HasSubstr("would pass at atol 0 "));
}

TEST_F(ParityDecisionsTest, ANanModelPassesAgainstItselfOnTheSimulatedAccelerator) {
  const fs::path m = sqrt_model("sqrt", false, 64);
  auto r = test::parity("--ref " + test::side(m) + " --cand " + test::sim_ep_side(m) + " --random 2");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  // Each side's placement heads the report.
  EXPECT_THAT(r.out, HasSubstr("\n      CPUExecutionProvider ran 2 of 2 nodes\n"));
  EXPECT_THAT(r.out, ContainsRegex("\n      RungSimAccelerator ran 2 of 2 nodes, [0-9]+% of run time\n"));
}

TEST_F(ParityDecisionsTest, NanAgainstANumberFailsAndNoToleranceClaimsToPassIt) {
  const fs::path ref = sqrt_model("sqrt", false, 64);
  const fs::path cand = sqrt_model("sqrt_abs", true, 64);
  auto r = test::parity("--ref " + test::side(ref) + " --cand " + test::side(cand) + " --random 2");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("FAIL  tensor · y: 0 of 2 inputs"));
  EXPECT_THAT(r.out, ContainsRegex("NaN [1-9][0-9]* ref / 0 cand"));
  EXPECT_THAT(r.out, HasSubstr("no atol or rtol would pass"));
  EXPECT_THAT(r.out, Not(HasSubstr("atol inf")));
}

TEST_F(ParityDecisionsTest, TheInputSpecSetsTheDimensionsAsOtherCommandsTakeIt) {
  const fs::path m = sqrt_model("sqrt_abs", true);
  const fs::path spec = write("spec.json", R"({"dims": {"x:1": 5}})");
  auto r = test::parity("--ref " + test::side(m) + " --cand " + test::side(m) + " --random 2 --input-spec sqrt_abs=" + spec.string());
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("0 of 10 elements mismatch"));  // 2 inputs of [1, 5]
  r = test::parity("--ref " + test::side(m) + " --cand " + test::side(m) + " --random 1 --input-spec " + spec.string());
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("0 of 5 elements mismatch"));
  r = test::parity("--ref " + test::side(m) + " --cand " + test::side(m) + " --random 1 --input-spec other=" + spec.string());
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("'other' is not the model's name (sqrt_abs)"));
}

// The tensor gate fed directly: the printed "would pass at" figure, used as the bound, passes.
TEST(WouldPassFigureTest, IsRoundedUpSoThatThePrintedFigurePassesWhenUsed) {
  auto gate_at = [](double atol) {
    const nlohmann::json params{{"decoder", "tensor"}, {"outputs", {"y"}}, {"atol", atol}, {"rtol", 1e-5}};
    GateParams p(params, "tensor gate");
    p.skip("decoder");  // read by the gate file, not the gate
    auto g = make_tensor_gate(p);
    EXPECT_TRUE(g.ok());
    ModelIo io;
    io.outputs.push_back({"y", ElementType::kFloat, {1, 2}, {}, {}, {}});
    EXPECT_TRUE((*g)->check(io).ok());
    return std::move(*g);
  };
  const Tensor ref = test::float_tensor("y", {1, 2}, {1.0f, 2.0f});
  const Tensor cand = test::float_tensor("y", {1, 2}, {1.0050754547f, 2.0f});
  const double true_min = static_cast<double>(1.0050754547f) - 1.0;  // 0.00507545471...
  auto strict = gate_at(1e-5);
  ASSERT_TRUE(strict->add("in", {{"y", &ref}}, {{"y", &cand}}).ok());
  const GateOutcome failed = strict->finish();
  ASSERT_FALSE(failed.passed);
  std::smatch m;
  const std::string line = failed.details.at(0);
  ASSERT_TRUE(std::regex_search(line, m, std::regex("would pass at atol ([0-9.e+-]+)"))) << line;
  const double printed = std::stod(m[1]);
  EXPECT_EQ(m[1].str(), "0.005076") << "rounded up, not to nearest (0.005075 fails)";
  EXPECT_GE(printed, true_min);
  auto used = gate_at(printed);
  ASSERT_TRUE(used->add("in", {{"y", &ref}}, {{"y", &cand}}).ok());
  EXPECT_TRUE(used->finish().passed);
  auto nearest = gate_at(0.005075);
  ASSERT_TRUE(nearest->add("in", {{"y", &ref}}, {{"y", &cand}}).ok());
  EXPECT_FALSE(nearest->finish().passed);  // why rounding to nearest was wrong
}

TEST(NumUpTest, NeverPrintsBelowTheValue) {
  for (double v : {0.0050754547, 1e-7 * 3.14159265, 9.99999, 123456.789, 0.1, 1.0, 2.5e-5}) {
    const std::string s = num_up(v);
    EXPECT_GE(std::stod(s), v) << s;
    EXPECT_LE(std::stod(s), v * 1.001) << s;
  }
  EXPECT_EQ(num_up(0.1), "0.1");
  EXPECT_EQ(num_up(0), "0");
}

class VacuousGateTest : public ParityDecisionsTest {
 protected:
  static fs::path det() { return test::model_path("ppocr/ch_PP-OCRv4_det_infer.onnx"); }
  static fs::path det_gate() { return test::fixtures_dir() / "parity" / "ppocr_det.gate.json"; }
};

TEST_F(VacuousGateTest, ADetectionGateOnRandomInputsFailsAsVacuous) {
  auto r = test::parity("--ref " + test::side(det()) + " --cand " + test::side(det()) + " --random 2 --gate '" + det_gate().string() +
                        "' --out-json '" + (dir_ / "r.json").string() + "'");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("FAIL  boxes · sigmoid_0.tmp_0 (2 inputs, 2 vacuous): vacuous: the reference decided nothing on 2 of 2 inputs"));
  const auto j = nlohmann::json::parse(test::read_text(dir_ / "r.json"));
  EXPECT_EQ(j["gates"][0]["vacuous"], 2);
  EXPECT_EQ(j["gates"][0]["judged"], 2);
  EXPECT_FALSE(j["passed"].get<bool>());
}

TEST_F(VacuousGateTest, OnRealPagesItPassesPrintsTheVacuousCountAndShowsBothSidesBoxes) {
  fs::create_directories(dir_ / "images");
  fs::copy_file(test::skimage_image("page.png"), dir_ / "images" / "page.png");
  auto rendered = test::run_command("python3 '" + (test::fixtures_dir().parent_path().parent_path() / "tools" / "make-text-corpus.py").string() + "' --out '" +
                                    (dir_ / "corpus").string() + "' --set vacuous-test --pages 1 --rotated 0");
  ASSERT_EQ(rendered.exit_code, 0) << rendered.out << rendered.err;
  fs::copy_file(dir_ / "corpus" / "vacuous-test" / "page-0001.png", dir_ / "images" / "rendered.png");
  auto r = test::parity("--ref " + test::side(det()) + " --cand " + test::side(det()) + " --inputs '" + (dir_ / "images").string() +
                        "' --gate '" + det_gate().string() + "' --show");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("PASS  boxes · sigmoid_0.tmp_0 (2 inputs, 0 vacuous): "));
  EXPECT_THAT(r.out, ContainsRegex("page.png: ref [1-9][0-9]* boxes: \\("));
  EXPECT_THAT(r.out, ContainsRegex("rendered.png: cand [1-9][0-9]* boxes: \\("));
}

}  // namespace
}  // namespace rung
