// Models with control flow through ONNX Runtime's compile API. Each fault of
// the build rung uses is reproduced on a minimal model built here and compiled
// with the simulated accelerator: it must fail without the compile-ready
// rewrite (graph/compile_ready.h) and compile, load and compute the model's
// outputs with it. When a build fixes a fault, its test fails and says that the
// rewrite can be retired for it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <fstream>
#include <optional>

#include "graph/compile_ready.h"
#include "jobs/compile.h"
#include "model_builder.h"
#include "parity_test_support.h"
#include "rung/engine_core.h"
#include "rung/tolerance.h"
#include "runtime/plugin_rungs.h"
#include "session/inputs.h"
#include "session/session.h"
#include "test_support.h"

namespace rung {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;
using test::ElemType;
using test::ModelBuilder;

std::vector<float> filled(int n, float first) {
  std::vector<float> v(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = first + 0.125f * static_cast<float>(i);
  return v;
}

// A branch computing `op`(x, `operand`) into `out`; `constant` (when given) is the branch's own initializer.
std::unique_ptr<ModelBuilder> branch(const std::string& op, const std::string& operand, const std::string& out, int n,
                                     std::optional<std::vector<float>> constant = std::nullopt) {
  auto b = std::make_unique<ModelBuilder>();
  if (constant) b->initializer(operand, {1, n}, *constant);
  b->node(op, {"x", operand}, {out}).output(out, {1, n});
  return b;
}

// The shape every reproduction shares: z = x + x for the simulated accelerator
// (so the compile API writes an EPContext model) and y = If(c) { x * a } else { x - b }.
ModelBuilder& if_model(ModelBuilder& m, int n, const ModelBuilder& then_branch, const ModelBuilder& else_branch,
                       bool z_is_output = true) {
  m.input("x", {1, n}).input("c", {}, ElemType::Bool);
  m.node("Add", {"x", "x"}, {"z"});
  m.node("If", {"c"}, {"y"}, {{"then_branch", &then_branch}, {"else_branch", &else_branch}});
  m.output("y", {1, n});
  if (z_is_output) m.output("z", {1, n});
  return m;
}

// ONNX Runtime issue 32131: an initializer of the main graph that only the branches read.
fs::path write_outer_initializer_model(const fs::path& file) {
  auto then_branch = branch("Mul", "w", "t", 4);
  auto else_branch = branch("Sub", "w", "e", 4);
  ModelBuilder m;
  if_model(m, 4, *then_branch, *else_branch).initializer("w", {1, 4}, filled(4, 3.0f));
  return m.save(file);
}

// Each branch holds its own constant of `n` floats.
fs::path write_branch_constants_model(const fs::path& file, int n) {
  auto then_branch = branch("Mul", "kt", "t", n, filled(n, 2.0f));
  auto else_branch = branch("Sub", "ke", "e", n, filled(n, 0.5f));
  ModelBuilder m;
  return if_model(m, n, *then_branch, *else_branch).save(file);
}

// y = Loop 3 times { v = v * k + x } from v = x, with k the body's own constant (ONNX's loop11 has one).
fs::path write_loop_model(const fs::path& file) {
  ModelBuilder body;
  body.input("i", {}, ElemType::Int64)
      .input("cond_in", {}, ElemType::Bool)
      .input("v", {1, 4})
      .initializer("k", {1, 4}, filled(4, 0.5f))
      .node("Identity", {"cond_in"}, {"cond_out"})
      .node("Mul", {"v", "k"}, {"vk"})
      .node("Add", {"vk", "x"}, {"v_next"})
      .output("cond_out", {}, ElemType::Bool)
      .output("v_next", {1, 4});
  ModelBuilder m;
  m.input("x", {1, 4}).input("c", {}, ElemType::Bool);
  m.initializer_int64("trip", {}, {3});
  m.node("Add", {"x", "x"}, {"z"});
  m.node("Loop", {"trip", "", "x"}, {"y"}, {{"body", &body}});
  m.output("y", {1, 4}).output("z", {1, 4});
  return m.save(file);
}

// The branches read z, which the simulated accelerator compiles, and nothing outside reads it.
fs::path write_compiled_value_model(const fs::path& file) {
  auto then_branch = std::make_unique<ModelBuilder>();
  then_branch->node("Mul", {"z", "x"}, {"t"}).output("t", {1, 4});
  auto else_branch = std::make_unique<ModelBuilder>();
  else_branch->node("Sub", {"z", "x"}, {"e"}).output("e", {1, 4});
  ModelBuilder m;
  return if_model(m, 4, *then_branch, *else_branch, /*z_is_output=*/false).save(file);
}

// The outer-initializer model with one more output, (x - x) / (x - x): NaN whatever the inputs.
fs::path write_nan_model(const fs::path& file) {
  auto then_branch = branch("Mul", "w", "t", 4);
  auto else_branch = branch("Sub", "w", "e", 4);
  ModelBuilder m;
  if_model(m, 4, *then_branch, *else_branch).initializer("w", {1, 4}, filled(4, 3.0f));
  m.node("Sub", {"x", "x"}, {"zero"}).node("Div", {"zero", "zero"}, {"nan"}).output("nan", {1, 4});
  return m.save(file);
}

Tensor boolean(const std::string& name, bool value) {
  Tensor t;
  t.name = name;
  t.type = ElementType::kBool;
  t.bytes = {std::byte{value ? std::uint8_t{1} : std::uint8_t{0}}};
  return t;
}

std::vector<Tensor> inputs_for(int n, bool c) { return {test::float_tensor("x", {1, n}, filled(n, -1.0f)), boolean("c", c)}; }

class CompileReadyTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // The build rung itself would take from the fetched ones: the newest.
    RuntimeSearchOptions o;
    o.explicit_dir = test::deps_dir() / "runtimes";
    o.include_default_locations = false;
    o.read_environment = false;
    auto found = discover_runtimes(o, Hardware{});
    ASSERT_TRUE(found) << found.error().message;
    build_ = *found->chosen_build();
    auto process = OrtProcess::install(build_);
    ASSERT_TRUE(process) << process.error().message;
    process_ = *process;
  }

