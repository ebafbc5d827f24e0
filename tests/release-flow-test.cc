// The release flow end to end, as a release engineer runs it (docs/quantise.md,
// "The release flow"), with real processes on the small classifier
// tests/quantise-test.cc quantises: `rung quantise` writes a form and its report,
// `rung bench` times the f32 file and the form in one run, `rung registry add`
// registers the form with the report as its recipe, and `rung registry verify`
// holds it. And the registry's rule on a report's gates: a form whose gate
// failed (`rung quantise --force`, or a refused report) is refused (exit 2,
// naming the report and the gate) unless marked `--gate-failed`; a marked
// release says so in `show`; the mark is refused where no gate failed; a recipe
// that is not a quantise report is taken as it is.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <set>
#include <nlohmann/json.hpp>

#include "os/file_hash.h"
#include "parity_test_support.h"
#include "quantise_fixture.h"
#include "test_support.h"

namespace rung {
namespace {
namespace fs = std::filesystem;
using ::testing::ContainsRegex;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using test::q;

using json = nlohmann::json;

std::string rung_cli(const std::string& args) {
  return "env -u RUNG_ORT_DIR -u RUNG_PLUGIN_DIR -u RUNG_REGISTRY " + q(test::cli_path()) + " " + args;
}

class ReleaseFlowTest : public ::testing::Test {
 protected:
  // The classifier quantised three ways, once for every test: int8 calibrated on
  // the full set (its gate passes: written), on the narrow set with --force (its
  // gate fails: forced, written anyway), and on the narrow set without it
  // (refused: nothing written, the report asked for with --out-json).
  static void SetUpTestSuite() {
    dir_ = test::make_temp_dir("rung-release-flow");
    test::write_classifier_sets(dir_);
    fs::create_directories(dir_ / "written");
    fs::create_directories(dir_ / "forced");
    written_ = test::quantise(test::classifier_quantise_args(dir_, "int8", "calibration", written_form()));
    forced_ = test::quantise(test::classifier_quantise_args(dir_, "int8", "narrow", forced_form()) + " --force");
    refused_ = test::quantise(test::classifier_quantise_args(dir_, "int8", "narrow", dir_ / "refused.onnx") + " --out-json " + q(refused_report()));
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }
  void SetUp() override {
    // Each test its own registry.
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    registry_file_ = dir_ / (std::string(info->name()) + ".sqlite");
    fs::remove(registry_file_);
  }

  static fs::path written_form() { return dir_ / "written" / "classifier_i8.onnx"; }
  static fs::path written_report() { return dir_ / "written" / "classifier_i8.report.json"; }
  static fs::path forced_form() { return dir_ / "forced" / "classifier_i8.onnx"; }
  static fs::path forced_report() { return dir_ / "forced" / "classifier_i8.report.json"; }
  static fs::path refused_report() { return dir_ / "refused.report.json"; }

  test::CommandResult registry(const std::string& args) {
    return test::run_command(rung_cli("registry " + args + " --registry " + q("sqlite:" + registry_file_.string())));
  }
  // `registry add` of `artifact` as classifier_i8 1.0 on the CPU of this machine with ONNX Runtime 1.30.0.
  std::string add(const fs::path& artifact, const std::string& recipe) {
    return "add classifier_i8=" + q(artifact) + " --version 1.0 --rung cpu --ort-dir " + q(test::runtime_dir("1.30.0")) + " " + recipe;
  }

  // A copy of `report` with `edit` applied, as another file.
  static fs::path edited(const fs::path& report, const std::string& name, const std::function<void(json&)>& edit) {
    json j = json::parse(test::read_text(report));
    edit(j);
    test::write_text(dir_ / name, j.dump(2));
    return dir_ / name;
  }

