// Which form each model loads on each rung, and the identity that follows:
// the rules for rungs that cannot run on this machine (TensorRT, QNN).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "rungs/forms.h"
#include "engine/placement.h"
#include "rung/model.h"

namespace rung {
namespace {
using ::testing::HasSubstr;

PlacementSnapshot on(const std::string& chosen, const std::vector<std::string>& below) {
  PlacementSnapshot s;
  s.chosen = *find_rung(chosen);
  for (const auto& b : below) s.below.push_back(*find_rung(b));
  return s;
}

ModelRegistration model(const std::string& name, Role role, std::vector<DerivedForm> derived = {}) {
  return {name, role, "/models/" + name + ".onnx", std::move(derived), {}, {}};
}

TEST(ModelIdTest, NamesTheArithmeticNotTheDevice) {
  EXPECT_EQ(model_id("ppocr_det_v4", NumericForm::kF32), "ppocr_det_v4");
  EXPECT_EQ(model_id("ppocr_det_v4", NumericForm::kF16), "ppocr_det_v4_f16");
  EXPECT_EQ(model_id("ppocr_det_v4", NumericForm::kInt8), "ppocr_det_v4_i8");
  EXPECT_EQ(model_id("ppocr_det_v4", NumericForm::kA16W8), "ppocr_det_v4_a16w8");
  EXPECT_EQ(model_id("ppocr_det_v4", NumericForm::kA16W16), "ppocr_det_v4_a16w16");
  EXPECT_EQ(model_id("ppocr_cls", NumericForm::kW8), "ppocr_cls_w8");
  EXPECT_EQ(model_id("ppocr_cls_w8", NumericForm::kW8), "ppocr_cls_w8");
}

TEST(ModelIdTest, ANameThatAlreadyEndsInItsFormNamesItOnce) {
  // The file rung quantise writes is ppocr_cls_a16w8.onnx: bench names it by its stem and its graph's form.
  EXPECT_EQ(model_id("ppocr_cls_a16w8", NumericForm::kA16W8), "ppocr_cls_a16w8");
  EXPECT_EQ(model_id("ppocr_cls_i8", NumericForm::kInt8), "ppocr_cls_i8");
  // Another form's suffix, or the form's letters without their separator, are part of the name.
  EXPECT_EQ(model_id("ppocr_cls_a16w8", NumericForm::kA16W16), "ppocr_cls_a16w8_a16w16");
  EXPECT_EQ(model_id("ppocr_cls_a16w16", NumericForm::kA16W8), "ppocr_cls_a16w16_a16w8");
  EXPECT_EQ(model_id("ppocr_clsa16w8", NumericForm::kA16W8), "ppocr_clsa16w8_a16w8");
  EXPECT_EQ(model_id("_a16w8", NumericForm::kA16W8), "_a16w8_a16w8");
  EXPECT_EQ(model_id("ppocr_cls_i8", NumericForm::kF32), "ppocr_cls_i8");
}

TEST(PlacementTest, TensorRtBuildsAnFp16EngineForADetectorAndF32ForAnEmbedder) {
  auto s = on("tensorrt", {"cuda", "cpu"});
  s.engines["det"] = "/cache/engines/x/fp16/det.onnx";
  s.engines["emb"] = "/cache/engines/x/f32/emb.onnx";
  auto det = placements(model("det", Role::kDetector), s);
  EXPECT_EQ(det[0].rung.name, "tensorrt");
  EXPECT_EQ(det[0].form, NumericForm::kF16);
  EXPECT_EQ(model_id("det", det[0].form), "det_f16");
  auto emb = placements(model("emb", Role::kEmbedder), s);
  EXPECT_EQ(emb[0].rung.name, "tensorrt");
  EXPECT_EQ(emb[0].form, NumericForm::kF32);
  EXPECT_THAT(emb[0].reason, HasSubstr("built f32 for an embedder"));
  EXPECT_TRUE(builds_fp16(*find_rung("tensorrt"), Role::kDetector));
  EXPECT_FALSE(builds_fp16(*find_rung("tensorrt"), Role::kEmbedder));
}

TEST(PlacementTest, AnEngineBuiltFromARewrittenGraphSaysWhatChanged) {
  auto s = on("tensorrt", {"cuda", "cpu"});
  s.engines["vad"] = "/cache/engines/x/f32/vad.onnx";
  s.engines["emb"] = "/cache/engines/x/f32/emb.onnx";
  s.engine_rewrites["vad"] = "3 constants lifted out of 2 subgraphs";
  s.engine_rewrites["emb"] = "1 value only subgraphs read given an outer reader";
  EXPECT_EQ(placements(model("vad", Role::kDetector), s)[0].reason,
            "the chosen rung's engine, built from a rewritten graph (3 constants lifted out of 2 subgraphs)");
  EXPECT_EQ(placements(model("emb", Role::kEmbedder), s)[0].reason,
            "the chosen rung's engine, built f32 for an embedder, built from a rewritten graph (1 value only subgraphs read given "
            "an outer reader)");
  EXPECT_EQ(placements(model("det", Role::kDetector), on("tensorrt", {"cuda", "cpu"}))[0].reason.find("rewritten"),
            std::string::npos);
}

TEST(PlacementTest, UntilTheEngineLandsCudaServesUnderTensorRt) {
  auto p = placements(model("det", Role::kDetector), on("tensorrt", {"cuda", "cpu"}));
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].rung.name, "cuda");
  EXPECT_EQ(p[0].file, "/models/det.onnx");
  EXPECT_THAT(p[0].reason, HasSubstr("engine not built yet"));
  EXPECT_EQ(p[1].rung.name, "cpu");
}