  void SetUp() override {
    dir_ = test::make_temp_dir("rung-compile-ready");
    auto rungs = plugin_rungs({test::make_plugin_dir(dir_)});
    ASSERT_TRUE(rungs) << rungs.error().message;
    ASSERT_EQ(rungs->size(), 1u);
    sim_ = (*rungs)[0];
  }
  void TearDown() override { fs::remove_all(dir_); }

  struct Compiled {
    bool ok = false;
    std::string error;    // where it failed ("compile: ...", "load: ...")
    std::string rewrite;  // what the rewrite changed
    fs::path engine;
  };

  // Through the compile job as the engine runs it, then a session on what it wrote.
  Compiled compile_and_load(const fs::path& model, bool rewrite, const InputSpec& inputs = {}) {
    const fs::path out = dir_ / (model.stem().string() + (rewrite ? "-rewritten" : "-plain"));
    fs::create_directories(out / "provider");
    CompileJob job;
    job.target.runtime_library = build_.library;
    job.target.model = model;
    job.target.rung = sim_;
    job.output = out / "engine.onnx";
    job.provider_cache_dir = out / "provider";
    if (rewrite) job.rewritten = out / "rewritten.onnx";
    job.inputs = inputs;
    job.seed = 7;
    CompileResult r = run_compile_job(job);
    if (!r.ok) return {false, "compile: " + r.error, {}, {}};
    std::string rewritten = read_rewrite_note(job.rewritten);
    SessionSettings settings;
    settings.rung = sim_;
    auto session = open_session(*process_, job.output, settings);
    if (!session) return {false, "load: " + session.error().message, rewritten, job.output};
    return {true, {}, rewritten, job.output};
  }

  // The fault without the rewrite (or the news that this build no longer has it); with it, an engine computing the model.
  void reproduce_and_fix(const fs::path& model, int n, const std::string& signature, const std::string& fixed_by_build,
                         const std::string& rewrite) {
    auto plain = compile_and_load(model, false);
    if (plain.ok) {
      ADD_FAILURE() << fmt::format("ONNX Runtime {} no longer {}: the rewrite can be retired for it", build_.version, fixed_by_build);
    } else {
      EXPECT_THAT(plain.error, HasSubstr(signature));
    }
    auto fixed = compile_and_load(model, true);
    ASSERT_TRUE(fixed.ok) << fixed.error;
    EXPECT_EQ(fixed.rewrite, rewrite);
    expect_same_outputs(model, fixed.engine, n);
  }