  static inline fs::path dir_;
  static inline std::optional<test::CommandResult> written_, forced_, refused_;
  fs::path registry_file_;
};

TEST_F(ReleaseFlowTest, QuantiseBenchAddAndVerifyTakeAPassingFormToAVerifiedRelease) {
  // 1. rung quantise: the form passes its gate and is written with its report.
  ASSERT_EQ(written_->exit_code, 0) << written_->out << written_->err;
  const json report = json::parse(test::read_text(written_report()));
  ASSERT_EQ(report["decision"], "written");
  EXPECT_EQ(report["output"]["sha256"], *sha256_of_file(written_form()));

  // 2. rung bench: the f32 file and the form in one run, as two forms of one model (the form's file is NAME_FORM.onnx).
  auto bench = test::run_command(rung_cli("bench classifier=" + q(dir_ / "classifier.onnx") + " " + q(written_form()) +
                                          " --rung cpu --runs 3 --warmup 0 --ort-dir " + q(test::runtime_dir("1.30.0")) + " --out-json " +
                                          q(dir_ / "classifier.bench.json")));
  ASSERT_EQ(bench.exit_code, 0) << bench.out << bench.err;
  EXPECT_THAT(bench.out, HasSubstr("classifier · 2 forms"));
  EXPECT_THAT(bench.out, ContainsRegex("CPU \\(floor\\) f32 +classifier +[0-9]"));
  EXPECT_THAT(bench.out, ContainsRegex("CPU \\(floor\\) i8 +classifier_i8 +[0-9]"));
  const json record = json::parse(test::read_text(dir_ / "classifier.bench.json"));
  ASSERT_EQ(record["model"]["forms"].size(), 2u);
  EXPECT_EQ(record["model"]["forms"][0]["model_id"], "classifier");
  EXPECT_EQ(record["model"]["forms"][1]["model_id"], "classifier_i8");
  EXPECT_EQ(record["model"]["forms"][1]["sha256"], report["output"]["sha256"]);
  std::set<std::string> measured;
  for (const auto& row : record["measurements"][0]["rows"]) {
    if (row["ok"] == true) measured.insert(row["model_id"].get<std::string>());
  }
  EXPECT_EQ(measured, (std::set<std::string>{"classifier", "classifier_i8"}));

  // 3. rung registry add: the form, its report as the recipe.
  auto added = registry(add(written_form(), "--recipe " + q(written_report())));
  ASSERT_EQ(added.exit_code, 0) << added.out << added.err;
  EXPECT_THAT(added.out, HasSubstr("added"));
  EXPECT_THAT(added.out, HasSubstr("sha256 " + *sha256_of_file(written_form())));
  EXPECT_THAT(added.out, Not(HasSubstr("gate ")));
  auto show = registry("show classifier_i8@1.0 --json");
  ASSERT_EQ(show.exit_code, 0) << show.err;
  const json release = json::parse(show.out)["releases"].at(0);
  EXPECT_EQ(release["recipe"]["decision"], "written");
  EXPECT_EQ(release["recipe"]["recipe"], report["recipe"]);
  EXPECT_TRUE(release["gate_failed"].is_null());

  // 4. rung registry verify: the form is as registered.
  auto verify = registry("verify");
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
  EXPECT_THAT(verify.out, HasSubstr("1 ok"));
}

TEST_F(ReleaseFlowTest, AForcedFormIsRefusedNamingTheReportAndTheGateUnlessMarkedAndThenShowsTheMark) {
  ASSERT_EQ(forced_->exit_code, 1) << forced_->out << forced_->err;
  ASSERT_TRUE(fs::exists(forced_form()));
  const json report = json::parse(test::read_text(forced_report()));
  ASSERT_EQ(report["decision"], "forced");
  ASSERT_THAT(report["failed"], ElementsAre("classification · y"));

  auto refused = registry(add(forced_form(), "--recipe " + q(forced_report())));
  EXPECT_EQ(refused.exit_code, 2) << refused.out << refused.err;
  EXPECT_THAT(refused.err, HasSubstr(forced_report().string()));
  EXPECT_THAT(refused.err, HasSubstr("gate failed: classification · y (decision: forced)"));
  EXPECT_THAT(refused.err, HasSubstr("--gate-failed"));
  EXPECT_FALSE(fs::exists(registry_file_));  // refused before the registry was opened: nothing made

  auto marked = registry(add(forced_form(), "--recipe " + q(forced_report()) + " --gate-failed"));
  ASSERT_EQ(marked.exit_code, 0) << marked.out << marked.err;
  const std::string line = "gate         FAILED: classification · y (decision: forced); registered with --gate-failed";
  EXPECT_THAT(marked.out, HasSubstr(line));
  // Read back by later commands: the mark is stored with the release.
  auto show = registry("show classifier_i8");
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_THAT(show.out, HasSubstr(line));
  auto show_json = registry("show classifier_i8@1.0 --json");
  ASSERT_EQ(show_json.exit_code, 0) << show_json.err;
  const json release = json::parse(show_json.out)["releases"].at(0);
  EXPECT_EQ(release["gate_failed"]["decision"], "forced");
  EXPECT_THAT(release["gate_failed"]["failed"], ElementsAre("classification · y"));
  auto list = registry("list --json");
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_EQ(json::parse(list.out)["releases"][0]["gate_failed"]["decision"], "forced");
  // The mark says how it was made, not whether its bytes are what was registered.
  EXPECT_EQ(registry("verify").exit_code, 0);
}

TEST_F(ReleaseFlowTest, ARefusedReportIsRefusedUnlessMarked) {
  ASSERT_EQ(refused_->exit_code, 1) << refused_->out << refused_->err;
  ASSERT_EQ(json::parse(test::read_text(refused_report()))["decision"], "refused");
  // Nothing was written: the form at hand is the forced one (the same recipe and sets).
  auto refused = registry(add(forced_form(), "--recipe " + q(refused_report())));
  EXPECT_EQ(refused.exit_code, 2) << refused.out << refused.err;
  EXPECT_THAT(refused.err, HasSubstr(refused_report().string()));
  EXPECT_THAT(refused.err, HasSubstr("classification · y (decision: refused)"));
  auto marked = registry(add(forced_form(), "--recipe " + q(refused_report()) + " --gate-failed"));
  ASSERT_EQ(marked.exit_code, 0) << marked.out << marked.err;
  EXPECT_THAT(marked.out, HasSubstr("FAILED: classification · y (decision: refused)"));
}

TEST_F(ReleaseFlowTest, AReportIsTakenUnmarkedOnlyWhenItsDecisionIsWrittenAndEveryGatePassed) {
  ASSERT_EQ(written_->exit_code, 0) << written_->out << written_->err;
  // A written report with one gate that did not pass, or one failing gate named: refused, naming it.
  const fs::path gate_not_passed = edited(written_report(), "gate-not-passed.json", [](json& j) { j["gates"][0]["passed"] = false; });
  auto r = registry(add(written_form(), "--recipe " + q(gate_not_passed)));
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("gate-not-passed.json"));
  EXPECT_THAT(r.err, HasSubstr("gate failed: classification · y (decision: written)"));
  const fs::path failed_named = edited(written_report(), "failed-named.json", [](json& j) { j["failed"] = json::array({"the prepared graph"}); });
  r = registry(add(written_form(), "--recipe " + q(failed_named)));
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("gate failed: the prepared graph (decision: written)"));
  // Gates all passed but the decision is not "written": refused.
  const fs::path forced_passing = edited(written_report(), "forced-passing.json", [](json& j) { j["decision"] = "forced"; });
  r = registry(add(written_form(), "--recipe " + q(forced_passing)));
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("(decision: forced)"));
  EXPECT_FALSE(fs::exists(registry_file_));
  // The report as rung quantise wrote it: taken, unmarked.
  r = registry(add(written_form(), "--recipe " + q(written_report())));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, Not(HasSubstr("FAILED")));
}

