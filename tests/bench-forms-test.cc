// Forms of one model in run_bench: files given one name are one model with a
// row per form × rung, "× floor" and "× f32" paired ratios with their
// intervals; --shape's parsing and its checks against the model at each boundary.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "model_builder.h"
#include "rung/bench.h"
#include "rung/bench_record.h"
#include "rung/input_spec.h"
#include "test_support.h"

namespace rung {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr const char* kSim = "rung_sim_ep";

// x [1, n, n] multiplied by itself `times` times: the work grows with `times`.
fs::path matmul_model(const fs::path& file, int64_t n, int times, std::vector<int64_t> shape = {}) {
  test::ModelBuilder b;
  b.input("x", shape.empty() ? std::vector<int64_t>{1, n, n} : shape);
  std::string last = "x";
  for (int i = 0; i < times; ++i) {
    const std::string out = i + 1 == times ? "y" : "m" + std::to_string(i);
    b.node("MatMul", {last, "x"}, {out});
    last = out;
  }
  b.output("y", shape.empty() ? std::vector<int64_t>{1, n, n} : shape);
  return b.save(file);
}

class BenchFormsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::make_temp_dir("rung-bench-forms");
    test::make_plugin_dir(dir_);
    light_ = matmul_model(dir_ / "light.onnx", 128, 1);
    heavy_ = matmul_model(dir_ / "heavy.onnx", 128, 6);
  }
  void TearDown() override { fs::remove_all(dir_); }

  BenchOptions options() {
    BenchOptions o;
    o.rungs = {kSim};
    o.warmup = 2;
    o.runs = 30;
    o.runtimes.explicit_dir = test::runtime_dir("1.30.0");
    o.runtimes.include_default_locations = false;
    o.runtimes.read_environment = false;
    o.hardware_root = test::fixtures_dir() / "hardware" / "cpu-vm";
    o.plugin_dirs = {dir_ / "plugins"};
    o.worker = test::worker_path();
    o.deadline = std::chrono::seconds(60);
    return o;
  }

  fs::path dir_, light_, heavy_;
};

const BenchRow* row(const BenchModelReport& m, const std::string& form, const std::string& rung) {
  for (const auto& r : m.rows) {
    if (r.model_form == form && r.rung == rung) return &r;
  }
  return nullptr;
}

void expect_ordered(const std::optional<PairedRatio>& p, const std::string& what) {
  ASSERT_TRUE(p) << what;
  EXPECT_GT(p->pairs, 0) << what;
  EXPECT_LE(p->low, p->ratio) << what;
  EXPECT_LE(p->ratio, p->high) << what;
  EXPECT_GT(p->low, 0) << what;
}