  Result<std::vector<Tensor>> run(const fs::path& model, const RungSpec& rung, const std::vector<Tensor>& inputs) {
    SessionSettings settings;
    settings.rung = rung;
    auto session = open_session(*process_, model, settings);
    if (!session) return session.error();
    return run_session(*session, inputs);
  }

  // The engine computes exactly what the model computes on the CPU, down either branch.
  void expect_same_outputs(const fs::path& model, const fs::path& engine, int n) {
    for (bool c : {true, false}) {
      auto want = run(model, RungSpec{}, inputs_for(n, c));
      auto got = run(engine, sim_, inputs_for(n, c));
      ASSERT_TRUE(want) << want.error().message;
      ASSERT_TRUE(got) << got.error().message;
      auto compared = compare_outputs(*want, *got, Tolerance::exact());
      EXPECT_TRUE(compared.faithful()) << "c=" << c << ": " << compared.first_problem();
    }
  }

  static inline RuntimeBuild build_;
  static inline OrtProcess* process_ = nullptr;
  fs::path dir_;
  RungSpec sim_;
};

TEST_F(CompileReadyTest, AnOuterInitializerOnlyBranchesReadIsDroppedUnlessAnOuterNodeReadsIt) {
  reproduce_and_fix(write_outer_initializer_model(dir_ / "outer.onnx"), 4, "input 'w' of node",
                    "drops an outer initializer only subgraphs read (issue 32131)",
                    "1 value only subgraphs read given an outer reader");
}

TEST_F(CompileReadyTest, ABranchConstantOf128BytesFailsTheCompileWithAnInMemoryMarker) {
  reproduce_and_fix(write_branch_constants_model(dir_ / "big.onnx", 32), 32, "references an ORT in-memory address marker",
                    "copies a subgraph's 128-byte initializer as an in-memory address marker",
                    "2 constants lifted out of 2 subgraphs; 2 values only subgraphs read given an outer reader");
}

TEST_F(CompileReadyTest, ABranchConstantUnder128BytesIsWrittenTwiceAndTheEngineDoesNotLoad) {
  reproduce_and_fix(write_branch_constants_model(dir_ / "small.onnx", 31), 31, "initializer name is not unique",
                    "writes a subgraph's initializer twice into the compiled model",
                    "2 constants lifted out of 2 subgraphs; 2 values only subgraphs read given an outer reader");
}

TEST_F(CompileReadyTest, ALoopBodyConstantIsWrittenTwiceAndTheEngineDoesNotLoad) {
  reproduce_and_fix(write_loop_model(dir_ / "loop.onnx"), 4, "k initializer name is not unique",
                    "writes a Loop body's initializer twice into the compiled model",
                    "1 constant lifted out of 1 subgraph; 1 value only subgraphs read given an outer reader");
}

TEST_F(CompileReadyTest, AValueOnlyBranchesReadLosesItsTypeWhenAPluginCompilesItsProducer) {
  reproduce_and_fix(write_compiled_value_model(dir_ / "typed.onnx"), 4, "output arg (z) type inference failed",
                    "loses the type of a compiled node's output that only subgraphs read",
                    "1 value only subgraphs read given an outer reader");
}

TEST_F(CompileReadyTest, AModelWithoutControlFlowCompilesAsItIs) {
  auto model = test::write_elementwise_model(dir_ / "plain.onnx", {1, 4});
  auto compiled = compile_and_load(model, true);
  ASSERT_TRUE(compiled.ok) << compiled.error;
  EXPECT_EQ(compiled.rewrite, "");
  EXPECT_FALSE(fs::exists(dir_ / "plain-rewritten" / "rewritten.onnx"));
}