TEST_F(ReleaseFlowTest, TheMarkIsRefusedWhereNoGateFailedAndOtherRecipesAreTakenAsTheyAre) {
  ASSERT_EQ(written_->exit_code, 0) << written_->out << written_->err;
  auto passed = registry(add(written_form(), "--recipe " + q(written_report()) + " --gate-failed"));
  EXPECT_EQ(passed.exit_code, 2) << passed.out << passed.err;
  EXPECT_THAT(passed.err, HasSubstr("gates all passed (decision: written)"));
  EXPECT_THAT(passed.err, HasSubstr(written_report().string()));
  auto made_by = registry(add(written_form(), "--made-by 'rung quantise' --gate-failed"));
  EXPECT_EQ(made_by.exit_code, 2) << made_by.out << made_by.err;
  EXPECT_THAT(made_by.err, HasSubstr("not a rung quantise report"));
  EXPECT_FALSE(fs::exists(registry_file_));
  // A recipe of another kind is not read for gates, whatever members it has: taken as it is.
  const fs::path other = edited(forced_report(), "other-tool.json", [](json& j) { j["schema"] = "another-tools-report"; });
  auto taken = registry(add(forced_form(), "--recipe " + q(other)));
  EXPECT_EQ(taken.exit_code, 0) << taken.out << taken.err;
  EXPECT_THAT(taken.out, Not(HasSubstr("FAILED")));
  auto marked = registry("add other=" + q(forced_form()) + " --version 1.0 --ort-dir " + q(test::runtime_dir("1.30.0")) + " --recipe " + q(other) +
                         " --gate-failed");
  EXPECT_EQ(marked.exit_code, 2) << marked.out << marked.err;
  EXPECT_THAT(marked.err, HasSubstr("not a rung quantise report"));
}

TEST_F(ReleaseFlowTest, TheFlagIsInTheHelp) {
  auto help = test::run_command(rung_cli("registry add --help"));
  EXPECT_EQ(help.exit_code, 0) << help.err;
  EXPECT_THAT(help.out, HasSubstr("--gate-failed"));
}

}  // namespace
}  // namespace rung