TEST_F(BenchFormsTest, TwoFilesOfOneNameAreOneModelWithARowPerFormAndRung) {
  auto o = options();
  o.models = {{"mm", light_, {}}, {"mm", heavy_, {}, "slow"}};
  auto rep = run_bench(o);
  ASSERT_TRUE(rep) << rep.error().message;
  ASSERT_EQ(rep->models.size(), 1u);
  const auto& m = rep->models[0];
  EXPECT_EQ(m.name, "mm");
  ASSERT_EQ(m.forms.size(), 2u);
  EXPECT_EQ(m.forms[0].label, "f32");  // unlabelled: the file's numeric form
  EXPECT_EQ(m.forms[1].label, "slow");
  EXPECT_EQ(m.path.filename(), "light.onnx");  // the model's facts are its f32 form's
  ASSERT_EQ(m.rows.size(), 4u);              // 2 forms × (CPU, the simulated accelerator)
  for (const char* rung : {"cpu", kSim}) {
    const BenchRow* f32 = row(m, "f32", rung);
    const BenchRow* slow = row(m, "slow", rung);
    ASSERT_NE(f32, nullptr) << rung;
    ASSERT_NE(slow, nullptr) << rung;
    ASSERT_TRUE(f32->ok && slow->ok) << f32->failure_reason << slow->failure_reason;
    // The f32 form against itself: every pair is 1.
    ASSERT_TRUE(f32->x_f32);
    EXPECT_EQ(f32->x_f32->ratio, 1.0);
    EXPECT_EQ(f32->x_f32->low, 1.0);
    EXPECT_EQ(f32->x_f32->high, 1.0);
    EXPECT_EQ(f32->x_f32->pairs, 30);
    // The other form: its time over the f32 form's, with an interval that holds it.
    expect_ordered(slow->x_f32, std::string("x_f32 ") + rung);
    const double p50_ratio = slow->latency.p50 / f32->latency.p50;
    EXPECT_GE(p50_ratio, slow->x_f32->low * 0.9) << rung;  // the ratio of medians, not the median ratio: a margin for that
    EXPECT_LE(p50_ratio, slow->x_f32->high * 1.1) << rung;
    EXPECT_GT(slow->x_f32->ratio, 1.3) << "six MatMuls against one";
    expect_ordered(f32->x_floor, std::string("x_floor f32 ") + rung);
    expect_ordered(slow->x_floor, std::string("x_floor slow ") + rung);
    EXPECT_EQ(f32->ratio_to_floor, f32->x_floor->ratio);
  }
  // The floor of each form is its own floor.
  EXPECT_EQ(row(m, "slow", "cpu")->x_floor->ratio, 1.0);
  EXPECT_EQ(row(m, "slow", "cpu")->match, OutputMatch::kReference);

  // The record holds the model once, both forms, every row naming its form.
  auto j = nlohmann::json::parse(bench_record_json(*rep, m, "rung bench"));
  EXPECT_EQ(j["model"]["name"], "mm");
  ASSERT_EQ(j["model"]["forms"].size(), 2u);
  EXPECT_EQ(j["model"]["forms"][1]["file"], "heavy.onnx");
  const auto& rows = j["measurements"][0]["rows"];
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[2]["model_form"], "slow");
  for (const auto& r : rows) {
    EXPECT_LE(r["x_floor"]["ratio_low"].get<double>(), r["x_floor"]["ratio"].get<double>());
    EXPECT_LE(r["x_floor"]["ratio"].get<double>(), r["x_floor"]["ratio_high"].get<double>());
    EXPECT_LE(r["x_f32"]["ratio_low"].get<double>(), r["x_f32"]["ratio_high"].get<double>());
  }
}

TEST_F(BenchFormsTest, AModelWithoutAnF32FormHasNoTimesF32) {
  auto o = options();
  o.rungs = {"cpu"};
  o.runs = 3;
  o.models = {{"mm", light_, {}, "a"}, {"mm", heavy_, {}, "b"}};
  auto rep = run_bench(o);
  ASSERT_TRUE(rep) << rep.error().message;
  ASSERT_EQ(rep->models.size(), 1u);
  for (const auto& r : rep->models[0].rows) {
    EXPECT_FALSE(r.x_f32) << r.model_form;
    EXPECT_TRUE(r.x_floor) << r.model_form;
  }
}

TEST_F(BenchFormsTest, TwoFilesOfOneFormAreRefusedNamingTheLabelToGive) {
  auto o = options();
  o.models = {{"mm", light_, {}}, {"mm", heavy_, {}}};
  auto rep = run_bench(o);
  ASSERT_FALSE(rep);
  EXPECT_EQ(rep.error().code, ErrorCode::kInvalidArgument);
  EXPECT_THAT(rep.error().message, HasSubstr("are both its 'f32' form"));
  EXPECT_THAT(rep.error().message, HasSubstr("NAME:FORM=PATH"));
}

TEST(InputShapeParse, EachBoundary) {
  auto ok = parse_input_shape("x=1x3x640x640");
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_EQ(ok->input, "x");
  EXPECT_EQ(ok->dims, (std::vector<int64_t>{1, 3, 640, 640}));
  auto one = parse_input_shape("a=b=7");  // the last '=' separates: an input name may hold '='
  ASSERT_TRUE(one);
  EXPECT_EQ(one->input, "a=b");
  EXPECT_EQ(one->dims, (std::vector<int64_t>{7}));
  EXPECT_TRUE(parse_input_shape("x=2147483647"));
  for (const auto& [text, why] : std::vector<std::pair<std::string, std::string>>{
           {"x", "no '='"},
           {"=1x2", "no input name"},
           {"x=", "no dimensions"},
           {"x=1x0", "must be at least 1"},
           {"x=1x-3", "not a positive whole number"},
           {"x=1xabc", "not a positive whole number"},
           {"x=1x2.5", "not a positive whole number"},
           {"x=1xx2", "an empty dimension"},
           {"x=2147483648", "too large"},
           {"x=99999999999", "too large"}}) {
    auto r = parse_input_shape(text);
    ASSERT_FALSE(r) << text;
    EXPECT_THAT(r.error().message, HasSubstr(why)) << text;
    EXPECT_THAT(r.error().message, HasSubstr("shape " + text)) << text;
  }
}