// The Silero VAD files hit the faults above (the first three); their engines compute what the CPU computes.
TEST_F(CompileReadyTest, EverySileroVadEngineComputesWhatTheCpuComputes) {
  auto spec = InputSpec::from_json_file(test::fixtures_dir().parent_path().parent_path() / "specs" / "silero_vad.json");
  ASSERT_TRUE(spec) << spec.error().message;
  // The half-precision export takes no sample rate: a spec may name only inputs its model has.
  InputSpec without_rate = *spec;
  without_rate.values.erase("sr");
  for (const char* name : {"silero_vad", "silero_vad_half", "silero_vad_16k_op15", "silero_vad_op18_ifless"}) {
    const fs::path model = test::model_path(fmt::format("silero-vad/{}.onnx", name));
    const InputSpec& its_spec = std::string(name) == "silero_vad_half" ? without_rate : *spec;
    auto compiled = compile_and_load(model, true, its_spec);
    ASSERT_TRUE(compiled.ok) << name << ": " << compiled.error;
    EXPECT_THAT(compiled.rewrite, HasSubstr("values only subgraphs read given an outer reader")) << name;
    auto cpu = open_session(*process_, model, SessionSettings{});
    ASSERT_TRUE(cpu) << cpu.error().message;
    auto inputs = make_inputs(describe_session(*cpu), its_spec, 7);
    ASSERT_TRUE(inputs) << inputs.error().message;
    auto want = run_session(*cpu, *inputs);
    auto got = run(compiled.engine, sim_, *inputs);
    ASSERT_TRUE(want && got) << name;
    auto compared = compare_outputs(*want, *got, Tolerance::close());
    EXPECT_TRUE(compared.faithful()) << name << ": " << compared.first_problem();
  }
}

// A rewrite is used only when it is proved equal; NaN never equals NaN, so a model whose outputs are NaN cannot be.
TEST_F(CompileReadyTest, ARewriteThatIsNotProvedEqualIsNotUsedAndSaysWhy) {
  auto model = write_nan_model(dir_ / "nan.onnx");
  auto compiled = compile_and_load(model, true);
  ASSERT_FALSE(compiled.ok);
  EXPECT_THAT(compiled.error, HasSubstr("rewritten graph not used, its outputs differ from the model's: output 'nan'"));
  EXPECT_THAT(compiled.error, HasSubstr("NaN"));
  EXPECT_FALSE(fs::exists(dir_ / "nan-rewritten" / "rewritten.onnx"));
}

// --- The rewrite itself, on the graph.

struct Counts {
  int subgraph_constants = 0;  // initializers and Constant nodes inside subgraphs
  int main_initializers = 0;
  int readers = 0;
};

void count_subgraph_constants(const onnx::GraphProto& g, int& out) {
  for (const auto& n : g.node()) {
    for (const auto& a : n.attribute()) {
      if (!a.has_g()) continue;
      out += a.g().initializer_size();
      for (const auto& inner : a.g().node()) out += inner.op_type() == "Constant" ? 1 : 0;
      count_subgraph_constants(a.g(), out);
    }
  }
}

Counts counts_of(const fs::path& file) {
  auto model = test::load_model(file);
  Counts c;
  count_subgraph_constants(model.graph(), c.subgraph_constants);
  c.main_initializers = model.graph().initializer_size();
  for (const auto& n : model.graph().node()) c.readers += n.op_type() == "Identity" ? 1 : 0;
  return c;
}

TEST_F(CompileReadyTest, AModelWithoutSubgraphsIsNotRewritten) {
  auto model = test::write_elementwise_model(dir_ / "plain.onnx", {1, 4});
  auto r = write_compile_ready(model, dir_ / "out.onnx");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_FALSE(r->changed());
  EXPECT_EQ(r->describe(), "unchanged");
  EXPECT_FALSE(fs::exists(dir_ / "out.onnx"));
}

TEST_F(CompileReadyTest, EveryConstantOfEveryDepthGoesToTheMainGraph) {
  // then: Mul(x, kt) with kt an initializer; else: an If nested in it whose branches hold a Constant node each.
  auto then_branch = branch("Mul", "kt", "t", 4, filled(4, 2.0f));
  ModelBuilder inner_then, inner_else;
  inner_then.constant("ka", {1, 4}, filled(4, 1.0f)).node("Add", {"x", "ka"}, {"ia"}).output("ia", {1, 4});
  inner_else.constant("kb", {1, 4}, filled(4, 4.0f)).node("Add", {"x", "kb"}, {"ib"}).output("ib", {1, 4});
  ModelBuilder else_branch;
  else_branch.node("Not", {"c"}, {"nc"})
      .node("If", {"nc"}, {"e"}, {{"then_branch", &inner_then}, {"else_branch", &inner_else}})
      .output("e", {1, 4});
  ModelBuilder m;
  auto model = if_model(m, 4, *then_branch, else_branch).save(dir_ / "nested.onnx");
  auto r = write_compile_ready(model, dir_ / "out.onnx");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->constants_lifted, 3);
  EXPECT_EQ(r->subgraphs, 3);
  auto after = counts_of(dir_ / "out.onnx");
  EXPECT_EQ(after.subgraph_constants, 0);
  EXPECT_EQ(after.main_initializers, 1);  // kt; ka and kb are Constant nodes now in the main graph
  EXPECT_EQ(after.readers, 3);
  auto want = run(model, RungSpec{}, inputs_for(4, false));
  auto got = run(dir_ / "out.onnx", RungSpec{}, inputs_for(4, false));
  ASSERT_TRUE(want && got);
  EXPECT_TRUE(compare_outputs(*want, *got, Tolerance::exact()).faithful());
}