TEST(PlacementTest, MigraphxFallsToTheCpuAndSaysWhyAFailedEngineDid) {
  auto s = on("migraphx", {"cpu"});
  s.engine_failures["det"] = "out of memory";
  auto p = placements(model("det", Role::kDetector), s);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].rung.name, "cpu");
  EXPECT_EQ(p[0].reason, "MIGraphX engine failed: out of memory");
}

TEST(PlacementTest, TheHexagonRunsTheQuantisedFormButNeverForAnEmbedder) {
  auto s = on("qnn-htp", {"cpu"});
  // Its engine is compiled from the quantised file (engine-source-test proves it), in that form's directory.
  s.engines["det"] = "/cache/engines/x/a16w8/det.onnx";
  auto det = placements(model("det", Role::kDetector, {{NumericForm::kA16W8, "/models/det_a16w8.onnx"}}), s);
  EXPECT_EQ(det[0].rung.name, "qnn-htp");
  EXPECT_EQ(model_id("det", det[0].form), "det_a16w8");
  auto emb = placements(model("emb", Role::kEmbedder, {{NumericForm::kInt8, "/models/emb_i8.onnx"}}), s);
  ASSERT_EQ(emb.size(), 1u);
  EXPECT_EQ(emb[0].rung.name, "cpu");
  EXPECT_EQ(emb[0].file, "/models/emb.onnx");
  EXPECT_EQ(model_id("emb", emb[0].form), "emb");
  EXPECT_THAT(emb[0].reason, HasSubstr("embedder pinned to f32"));
  // A model with no quantised form stays on the CPU's f32 file.
  auto plain = placements(model("seg", Role::kSegmenter), s);
  EXPECT_EQ(plain[0].rung.name, "cpu");
  EXPECT_THAT(plain[0].reason, HasSubstr("no quantised form"));
}

// A w8 file computes in float on int8 weights: the CPU runs it as its
// variant's form; a rung that runs quantised graphs (an NPU's) never takes it,
// whichever order the forms were registered in.
TEST(PlacementTest, AW8FormRunsOnTheCpuAndNeverOnARungThatRunsQuantisedGraphs) {
  auto m = model("cls", Role::kGeneric, {{NumericForm::kW8, "/models/cls_w8.onnx"}});
  m.rungs = {"cpu"};
  auto p = placements(m, on("cpu", {}));
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].file, "/models/cls_w8.onnx");
  EXPECT_EQ(model_id("cls", p[0].form), "cls_w8");
  EXPECT_THAT(p[0].reason, HasSubstr("its variant's w8 form"));
  EXPECT_EQ(p[1].file, "/models/cls.onnx");
  const RungSpec& npu = *find_rung("qnn-htp");
  m.rungs = {"qnn-htp"};
  EXPECT_EQ(quantised_form_for(npu, m), nullptr);
  for (bool w8_last : {true, false}) {
    m.derived = {{NumericForm::kA16W8, "/models/cls_a16w8.onnx"}};
    m.derived.insert(w8_last ? m.derived.end() : m.derived.begin(), {NumericForm::kW8, "/models/cls_w8.onnx"});
    ASSERT_NE(quantised_form_for(npu, m), nullptr);
    EXPECT_EQ(quantised_form_for(npu, m)->form, NumericForm::kA16W8);
  }
}

