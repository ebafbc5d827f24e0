// Loads the simulated accelerator plugin (librung_sim_ep.so) into real ONNX Runtime builds and checks that it
// claims, computes, perturbs, fails, aborts, hangs and caches the way its knobs say.
#include <dlfcn.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <onnxruntime_cxx_api.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "model_builder.h"
#include "test_support.h"

namespace fs = std::filesystem;
using rung::test::ElemType;
using rung::test::ModelBuilder;
using ::testing::AllOf;
using ::testing::Contains;
using ::testing::Each;
using ::testing::HasSubstr;
using ::testing::StartsWith;

namespace {

constexpr const char* kEpName = "RungSimAccelerator";
constexpr const char* kRegistration = "rung_sim";
using Options = std::unordered_map<std::string, std::string>;
using Clock = std::chrono::steady_clock;

// ---------------------------------------------------------------------------------------------------------------
// Runtime loading

fs::path ort_library(const std::string& version) {
  for (const char* name : {"libonnxruntime.so.1", "libonnxruntime.so"}) {
    fs::path p = rung::test::runtime_dir(version) / name;
    if (fs::exists(p)) return p;
  }
  return {};
}

// dlopen's an ONNX Runtime build (never closed) and returns its OrtApi: our header's version, else 28.
// `error` gets the reason on failure; `loaded_version`, if given, the build's version string.
const OrtApi* load_ort_api(const std::string& version, std::string& error, std::string* loaded_version = nullptr) {
  const fs::path lib = ort_library(version);
  if (lib.empty()) {
    error = "no ONNX Runtime build in " + rung::test::runtime_dir(version).string();
    return nullptr;
  }
  void* handle = dlopen(fs::absolute(lib).c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    error = dlerror();
    return nullptr;
  }
  using GetApiBaseFn = const OrtApiBase* (*)();
  auto get_base = reinterpret_cast<GetApiBaseFn>(dlsym(handle, "OrtGetApiBase"));
  if (get_base == nullptr) {
    error = "OrtGetApiBase not found in " + lib.string();
    return nullptr;
  }
  const OrtApiBase* base = get_base();
  if (loaded_version != nullptr) *loaded_version = base->GetVersionString();
  const OrtApi* api = base->GetApi(ORT_API_VERSION);
  if (api == nullptr) api = base->GetApi(28);
  if (api == nullptr) error = std::string("no usable OrtApi in ONNX Runtime ") + base->GetVersionString();
  return api;
}

// ---------------------------------------------------------------------------------------------------------------
// An Ort::Env with the plugin registered and ORT's log captured.

struct LogCapture {
  std::mutex mutex;
  std::vector<std::string> lines;

  bool contains(const std::string& needle) {
    std::lock_guard<std::mutex> lock(mutex);
    return std::any_of(lines.begin(), lines.end(),
                       [&](const std::string& l) { return l.find(needle) != std::string::npos; });
  }
};

void ORT_API_CALL capture_log(void* param, OrtLoggingLevel, const char*, const char*, const char*,
                              const char* message) {
  auto* log = static_cast<LogCapture*>(param);
  std::lock_guard<std::mutex> lock(log->mutex);
  log->lines.emplace_back(message ? message : "");
}

struct SimEnv {
  LogCapture log;
  Ort::Env env;

  SimEnv() : env(ORT_LOGGING_LEVEL_WARNING, "sim-ep-test", capture_log, &log) {
    env.RegisterExecutionProviderLibrary(kRegistration, rung::test::sim_ep_path().string());
  }
  ~SimEnv() {
    try {
      env.UnregisterExecutionProviderLibrary(kRegistration);
    } catch (...) {
    }
  }

  Ort::ConstEpDevice device() const {
    for (const auto& d : env.GetEpDevices())
      if (std::string(d.EpName()) == kEpName) return d;
    throw std::runtime_error("no RungSimAccelerator OrtEpDevice");
  }

  Ort::Session sim_session(const fs::path& model, const Options& options) {
    Ort::SessionOptions so;
    so.SetIntraOpNumThreads(1);
    so.AppendExecutionProvider_V2(env, {device()}, options);
    return Ort::Session(env, model.c_str(), so);
  }