TEST_F(CompileReadyTest, BranchesUsingOneNameForTwoConstantsKeepEachItsOwn) {
  auto then_branch = branch("Mul", "k", "t", 4, filled(4, 2.0f));
  auto else_branch = branch("Mul", "k", "e", 4, filled(4, -3.0f));
  ModelBuilder m;
  auto model = if_model(m, 4, *then_branch, *else_branch).save(dir_ / "same-name.onnx");
  auto r = write_compile_ready(model, dir_ / "out.onnx");
  ASSERT_TRUE(r) << r.error().message;
  auto lifted = test::load_model(dir_ / "out.onnx");
  ASSERT_EQ(lifted.graph().initializer_size(), 2);
  EXPECT_NE(lifted.graph().initializer(0).name(), lifted.graph().initializer(1).name());
  for (bool c : {true, false}) {
    auto want = run(model, RungSpec{}, inputs_for(4, c));
    auto got = run(dir_ / "out.onnx", RungSpec{}, inputs_for(4, c));
    ASSERT_TRUE(want && got);
    EXPECT_TRUE(compare_outputs(*want, *got, Tolerance::exact()).faithful()) << "c=" << c;
  }
}

TEST_F(CompileReadyTest, ABranchReturningItsConstantStillReturnsIt) {
  ModelBuilder then_branch;
  then_branch.initializer("t", {1, 4}, filled(4, 9.0f)).output("t", {1, 4});
  auto else_branch = branch("Sub", "w", "e", 4, filled(4, 1.0f));
  ModelBuilder m;
  auto model = if_model(m, 4, then_branch, *else_branch).save(dir_ / "returns.onnx");
  auto r = write_compile_ready(model, dir_ / "out.onnx");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->constants_lifted, 2);
  for (bool c : {true, false}) {
    auto want = run(model, RungSpec{}, inputs_for(4, c));
    auto got = run(dir_ / "out.onnx", RungSpec{}, inputs_for(4, c));
    ASSERT_TRUE(want) << want.error().message;
    ASSERT_TRUE(got) << got.error().message;
    EXPECT_TRUE(compare_outputs(*want, *got, Tolerance::exact()).faithful()) << "c=" << c;
  }
}

TEST_F(CompileReadyTest, OnlyValuesNoOuterNodeReadsGetAReader) {
  auto then_branch = branch("Mul", "w", "t", 4);
  auto else_branch = branch("Sub", "u", "e", 4);
  ModelBuilder m;
  if_model(m, 4, *then_branch, *else_branch)
      .initializer("w", {1, 4}, filled(4, 1.0f))
      .initializer("u", {1, 4}, filled(4, 2.0f))
      .node("Add", {"z", "u"}, {"zu"})  // an outer node reads u
      .output("zu", {1, 4});
  auto model = m.save(dir_ / "readers.onnx");
  auto r = write_compile_ready(model, dir_ / "out.onnx");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->readers, 1);
  auto lifted = test::load_model(dir_ / "out.onnx");
  const auto& last = lifted.graph().node(lifted.graph().node_size() - 1);
  EXPECT_EQ(last.op_type(), "Identity");
  EXPECT_EQ(last.input(0), "w");
}