// A variant for the CPU in a quantised form: the CPU runs its file (the
// optimised graph built from it once landed), then the f32 file should it fail
// to open. A model whose variant is for another rung keeps the f32 file on the CPU.
TEST(PlacementTest, TheCpuRunsItsVariantsQuantisedFormThenTheF32File) {
  auto cpu_variant = [](Role role) {
    auto m = model("det", role, {{NumericForm::kInt8, "/models/det_i8.onnx"}});
    m.rungs = {"cpu"};
    return m;
  };
  auto p = placements(cpu_variant(Role::kDetector), on("cpu", {}));
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].rung.name, "cpu");
  EXPECT_EQ(p[0].file, "/models/det_i8.onnx");
  EXPECT_EQ(model_id("det", p[0].form), "det_i8");
  EXPECT_THAT(p[0].reason, HasSubstr("its variant's i8 form"));
  EXPECT_EQ(p[1].file, "/models/det.onnx");
  EXPECT_EQ(model_id("det", p[1].form), "det");
  EXPECT_THAT(p[1].reason, HasSubstr("the f32 file, below its variant's i8 form"));
  // Its optimised graph, once it has landed, is what the CPU opens first (built from the form).
  auto landed = on("cpu", {});
  landed.cpu_forms["det"] = "/cache/engines/x/cpu-ort/det-abc.ort";
  auto q = placements(cpu_variant(Role::kDetector), landed);
  EXPECT_EQ(q[0].file, "/cache/engines/x/cpu-ort/det-abc.ort");
  EXPECT_EQ(model_id("det", q[0].form), "det_i8");
  // From a chosen accelerator the variant is not for, down to the CPU and its form.
  auto below = placements(cpu_variant(Role::kDetector), on("cuda", {"cpu"}));
  ASSERT_EQ(below.size(), 2u);
  EXPECT_EQ(below[0].file, "/models/det_i8.onnx");
  EXPECT_THAT(below[0].reason, HasSubstr("CUDA is not a rung of its variant (cpu)"));
  // An embedder never, and a quantised form for another rung never on the CPU.
  auto emb = placements(cpu_variant(Role::kEmbedder), on("cpu", {}));
  ASSERT_EQ(emb.size(), 1u);
  EXPECT_EQ(emb[0].file, "/models/det.onnx");
  auto npu = model("det", Role::kDetector, {{NumericForm::kA16W8, "/models/det_a16w8.onnx"}});
  npu.rungs = {"qnn-htp"};
  auto npu_on_cpu = placements(npu, on("cpu", {}));
  ASSERT_EQ(npu_on_cpu.size(), 1u);
  EXPECT_EQ(npu_on_cpu[0].file, "/models/det.onnx");
  EXPECT_EQ(model_id("det", npu_on_cpu[0].form), "det");
}

TEST(PlacementTest, ACompilingRungBelowTheChosenOneNeverServesTheF32FileDirectly) {
  // CoreML compiles its models and takes the f32 file; below the chosen rung no engine of it
  // is built, so serving from it would compile inside a job: it is passed over for the CPU.
  auto p = placements(model("x", Role::kGeneric), on("webgpu", {"coreml", "cpu"}));
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].rung.name, "webgpu");
  EXPECT_EQ(p[1].rung.name, "cpu");
  // A rung that compiles nothing, in the same place, serves it.
  auto cuda = placements(model("x", Role::kGeneric), on("tensorrt", {"cuda", "cpu"}));
  ASSERT_EQ(cuda.size(), 2u);
  EXPECT_EQ(cuda[0].rung.name, "cuda");
}

TEST(PlacementTest, AnFp16FormIsNoQuantisedForm) {
  auto s = on("qnn-htp", {"cpu"});
  s.engines["seg"] = "/cache/engines/x/f16/seg.onnx";
  auto p = placements(model("seg", Role::kSegmenter, {{NumericForm::kF16, "/models/seg_f16.onnx"}}), s);
  ASSERT_FALSE(p.empty());
  EXPECT_EQ(p[0].rung.name, "cpu");
  EXPECT_EQ(p[0].file, "/models/seg.onnx");
  EXPECT_THAT(p[0].reason, HasSubstr("no quantised form"));
}

TEST(PlacementTest, NonCompilingRungsServeTheF32File) {
  auto p = placements(model("x", Role::kGeneric), on("webgpu", {"cpu"}));
  EXPECT_EQ(p[0].rung.name, "webgpu");
  EXPECT_EQ(p[0].file, "/models/x.onnx");
  EXPECT_EQ(p.back().rung.name, "cpu");
}

TEST(PlacementTest, TheCpuUsesItsCachedOptimisedGraphWhenThere) {
  auto s = on("cpu", {"cpu"});
  s.cpu_forms["x"] = "/cache/engines/x/cpu-ort/x.ort";
  auto p = placements(model("x", Role::kGeneric), s);
  EXPECT_EQ(p[0].file, "/cache/engines/x/cpu-ort/x.ort");
  EXPECT_EQ(p[0].form, NumericForm::kF32);
}

}  // namespace
}  // namespace rung

namespace rung {
namespace {

// A resolved variant names its rungs: a chosen rung it does not name, or a rung below that it does not
// name, never loads it; the CPU always serves the model's f32 file.
TEST(PlacementTest, AModelRegisteredForSomeRungsRunsOnlyThereAndOnTheCpu) {
  auto s = on("tensorrt", {"cuda", "cpu"});
  s.engines["det"] = "/cache/engines/x/fp16/det.onnx";
  auto det = model("det", Role::kDetector);
  det.rungs = {"cuda"};
  auto p = placements(det, s);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].rung.name, "cuda");
  EXPECT_EQ(p[0].file, "/models/det.onnx");
  EXPECT_EQ(p[0].reason, "TensorRT is not a rung of its variant (cuda)");
  EXPECT_EQ(p[1].rung.name, "cpu");
  det.rungs = {"webgpu"};
  p = placements(det, s);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].rung.name, "cpu");
  det.rungs = {"tensorrt"};
  EXPECT_EQ(placements(det, s)[0].rung.name, "tensorrt");
}

}  // namespace
}  // namespace rung