  Ort::Session cpu_session(const fs::path& model) {
    Ort::SessionOptions so;
    so.SetIntraOpNumThreads(1);
    return Ort::Session(env, model.c_str(), so);
  }
};

// ---------------------------------------------------------------------------------------------------------------
// Running models

struct Tensor {
  std::vector<int64_t> shape;
  std::vector<float> data;
};
using Feeds = std::vector<std::pair<std::string, Tensor>>;

Tensor run(Ort::Session& session, const Feeds& feeds, const std::string& output) {
  auto mem = Ort::MemoryInfo::CreateCpu(OrtArenaAllocator, OrtMemTypeDefault);
  std::vector<Ort::Value> values;
  std::vector<const char*> names;
  for (const auto& [name, t] : feeds) {
    names.push_back(name.c_str());
    values.push_back(Ort::Value::CreateTensor<float>(mem, const_cast<float*>(t.data.data()), t.data.size(),
                                                     t.shape.data(), t.shape.size()));
  }
  const char* out_name = output.c_str();
  auto outs = session.Run(Ort::RunOptions{nullptr}, names.data(), values.data(), values.size(), &out_name, 1);
  auto info = outs[0].GetTensorTypeAndShapeInfo();
  const float* p = outs[0].GetTensorData<float>();
  return Tensor{info.GetShape(), std::vector<float>(p, p + info.GetElementCount())};
}

std::vector<float> iota_values(size_t n, float start, float step) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + step * static_cast<float>(i);
  return v;
}