TEST_F(CompileReadyTest, ModelsItCannotRewriteAreRefusedWithTheReason) {
  auto outer = write_outer_initializer_model(dir_ / "outer.onnx");
  auto model = test::load_model(outer);
  auto* w = model.mutable_graph()->mutable_initializer(0);
  w->clear_float_data();
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* location = w->add_external_data();
  location->set_key("location");
  location->set_value("weights.bin");
  std::ofstream(dir_ / "external.onnx", std::ios::binary) << model.SerializeAsString();
  auto external = write_compile_ready(dir_ / "external.onnx", dir_ / "out.onnx");
  ASSERT_FALSE(external);
  EXPECT_EQ(external.error().code, ErrorCode::kUnsupported);
  EXPECT_THAT(external.error().message, HasSubstr("external.onnx keeps tensors in external data files"));

  model = test::load_model(outer);
  model.set_ir_version(3);
  std::ofstream(dir_ / "ir3.onnx", std::ios::binary) << model.SerializeAsString();
  auto old = write_compile_ready(dir_ / "ir3.onnx", dir_ / "out.onnx");
  ASSERT_FALSE(old);
  EXPECT_THAT(old.error().message, HasSubstr("ir3.onnx is IR version 3"));

  std::ofstream(dir_ / "garbage.onnx") << "not a model";
  auto garbage = write_compile_ready(dir_ / "garbage.onnx", dir_ / "out.onnx");
  ASSERT_FALSE(garbage);
  EXPECT_EQ(garbage.error().code, ErrorCode::kInvalidArgument);
  auto missing = write_compile_ready(dir_ / "missing.onnx", dir_ / "out.onnx");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
  EXPECT_FALSE(fs::exists(dir_ / "out.onnx"));
}

// --- The engine: the placement says what its engine was built from, and the rewritten file is cached beside it.

TEST_F(CompileReadyTest, TheEngineSaysItsEngineCameFromARewrittenGraphAndKeepsThatGraph) {
  test::write_elementwise_model(dir_ / "probe.onnx", {1, 1});  // the smallest: the probe measures it
  write_outer_initializer_model(dir_ / "branches.onnx");
  write_nan_model(dir_ / "nan.onnx");

  core::EngineOptions o;
  o.cache_dir = dir_ / "cache";
  o.models = {{"probe", Role::kGeneric, dir_ / "probe.onnx", {}, {}, {}},
              {"branches", Role::kGeneric, dir_ / "branches.onnx", {}, {}, {}},
              {"nan", Role::kGeneric, dir_ / "nan.onnx", {}, {}, {}}};
  o.runtimes.explicit_dir = build_.library.parent_path();
  o.runtimes.include_default_locations = false;
  o.runtimes.read_environment = false;
  o.hardware_root = test::fixtures_dir() / "hardware" / "cpu-vm";
  o.plugin_dirs = {dir_ / "plugins"};
  o.worker = test::worker_path();
  o.acceptance_ratio = 1000;
  o.probe_runs = 1;
  for (int launch = 0; launch < 2; ++launch) {  // the second launch finds everything in the cache
    auto engine = core::Engine::start(o);
    ASSERT_TRUE(engine) << engine.error().message;
    (*engine)->wait_until_settled();
    ASSERT_EQ((*engine)->chosen_rung(), sim_.name);
    auto job = *(*engine)->open_job();
    auto branches = job->session("branches");
    ASSERT_TRUE(branches) << branches.error().message;
    EXPECT_EQ((*branches)->rung(), sim_.name);
    EXPECT_EQ((*branches)->placement_reason(),
              "the chosen rung's engine, built from a rewritten graph (1 value only subgraphs read given an outer reader)");
    auto out = (*branches)->run(inputs_for(4, true));
    ASSERT_TRUE(out) << out.error().message;
    auto want = run(dir_ / "branches.onnx", RungSpec{}, inputs_for(4, true));
    ASSERT_TRUE(want);
    EXPECT_TRUE(compare_outputs(*want, *out, Tolerance::exact()).faithful());
    auto stays = job->session("nan");
    ASSERT_TRUE(stays) << stays.error().message;
    EXPECT_EQ((*stays)->rung(), "cpu");
    EXPECT_THAT((*stays)->placement_reason(), HasSubstr("engine failed: rewritten graph not used, its outputs differ"));
  }
  std::vector<std::string> rewritten;
  for (const auto& e : fs::recursive_directory_iterator(dir_ / "cache" / "engines")) {
    std::string name = e.path().filename().string();
    if (name.find(".rewritten.") != std::string::npos) rewritten.push_back(name);
  }
  std::sort(rewritten.begin(), rewritten.end());
  ASSERT_EQ(rewritten.size(), 2u);  // the graph and its note, named after the model and its hash
  EXPECT_THAT(rewritten[0], ::testing::MatchesRegex("branches-[0-9a-f]{12}\\.rewritten\\.json"));
  EXPECT_THAT(rewritten[1], ::testing::MatchesRegex("branches-[0-9a-f]{12}\\.rewritten\\.onnx"));
}

}  // namespace
}  // namespace rung