TEST(InputShapeApply, SetsDynamicAxesAndChecksTheRest) {
  const std::vector<DeclaredInput> inputs = {{"x", {1, 3, -1, -1}, 4}, {"sr", {}, 8}};
  InputSpec spec;
  ASSERT_TRUE(apply_input_shape(spec, *parse_input_shape("x=1x3x640x480"), inputs));
  EXPECT_EQ(spec.dims.at("x:2"), 640);
  EXPECT_EQ(spec.dims.at("x:3"), 480);
  EXPECT_EQ(spec.dims.count("x:0"), 0u);  // fixed axes are the model's own

  auto refused = [&](const std::string& text, std::uint64_t max_bytes = kDefaultMaxTensorBytes) {
    InputSpec s;
    s.max_tensor_bytes = max_bytes;
    auto st = apply_input_shape(s, *parse_input_shape(text), inputs);
    if (!st) {
      EXPECT_TRUE(s.dims.empty()) << text;  // refused: nothing set
    }
    return st ? std::string() : st.error().message;
  };
  EXPECT_THAT(refused("y=1x3x4x4"), HasSubstr("no input 'y' (its inputs: x, sr)"));
  EXPECT_THAT(refused("x=1x3x4"), HasSubstr("input 'x' has rank 4, not 3"));
  EXPECT_THAT(refused("x=1x3x4x4x1"), HasSubstr("rank 4, not 5"));
  EXPECT_THAT(refused("x=2x3x4x4"), HasSubstr("axis 0 of input 'x' is fixed at 1, not 2"));
  // The element limit: 1 MiB of float32 is 262144 elements; one more is refused.
  EXPECT_EQ(refused("x=1x3x256x341", 1 << 20), "");  // 261888 elements
  EXPECT_THAT(refused("x=1x3x512x512", 1 << 20), ::testing::EndsWith("more than the 1 MiB allowed"));
  InputSpec exact;
  exact.max_tensor_bytes = 1 << 20;
  EXPECT_TRUE(apply_input_shape(exact, *parse_input_shape("x=1x1x512x512"), {{"x", {1, 1, -1, -1}, 4}}));  // exactly 1 MiB
  EXPECT_FALSE(apply_input_shape(exact, *parse_input_shape("x=1x1x512x513"), {{"x", {1, 1, -1, -1}, 4}}));
}

TEST_F(BenchFormsTest, ShapeSetsTheInputAndIsCheckedAgainstEveryModel) {
  const fs::path dynamic = matmul_model(dir_ / "dynamic.onnx", 0, 1, {1, -1, -1});
  auto o = options();
  o.rungs = {"cpu"};
  o.runs = 2;
  o.models = {{"dyn", dynamic, {}}};
  o.shapes = {*parse_input_shape("x=1x24x24")};
  auto rep = run_bench(o);
  ASSERT_TRUE(rep) << rep.error().message;
  EXPECT_THAT(rep->models[0].inputs_described, HasSubstr("x float32 [1, 24, 24]"));

  o.shapes = {*parse_input_shape("nope=1x24x24")};
  auto unknown = run_bench(o);
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code, ErrorCode::kInvalidArgument);
  EXPECT_THAT(unknown.error().message, HasSubstr("no input 'nope'"));

  o.shapes = {*parse_input_shape("x=24x24")};
  auto rank = run_bench(o);
  ASSERT_FALSE(rank);
  EXPECT_THAT(rank.error().message, HasSubstr("input 'x' has rank 3, not 2"));
}

}  // namespace
}  // namespace rung