bool bitwise_equal(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

std::vector<std::string> read_lines(const fs::path& path) {
  std::vector<std::string> lines;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

size_t count_prefix(const std::vector<std::string>& lines, const std::string& prefix) {
  return static_cast<size_t>(
      std::count_if(lines.begin(), lines.end(), [&](const std::string& l) { return l.rfind(prefix, 0) == 0; }));
}

// ---------------------------------------------------------------------------------------------------------------
// Child processes, for knobs that kill or hang the process, and for other runtime builds.

struct ChildOutcome {
  bool timed_out = false;
  bool exited = false;
  int exit_code = -1;
  int signal = 0;
  std::string message;
};

// Runs `body` in a forked child; it returns its exit code and may set a message for the parent. The child is
// killed (SIGKILL) if it runs longer than `timeout`.
ChildOutcome run_in_child(const std::function<int(std::string&)>& body, std::chrono::milliseconds timeout) {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("pipe failed");
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    close(fds[0]);
    rlimit no_core{0, 0};
    setrlimit(RLIMIT_CORE, &no_core);  // the abort test should not leave core files
    std::string message;
    int code = 0;
    try {
      code = body(message);
    } catch (const std::exception& e) {
      message = std::string("child threw: ") + e.what();
      code = 90;
    } catch (...) {
      message = "child threw a non-std exception";
      code = 91;
    }
    ssize_t ignored = write(fds[1], message.data(), message.size());
    (void)ignored;
    _exit(code);
  }
  close(fds[1]);
  ChildOutcome outcome;
  int status = 0;
  const auto deadline = Clock::now() + timeout;
  while (true) {
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (Clock::now() >= deadline) {
      outcome.timed_out = true;
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) outcome.message.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  outcome.exited = WIFEXITED(status);
  outcome.exit_code = outcome.exited ? WEXITSTATUS(status) : -1;
  outcome.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  return outcome;
}

// ---------------------------------------------------------------------------------------------------------------
// Fixture: ONNX Runtime 1.30.0 in this process, a scratch directory per test.

class SimEpTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    api_ = load_ort_api("1.30.0", load_error_);
    if (api_ != nullptr) Ort::InitApi(api_);
  }

  void SetUp() override {
    ASSERT_NE(api_, nullptr) << load_error_;
    ASSERT_TRUE(fs::exists(rung::test::sim_ep_path())) << rung::test::sim_ep_path();
    dir_ = rung::test::make_temp_dir("rung-sim-ep-test");
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path path(const std::string& name) const { return dir_ / name; }

  // Y = Relu(X * W + B): W matches X's shape, B broadcasts over the rows.
  fs::path relu_affine_model() const {
    return ModelBuilder()
        .input("X", {2, 3})
        .initializer("W", {2, 3}, {0.5f, -1.25f, 2.0f, 3.0f, 0.1f, -0.7f})
        .initializer("B", {3}, {0.25f, -0.5f, 1.0f})
        .node("Mul", {"X", "W"}, {"XW"}, "mul")
        .node("Add", {"XW", "B"}, {"Z"}, "add")
        .node("Relu", {"Z"}, {"Y"}, "relu")
        .output("Y", {2, 3})
        .save(path("relu_affine.onnx"));
  }
  static Feeds relu_affine_feeds() { return {{"X", {{2, 3}, {1.5f, -2.0f, 0.75f, -0.3f, 4.0f, 2.5f}}}}; }

  // Y = A + B on two graph inputs.
  fs::path add_model() const {
    return ModelBuilder()
        .input("A", {2, 2})
        .input("B", {2, 2})
        .node("Add", {"A", "B"}, {"Y"}, "add")
        .output("Y", {2, 2})
        .save(path("add.onnx"));
  }
  static Feeds add_feeds() {
    return {{"A", {{2, 2}, {1.0f, 2.5f, -3.0f, 0.125f}}}, {"B", {{2, 2}, {0.5f, 0.5f, 1.0f, -2.0f}}}};
  }

  static const OrtApi* api_;
  static std::string load_error_;
  fs::path dir_;
};

const OrtApi* SimEpTest::api_ = nullptr;
std::string SimEpTest::load_error_;

// ---------------------------------------------------------------------------------------------------------------

TEST_F(SimEpTest, RegistersOneCpuDevice) {
  SimEnv se;
  std::vector<Ort::ConstEpDevice> sim;
  for (const auto& d : se.env.GetEpDevices())
    if (std::string(d.EpName()) == kEpName) sim.push_back(d);
  ASSERT_EQ(sim.size(), 1u);
  EXPECT_STREQ(sim[0].EpVendor(), "rung");
  EXPECT_EQ(sim[0].Device().Type(), OrtHardwareDeviceType_CPU);
}

TEST_F(SimEpTest, MatchesCpuAndRunsOnThePlugin) {
  const fs::path model = relu_affine_model();
  const fs::path trace = path("trace.txt");
  SimEnv se;
  Tensor cpu, sim;
  {
    auto s = se.cpu_session(model);
    cpu = run(s, relu_affine_feeds(), "Y");
  }
  {
    auto s = se.sim_session(model, {{"trace_file", trace.string()}});
    sim = run(s, relu_affine_feeds(), "Y");
  }
  EXPECT_EQ(sim.shape, cpu.shape);
  EXPECT_TRUE(bitwise_equal(sim.data, cpu.data))
      << ::testing::PrintToString(sim.data) << " vs " << ::testing::PrintToString(cpu.data);
  // Some outputs are clamped by Relu, some are not: the model exercises all three ops.
  EXPECT_THAT(cpu.data, Contains(0.0f));
  EXPECT_THAT(cpu.data, Contains(::testing::Gt(0.0f)));

  const auto lines = read_lines(trace);
  EXPECT_EQ(count_prefix(lines, "compile Mul "), 1u);
  EXPECT_EQ(count_prefix(lines, "compile Add "), 1u);
  EXPECT_EQ(count_prefix(lines, "compile Relu "), 1u);
  EXPECT_EQ(count_prefix(lines, "compute Mul "), 1u);
  EXPECT_EQ(count_prefix(lines, "compute Add "), 1u);
  EXPECT_EQ(count_prefix(lines, "compute Relu "), 1u);
  // Each node was compiled into its own fused node, named after the EP.
  EXPECT_THAT(lines, Each(HasSubstr(kEpName)));
}

TEST_F(SimEpTest, BroadcastsLikeTheCpu) {
  // Sub with [2,1,4] - [3,1] -> [2,3,4], then Div by a scalar initializer, then Mul by a single-element tensor.
  const fs::path model = ModelBuilder()
                             .input("A", {2, 1, 4})
                             .input("B", {3, 1})
                             .initializer("S", {}, {3.0f})
                             .initializer("T", {1}, {-0.5f})
                             .node("Sub", {"A", "B"}, {"D"})
                             .node("Div", {"D", "S"}, {"Q"})
                             .node("Mul", {"T", "Q"}, {"Y"})
                             .output("Y", {2, 3, 4})
                             .save(path("broadcast.onnx"));
  const Feeds feeds = {{"A", {{2, 1, 4}, iota_values(8, -2.0f, 0.7f)}}, {"B", {{3, 1}, {0.3f, -1.1f, 2.9f}}}};
  const fs::path trace = path("trace.txt");
  SimEnv se;
  Tensor cpu, sim;
  {
    auto s = se.cpu_session(model);
    cpu = run(s, feeds, "Y");
  }
  {
    auto s = se.sim_session(model, {{"trace_file", trace.string()}});
    sim = run(s, feeds, "Y");
  }
  EXPECT_EQ(sim.shape, (std::vector<int64_t>{2, 3, 4}));
  EXPECT_TRUE(bitwise_equal(sim.data, cpu.data)) << ::testing::PrintToString(sim.data) << "\nvs\n"
                                                 << ::testing::PrintToString(cpu.data);
  const auto lines = read_lines(trace);
  EXPECT_EQ(count_prefix(lines, "compute Sub "), 1u);
  EXPECT_EQ(count_prefix(lines, "compute Div "), 1u);
  EXPECT_EQ(count_prefix(lines, "compute Mul "), 1u);
}

TEST_F(SimEpTest, UnaryOpsAgreeWithTheCpu) {
  // Abs -> Sqrt -> Neg -> Tanh -> Sigmoid, plus Relu on the input.
  const fs::path model = ModelBuilder()
                             .input("X", {16})
                             .node("Abs", {"X"}, {"a"})
                             .node("Sqrt", {"a"}, {"b"})
                             .node("Neg", {"b"}, {"c"})
                             .node("Tanh", {"c"}, {"d"})
                             .node("Sigmoid", {"d"}, {"e"})
                             .node("Relu", {"X"}, {"r"})
                             .node("Add", {"e", "r"}, {"Y"})
                             .output("Y", {16})
                             .save(path("unary.onnx"));
  const Feeds feeds = {{"X", {{16}, iota_values(16, -4.0f, 0.55f)}}};
  const fs::path trace = path("trace.txt");
  SimEnv se;
  Tensor cpu, sim;
  {
    auto s = se.cpu_session(model);
    cpu = run(s, feeds, "Y");
  }
  {
    auto s = se.sim_session(model, {{"trace_file", trace.string()}});
    sim = run(s, feeds, "Y");
  }
  ASSERT_EQ(sim.data.size(), cpu.data.size());
  for (size_t i = 0; i < sim.data.size(); ++i) EXPECT_NEAR(sim.data[i], cpu.data[i], 1e-6) << "at " << i;
  const auto lines = read_lines(trace);
  for (const char* op : {"Abs", "Sqrt", "Neg", "Tanh", "Sigmoid", "Relu", "Add"})
    EXPECT_EQ(count_prefix(lines, std::string("compute ") + op + " "), 1u) << op;
}

TEST_F(SimEpTest, PerturbShiftsEveryOutput) {
  const fs::path model = add_model();
  SimEnv se;
  Tensor cpu, sim;
  {
    auto s = se.cpu_session(model);
    cpu = run(s, add_feeds(), "Y");
  }
  {
    auto s = se.sim_session(model, {{"perturb", "0.5"}});
    sim = run(s, add_feeds(), "Y");
  }
  ASSERT_EQ(sim.data.size(), cpu.data.size());
  for (size_t i = 0; i < sim.data.size(); ++i) EXPECT_NEAR(sim.data[i] - cpu.data[i], 0.5f, 1e-6) << "at " << i;
}

TEST_F(SimEpTest, OpsKnobLimitsWhatIsClaimed) {
  // Y = (A + B) * A with ops=Add: Add runs on the plugin, Mul on the CPU EP.
  const fs::path model = ModelBuilder()
                             .input("A", {2, 2})
                             .input("B", {2, 2})
                             .node("Add", {"A", "B"}, {"S"})
                             .node("Mul", {"S", "A"}, {"Y"})
                             .output("Y", {2, 2})
                             .save(path("add_mul.onnx"));
  const fs::path trace = path("trace.txt");
  SimEnv se;
  Tensor cpu, sim;
  {
    auto s = se.cpu_session(model);
    cpu = run(s, add_feeds(), "Y");
  }
  {
    auto s = se.sim_session(model, {{"ops", "Add"}, {"trace_file", trace.string()}});
    sim = run(s, add_feeds(), "Y");
  }
  EXPECT_TRUE(bitwise_equal(sim.data, cpu.data));
  const auto lines = read_lines(trace);
  EXPECT_EQ(count_prefix(lines, "compute Add "), 1u);
  EXPECT_EQ(count_prefix(lines, "compute Mul "), 0u);
  EXPECT_EQ(count_prefix(lines, "compile Mul "), 0u);
}

// Y = X · W, X [4, 8] and W [8, 3] (an initializer or, with `w_is_input`, a graph input).
fs::path matmul_model(const fs::path& file, bool w_is_input) {
  ModelBuilder b;
  b.input("X", {4, 8});
  if (w_is_input) {
    b.input("W", {8, 3});
  } else {
    b.initializer("W", {8, 3}, iota_values(24, -1.0f, 0.125f));
  }
  return b.node("MatMul", {"X", "W"}, {"Y"}, "matmul").output("Y", {4, 3}).save(file);
}

TEST_F(SimEpTest, MatMulIsClaimedOnlyWhenNamedAndComputesWhatTheCpuDoes) {
  const fs::path model = matmul_model(path("matmul.onnx"), false);
  const fs::path trace = path("trace.txt");
  const Feeds feeds = {{"X", {{4, 8}, iota_values(32, -2.0f, 0.25f)}}};
  SimEnv se;
  Tensor cpu, sim;
  {
    auto s = se.cpu_session(model);
    cpu = run(s, feeds, "Y");
  }
  {
    auto s = se.sim_session(model, {{"trace_file", trace.string()}});  // the default ops: element-wise only
    run(s, feeds, "Y");
  }
  EXPECT_EQ(count_prefix(read_lines(trace), "compile MatMul "), 0u);
  {
    auto s = se.sim_session(model, {{"ops", "MatMul"}, {"trace_file", trace.string()}});
    sim = run(s, feeds, "Y");
  }
  EXPECT_EQ(count_prefix(read_lines(trace), "compute MatMul "), 1u);
  EXPECT_EQ(sim.shape, (std::vector<int64_t>{4, 3}));
  ASSERT_EQ(sim.data.size(), cpu.data.size());
  for (size_t i = 0; i < sim.data.size(); ++i) EXPECT_NEAR(sim.data[i], cpu.data[i], 1e-5) << "at " << i;
}

// Memoise: the same inputs give the remembered output, copied; any changed input byte is computed again, a
// graph input as much as the other, and only constant initializers are left uncompared.
TEST_F(SimEpTest, MemoiseReusesAnOutputOnlyWhileItsInputsAreTheSame) {
  const fs::path trace = path("trace.txt");
  SimEnv se;
  const Tensor x{{4, 8}, iota_values(32, -2.0f, 0.25f)};
  Tensor x2 = x;
  x2.data[31] += 1.0f;
  {
    auto s = se.sim_session(matmul_model(path("w_const.onnx"), false), {{"ops", "MatMul"}, {"memoise", "1"}, {"trace_file", trace.string()}});
    const Tensor first = run(s, {{"X", x}}, "Y");
    const Tensor again = run(s, {{"X", x}}, "Y");
    EXPECT_TRUE(bitwise_equal(again.data, first.data));
    const Tensor changed = run(s, {{"X", x2}}, "Y");
    EXPECT_FALSE(bitwise_equal(changed.data, first.data));
    auto cpu = se.cpu_session(path("w_const.onnx"));
    const Tensor expected = run(cpu, {{"X", x2}}, "Y");
    for (size_t i = 0; i < expected.data.size(); ++i) EXPECT_NEAR(changed.data[i], expected.data[i], 1e-5) << "at " << i;
  }
  auto lines = read_lines(trace);
  EXPECT_EQ(count_prefix(lines, "compute MatMul "), 2u);
  EXPECT_EQ(count_prefix(lines, "reuse MatMul "), 1u);

  fs::remove(trace);
  {
    auto s = se.sim_session(matmul_model(path("w_input.onnx"), true), {{"ops", "MatMul"}, {"memoise", "1"}, {"trace_file", trace.string()}});
    Tensor w{{8, 3}, iota_values(24, -1.0f, 0.125f)};
    const Tensor first = run(s, {{"X", x}, {"W", w}}, "Y");
    w.data[0] = 5.0f;  // only the second input changes
    const Tensor changed = run(s, {{"X", x}, {"W", w}}, "Y");
    EXPECT_NE(changed.data[0], first.data[0]);
  }
  lines = read_lines(trace);
  EXPECT_EQ(count_prefix(lines, "compute MatMul "), 2u);
  EXPECT_EQ(count_prefix(lines, "reuse MatMul "), 0u);

  try {
    se.sim_session(path("w_const.onnx"), {{"memoise", "yes"}});
    FAIL() << "session creation succeeded";
  } catch (const Ort::Exception& e) {
    EXPECT_THAT(e.what(), HasSubstr("invalid value 'yes' for knob 'memoise' (expected 0 or 1)"));
  }
}

TEST_F(SimEpTest, NonFloatNodesStayOnTheCpu) {
  const fs::path model = ModelBuilder()
                             .input("A", {3}, ElemType::Int64)
                             .input("B", {3}, ElemType::Int64)
                             .node("Add", {"A", "B"}, {"Y"})
                             .output("Y", {3}, ElemType::Int64)
                             .save(path("int_add.onnx"));
  const fs::path trace = path("trace.txt");
  SimEnv se;
  auto s = se.sim_session(model, {{"trace_file", trace.string()}});
  std::vector<int64_t> a = {1, 2, 3}, b = {10, 20, 30}, shape = {3};
  auto mem = Ort::MemoryInfo::CreateCpu(OrtArenaAllocator, OrtMemTypeDefault);
  std::vector<Ort::Value> in;
  in.push_back(Ort::Value::CreateTensor<int64_t>(mem, a.data(), a.size(), shape.data(), shape.size()));
  in.push_back(Ort::Value::CreateTensor<int64_t>(mem, b.data(), b.size(), shape.data(), shape.size()));
  const char* names[] = {"A", "B"};
  const char* out_name = "Y";
  auto outs = s.Run(Ort::RunOptions{nullptr}, names, in.data(), 2, &out_name, 1);
  const int64_t* y = outs[0].GetTensorData<int64_t>();
  EXPECT_EQ(std::vector<int64_t>(y, y + 3), (std::vector<int64_t>{11, 22, 33}));
  EXPECT_TRUE(read_lines(trace).empty());
}

TEST_F(SimEpTest, FailAtCompileFailsSessionCreation) {
  const fs::path model = add_model();
  SimEnv se;
  try {
    se.sim_session(model, {{"fail_at", "compile"}});
    FAIL() << "session creation succeeded";
  } catch (const Ort::Exception& e) {
    EXPECT_THAT(e.what(), HasSubstr("simulated failure at compile"));
  }
}

TEST_F(SimEpTest, FailAtGetCapabilityFallsBackToTheCpu) {
  // ONNX Runtime does not fail the session when OrtEp::GetCapability returns an error: it logs the error and
  // assigns the nodes elsewhere. The failure is visible in the log, and fatal once CPU fallback is disabled.
  const fs::path model = add_model();
  const fs::path trace = path("trace.txt");
  SimEnv se;
  {
    auto s = se.sim_session(model, {{"fail_at", "get_capability"}, {"trace_file", trace.string()}});
    EXPECT_TRUE(se.log.contains("simulated failure in GetCapability")) << "not in ORT's log";
    Tensor y = run(s, add_feeds(), "Y");
    EXPECT_EQ(y.data, (std::vector<float>{1.5f, 3.0f, -2.0f, -1.875f}));
    EXPECT_TRUE(read_lines(trace).empty()) << "nothing may run on the plugin";
  }
  Ort::SessionOptions so;
  so.AddConfigEntry("session.disable_cpu_ep_fallback", "1");
  so.AppendExecutionProvider_V2(se.env, {se.device()}, Options{{"fail_at", "get_capability"}});
  EXPECT_THROW(Ort::Session(se.env, model.c_str(), so), Ort::Exception);
}

TEST_F(SimEpTest, FailAtCreateEpFailsSessionCreation) {
  const fs::path model = add_model();
  SimEnv se;
  try {
    se.sim_session(model, {{"fail_at", "create_ep"}});
    FAIL() << "session creation succeeded";
  } catch (const Ort::Exception& e) {
    EXPECT_THAT(e.what(), HasSubstr("simulated failure at EP creation"));
  }
}

TEST_F(SimEpTest, FailAtComputeFailsTheRun) {
  const fs::path model = add_model();
  SimEnv se;
  auto s = se.sim_session(model, {{"fail_at", "compute"}});
  try {
    run(s, add_feeds(), "Y");
    FAIL() << "run succeeded";
  } catch (const Ort::Exception& e) {
    EXPECT_THAT(e.what(), HasSubstr("simulated failure at compute"));
  }
}

TEST_F(SimEpTest, MalformedKnobsAreRejected) {
  const fs::path model = add_model();
  SimEnv se;
  try {
    se.sim_session(model, {{"perturb", "abc"}});
    FAIL() << "session creation succeeded";
  } catch (const Ort::Exception& e) {
    EXPECT_THAT(e.what(), HasSubstr("invalid value 'abc' for knob 'perturb'"));
  }
  try {
    se.sim_session(model, {{"ops", "Add,Conv"}});
    FAIL() << "session creation succeeded";
  } catch (const Ort::Exception& e) {
    EXPECT_THAT(e.what(), HasSubstr("unsupported op type 'Conv'"));
  }
}

TEST_F(SimEpTest, EnvironmentSuppliesKnobsTheOptionsLack) {
  const fs::path model = add_model();
  // Factories are created at registration; session knobs are read at session creation, from the options first.
  const fs::path env_trace = path("env-trace.txt"), opt_trace = path("opt-trace.txt");
  ChildOutcome child = run_in_child(
      [&](std::string& msg) {
        setenv("RUNG_SIM_EP_PERTURB", "2", 1);
        setenv("RUNG_SIM_EP_TRACE_FILE", env_trace.c_str(), 1);
        SimEnv se;
        Tensor cpu, from_env, from_opts;
        {
          auto s = se.cpu_session(model);
          cpu = run(s, add_feeds(), "Y");
        }
        {
          auto s = se.sim_session(model, {});
          from_env = run(s, add_feeds(), "Y");
        }
        {
          auto s = se.sim_session(model, {{"perturb", "0"}, {"trace_file", opt_trace.string()}});
          from_opts = run(s, add_feeds(), "Y");
        }
        for (size_t i = 0; i < cpu.data.size(); ++i) {
          if (from_env.data[i] != cpu.data[i] + 2.0f) msg += "env perturb not applied; ";
          if (from_opts.data[i] != cpu.data[i]) msg += "option did not override env; ";
        }
        return msg.empty() ? 0 : 1;
      },
      std::chrono::seconds(20));
  EXPECT_TRUE(child.exited && child.exit_code == 0) << child.message;
  EXPECT_EQ(count_prefix(read_lines(env_trace), "compute Add "), 1u);
  EXPECT_EQ(count_prefix(read_lines(opt_trace), "compute Add "), 1u);
}

TEST_F(SimEpTest, FailAtFactoryFailsRegistration) {
  ChildOutcome child = run_in_child(
      [](std::string& msg) {
        setenv("RUNG_SIM_EP_FAIL_AT", "factory", 1);
        Ort::Env env(ORT_LOGGING_LEVEL_ERROR, "sim-ep-factory");
        try {
          env.RegisterExecutionProviderLibrary(kRegistration, rung::test::sim_ep_path().string());
        } catch (const Ort::Exception& e) {
          msg = e.what();
          for (const auto& d : env.GetEpDevices())
            if (std::string(d.EpName()) == kEpName) return 2;  // a device appeared after all
          return 0;
        }
        msg = "registration succeeded";
        return 1;
      },
      std::chrono::seconds(20));
  ASSERT_TRUE(child.exited) << "signal " << child.signal;
  EXPECT_EQ(child.exit_code, 0) << child.message;
  EXPECT_THAT(child.message, HasSubstr("simulated failure at factory creation"));
}

TEST_F(SimEpTest, AbortAtCompileKillsOnlyTheChild) {
  const fs::path model = add_model();
  const fs::path trace = path("trace.txt");
  ChildOutcome child = run_in_child(
      [&](std::string& msg) {
        SimEnv se;
        se.sim_session(model, {{"abort_at", "compile"}, {"trace_file", trace.string()}});
        msg = "session creation returned";
        return 1;
      },
      std::chrono::seconds(20));
  EXPECT_FALSE(child.timed_out);
  EXPECT_EQ(child.signal, SIGABRT) << child.message;
  EXPECT_THAT(read_lines(trace), Contains("abort compile"));

  // The parent still works with the same plugin.
  SimEnv se;
  auto s = se.sim_session(model, {});
  EXPECT_EQ(run(s, add_feeds(), "Y").data.size(), 4u);
}

TEST_F(SimEpTest, HangAtCompileNeverReturns) {
  const fs::path model = add_model();
  const fs::path trace = path("trace.txt");
  const auto start = Clock::now();
  ChildOutcome child = run_in_child(
      [&](std::string& msg) {
        SimEnv se;
        se.sim_session(model, {{"hang_at", "compile"}, {"trace_file", trace.string()}});
        msg = "session creation returned";
        return 1;
      },
      std::chrono::seconds(2));
  EXPECT_TRUE(child.timed_out) << "child ended: exit " << child.exit_code << ", signal " << child.signal << ": "
                               << child.message;
  EXPECT_EQ(child.signal, SIGKILL);
  EXPECT_GE(Clock::now() - start, std::chrono::seconds(2));
  EXPECT_THAT(read_lines(trace), Contains("hang compile"));
}

TEST_F(SimEpTest, CompileDelaySlowsSessionCreation) {
  const fs::path model = add_model();
  SimEnv se;
  const auto start = Clock::now();
  auto s = se.sim_session(model, {{"compile_delay_ms", "300"}});
  EXPECT_GE(Clock::now() - start, std::chrono::milliseconds(300));
}

TEST_F(SimEpTest, ComputeDelaySlowsEachRun) {
  const fs::path model = add_model();
  SimEnv se;
  auto s = se.sim_session(model, {{"compute_delay_us", "30000"}});
  run(s, add_feeds(), "Y");  // warm-up
  const auto start = Clock::now();
  run(s, add_feeds(), "Y");
  run(s, add_feeds(), "Y");
  EXPECT_GE(Clock::now() - start, std::chrono::milliseconds(60));
}

TEST_F(SimEpTest, CompiledModelHoldsEpContextNodesThatRunAgain) {
  const fs::path model = ModelBuilder()
                             .input("A", {2, 2})
                             .input("B", {2, 2})
                             .node("Add", {"A", "B"}, {"S"}, "add")
                             .node("Relu", {"S"}, {"Y"}, "relu")
                             .output("Y", {2, 2})
                             .save(path("add_relu.onnx"));
  const fs::path compiled = path("add_relu_ctx.onnx");
  const fs::path trace = path("trace.txt");
  SimEnv se;
  {
    Ort::SessionOptions so;
    so.AppendExecutionProvider_V2(se.env, {se.device()}, Options{{"perturb", "0.25"}});
    Ort::ModelCompilationOptions co(se.env, so);
    co.SetInputModelPath(model.c_str());
    co.SetOutputModelPath(compiled.c_str());
    co.SetEpContextEmbedMode(true);
    Ort::Status status = Ort::CompileModel(se.env, co);
    ASSERT_TRUE(status.IsOK()) << status.GetErrorMessage();
  }
  EXPECT_THAT(rung::test::model_node_ops(compiled),
              ::testing::ElementsAre("com.microsoft:EPContext", "com.microsoft:EPContext"));
  EXPECT_THAT(rung::test::model_string_attributes(compiled, "EPContext", "source"), Each(std::string(kEpName)));
  const auto caches = rung::test::model_string_attributes(compiled, "EPContext", "ep_cache_context");
  EXPECT_THAT(caches, Contains(AllOf(HasSubstr("op=Add"), HasSubstr("perturb=0.25"))));
  EXPECT_THAT(caches, Contains(AllOf(HasSubstr("op=Relu"), HasSubstr("perturb=0.25"))));

  // The compiled model runs on the plugin alone; the perturbation was baked in when it was compiled.
  auto s = se.sim_session(compiled, {{"trace_file", trace.string()}});
  const Feeds feeds = add_feeds();
  Tensor y = run(s, feeds, "Y");
  ASSERT_EQ(y.data.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    const float sum = feeds[0].second.data[i] + feeds[1].second.data[i] + 0.25f;
    EXPECT_EQ(y.data[i], (sum > 0.0f ? sum : 0.0f) + 0.25f) << "at " << i;
  }
  const auto lines = read_lines(trace);
  EXPECT_EQ(count_prefix(lines, "compute Add "), 1u);
  EXPECT_EQ(count_prefix(lines, "compute Relu "), 1u);

  // Without the plugin, ONNX Runtime cannot run the EPContext nodes.
  EXPECT_THROW(se.cpu_session(compiled), Ort::Exception);
}

// The plugin only uses API entries that exist in API 28, so it also loads into older builds. Each runs in a child
// process that dlopen's that build and points the Ort:: wrappers at it (one OrtApi per process).
class SimEpOlderRuntimeTest : public SimEpTest, public ::testing::WithParamInterface<std::string> {};

TEST_P(SimEpOlderRuntimeTest, RegistersAndRuns) {
  const std::string version = GetParam();
  if (ort_library(version).empty()) GTEST_SKIP() << "ONNX Runtime " << version << " not fetched";
  const fs::path model = add_model();
  const fs::path trace = path("trace.txt");
  ChildOutcome child = run_in_child(
      [&](std::string& msg) {
        std::string loaded;
        const OrtApi* api = load_ort_api(version, msg, &loaded);
        if (api == nullptr) return 3;
        Ort::InitApi(api);
        SimEnv se;
        Tensor cpu, sim;
        {
          auto s = se.cpu_session(model);
          cpu = run(s, add_feeds(), "Y");
        }
        {
          auto s = se.sim_session(model, {{"perturb", "1"}, {"trace_file", trace.string()}});
          sim = run(s, add_feeds(), "Y");
        }
        // The EPContext round trip too (CreateNode's attribute ownership differs from its documentation).
        const fs::path compiled = path("add_ctx.onnx");
        {
          Ort::SessionOptions so;
          so.AppendExecutionProvider_V2(se.env, {se.device()}, Options{{"perturb", "1"}});
          Ort::ModelCompilationOptions co(se.env, so);
          co.SetInputModelPath(model.c_str());
          co.SetOutputModelPath(compiled.c_str());
          co.SetEpContextEmbedMode(true);
          Ort::Status status = Ort::CompileModel(se.env, co);
          if (!status.IsOK()) msg += "compile failed: " + status.GetErrorMessage() + "; ";
        }
        Tensor from_ctx;
        {
          auto s = se.sim_session(compiled, {{"trace_file", trace.string()}});
          from_ctx = run(s, add_feeds(), "Y");
        }
        for (size_t i = 0; i < cpu.data.size(); ++i) {
          if (sim.data[i] != cpu.data[i] + 1.0f) msg += "wrong output at " + std::to_string(i) + "; ";
          if (from_ctx.data[i] != cpu.data[i] + 1.0f) msg += "wrong EPContext output at " + std::to_string(i) + "; ";
        }
        msg += "ran on " + loaded;
        return msg.rfind("ran on", 0) == 0 ? 0 : 1;
      },
      std::chrono::seconds(30));
  ASSERT_TRUE(child.exited) << "signal " << child.signal;
  EXPECT_EQ(child.exit_code, 0) << child.message;
  EXPECT_THAT(child.message, StartsWith("ran on " + version.substr(0, 4)));
  EXPECT_EQ(count_prefix(read_lines(trace), "compute Add "), 2u);
}

INSTANTIATE_TEST_SUITE_P(Builds, SimEpOlderRuntimeTest, ::testing::Values("1.28.2", "1.29"),
                         [](const auto& param_info) {
                           std::string n = param_info.param;
                           std::replace(n.begin(), n.end(), '.', '_');
                           return n;
                         });

}  // namespace
