// The C++ layer (rung/engine.h) and the C ABI under it, linked against the
// shared librung_engine alone: the same bytes as the C++ engine core on the
// abi_reference fixture's crop, and every misuse a status, never a crash.
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <atomic>
#include <chrono>
#include <climits>
#include <optional>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "abi_test_env.h"
#include "rung/engine.h"

namespace fs = std::filesystem;

namespace {

using abi_test::env;
using abi_test::reference;

std::vector<std::byte> bytes_of(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> out(chars.size());
  std::memcpy(out.data(), chars.data(), chars.size());
  return out;
}

// The options every binding's test uses (tests/CMakeLists.txt, abi-reference.cc).
rung::Options options_for(const fs::path& cache, const std::string& model) {
  auto o = rung::Options::create();
  EXPECT_TRUE(o.ok());
  const std::map<std::string, std::string> keys = {
      {"cache_dir", cache.string()},           {"plugin_dir", env("RUNG_TEST_PLUGIN_DIR")},
      {"runtime_dir", env("RUNG_TEST_RUNTIME_DIR")}, {"runtime_default_locations", "false"},
      {"runtime_environment", "false"},        {"worker", env("RUNG_TEST_WORKER")},
      {"hardware_root", env("RUNG_TEST_HARDWARE_ROOT")}, {"probe_runs", "1"},
      {"inference_threads", "1"},              {"acceptance_ratio", "1000"}};
  for (const auto& [k, v] : keys) EXPECT_TRUE(o->set(k, v).ok()) << k;
  EXPECT_TRUE(o->add_model("ppocr_cls", model, "generic").ok());
  return std::move(*o);
}

class AbiLayer : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("rung-abi-layer-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    auto o = options_for(dir_ / "cache", env("RUNG_TEST_MODEL"));
    ASSERT_TRUE(o.on_progress([](const rung::Progress&) { ++progress_calls_; }).ok());
    auto e = rung::Engine::start(o);
    ASSERT_TRUE(e.ok()) << e.error().message;
    engine_ = std::make_unique<rung::Engine>(std::move(*e));
    ASSERT_TRUE(engine_->wait_until_settled());
    auto j = engine_->open_job();
    ASSERT_TRUE(j.ok()) << j.error().message;
    job_ = std::make_unique<rung::Job>(std::move(*j));
  }
  static void TearDownTestSuite() {
    job_.reset();
    engine_.reset();
    fs::remove_all(dir_);
  }
  static rung::Session session() {
    auto s = job_->session("ppocr_cls");
    EXPECT_TRUE(s.ok()) << s.error().message;
    return *s;
  }
  static inline fs::path dir_;
  static inline std::unique_ptr<rung::Engine> engine_;
  static inline std::unique_ptr<rung::Job> job_;
  static inline std::atomic<int> progress_calls_{0};
};

TEST_F(AbiLayer, GivesTheCppEnginesBytesOnTheRealCrop) {
  const auto ref = reference();
  const auto input = bytes_of(fs::path(env("RUNG_TEST_REFERENCE_DIR")) / "input.bin");
  const auto expected = bytes_of(fs::path(env("RUNG_TEST_REFERENCE_DIR")) / "output.bin");
  auto s = session();
  auto x = rung::TensorData::view(ref.at("input_name"), RUNG_FLOAT32, {1, 3, 48, 192}, std::span<const std::byte>(input));
  ASSERT_TRUE(x.ok()) << x.error().message;
  std::vector<rung::TensorData> inputs;
  inputs.push_back(std::move(*x));
  auto out = s.run(inputs);
  ASSERT_TRUE(out.ok()) << out.error().message;
  ASSERT_FALSE(out->empty());
  EXPECT_EQ(out->front().name(), ref.at("output_name"));
  EXPECT_STREQ(rung_element_type_name(out->front().type()), ref.at("output_type").c_str());
  const auto got = out->front().bytes();
  EXPECT_TRUE(std::equal(got.begin(), got.end(), expected.begin(), expected.end())) << "the output differs from the C++ engine's";
  EXPECT_EQ(s.rung(), ref.at("rung"));
  EXPECT_EQ(s.model_id(), ref.at("model_id"));
  EXPECT_EQ(job_->model_ids_json(), "{\"ppocr_cls\":\"" + ref.at("model_id") + "\"}");
  EXPECT_NE(engine_->about_line().find("ONNX Runtime 1.30"), std::string::npos) << engine_->about_line();
  EXPECT_TRUE(engine_->probe_done());
  EXPECT_GT(progress_calls_.load(), 0);
}

TEST_F(AbiLayer, DescribesDynamicDimensions) {
  auto s = session();
  auto in = s.inputs();
  ASSERT_EQ(in.size(), 1u);
  EXPECT_EQ(in[0].name, reference().at("input_name"));
  EXPECT_EQ(in[0].type, RUNG_FLOAT32);
  ASSERT_EQ(in[0].shape.size(), 4u);
  EXPECT_EQ(in[0].shape[0], -1) << "the batch is dynamic";
  EXPECT_EQ(in[0].shape[1], 3);
  EXPECT_EQ(in[0].dim_names.size(), 4u);
  EXPECT_FALSE(s.outputs().empty());
}

TEST_F(AbiLayer, AWrongShapeNamesTheInput) {
  std::vector<float> pixels(3 * 10);
  auto x = rung::TensorData::view<float>("x", RUNG_FLOAT32, {1, 3, 10}, pixels);
  ASSERT_TRUE(x.ok());
  std::vector<rung::TensorData> inputs;
  inputs.push_back(std::move(*x));
  auto out = session().run(inputs);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().code, rung::ErrorCode::kInvalidArgument);
  EXPECT_NE(out.error().message.find("input 'x' has shape [1, 3, 10]"), std::string::npos) << out.error().message;
}

TEST_F(AbiLayer, AWrongTypeOrNameNamesTheInput) {
  std::vector<std::int64_t> ints(3 * 48 * 192);
  auto wrong_type = rung::TensorData::view<std::int64_t>("x", RUNG_INT64, {1, 3, 48, 192}, ints);
  ASSERT_TRUE(wrong_type.ok());
  std::vector<rung::TensorData> a;
  a.push_back(std::move(*wrong_type));
  auto out = session().run(a);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.error().message.find("input 'x' is int64, expected float32"), std::string::npos) << out.error().message;

  std::vector<float> pixels(3 * 48 * 192);
  auto wrong_name = rung::TensorData::view<float>("image", RUNG_FLOAT32, {1, 3, 48, 192}, pixels);
  ASSERT_TRUE(wrong_name.ok());
  std::vector<rung::TensorData> b;
  b.push_back(std::move(*wrong_name));
  out = session().run(b);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.error().message.find("has no input 'image'"), std::string::npos) << out.error().message;
}

TEST_F(AbiLayer, AViewMustHoldWhatItsShapeNeeds) {
  std::vector<float> pixels(10);
  auto x = rung::TensorData::view<float>("x", RUNG_FLOAT32, {1, 3, 48, 192}, pixels);
  ASSERT_FALSE(x.ok());
  EXPECT_NE(x.error().message.find("input 'x' holds 40 bytes"), std::string::npos) << x.error().message;
  auto negative = rung::TensorData::view<float>("x", RUNG_FLOAT32, {1, -3}, pixels);
  ASSERT_FALSE(negative.ok());
  auto bad_type = rung::TensorData::view<float>("x", static_cast<rung_element_type>(99), {10}, pixels);
  ASSERT_FALSE(bad_type.ok());
  EXPECT_NE(bad_type.error().message.find("element type 99"), std::string::npos) << bad_type.error().message;
}

TEST_F(AbiLayer, AnUnregisteredModelIsAnError) {
  auto s = job_->session("ppocr_rec");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("no model named 'ppocr_rec'"), std::string::npos) << s.error().message;
}

TEST(AbiOptions, AMissingModelFileNamesTheFile) {
  const fs::path dir = fs::temp_directory_path() / ("rung-abi-missing-" + std::to_string(::getpid()));
  auto o = options_for(dir / "cache", (dir / "no-such-model.onnx").string());
  auto e = rung::Engine::start(o);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message.find("no-such-model.onnx"), std::string::npos) << e.error().message;
  EXPECT_EQ(rung::exit_code_of(e.error().code), 2);
  fs::remove_all(dir);
}

TEST(AbiOptions, AnUnknownKeyOrABadValueNamesIt) {
  auto o = rung::Options::create();
  ASSERT_TRUE(o.ok());
  auto st = o->set("cache_directory", "/tmp");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("unknown option key 'cache_directory'"), std::string::npos) << st.error().message;
  for (const auto& [key, value] : std::vector<std::pair<std::string, std::string>>{
           {"inference_threads", "100000"}, {"inference_threads", "-1"}, {"probe_runs", "nan"}, {"probe_runs", "1.5"},
           {"acceptance_ratio", "inf"}, {"probe_deadline_ms", "1e300"}, {"isolate", "yes"}, {"cache_dir", ""},
           {"model.nope.input_spec", "/tmp/x.json"}}) {
    auto bad = o->set(key, value);
    ASSERT_FALSE(bad.ok()) << key << "=" << value;
    EXPECT_EQ(bad.error().code, rung::ErrorCode::kInvalidArgument);
    EXPECT_NE(bad.error().message.find(key), std::string::npos) << bad.error().message;
  }
  EXPECT_TRUE(o->set("probe_runs", "1000").ok());
  EXPECT_FALSE(o->set("probe_runs", "1001").ok());
  // The CLI's --accept-ratio bounds (rung/limits.h), each end alone.
  EXPECT_TRUE(o->set("acceptance_ratio", "10000").ok());
  EXPECT_FALSE(o->set("acceptance_ratio", "10000.001").ok());
  EXPECT_TRUE(o->set("acceptance_ratio", "0.01").ok());
  EXPECT_FALSE(o->set("acceptance_ratio", "0.0099").ok());
  EXPECT_FALSE(o->add_model("m", "/tmp/m.onnx", "classifier").ok()) << "not a role";
  EXPECT_TRUE(o->add_model("m", "/tmp/m.onnx", "embedder").ok());
  EXPECT_FALSE(o->add_model("m", "/tmp/m.onnx", "embedder").ok()) << "a second model of the same name";
  EXPECT_TRUE(o->set("model.m.form.i8", "/tmp/m.i8.onnx").ok());
  EXPECT_TRUE(o->set("model.m.form.w8", "/tmp/m_w8.onnx").ok());
  EXPECT_FALSE(o->set("model.m.form.w4", "/tmp/m_w4.onnx").ok()) << "no such form";
  EXPECT_FALSE(o->set("model.m.form.f32", "/tmp/m.onnx").ok()) << "f32 is the model itself";
}

// The C ABI itself: NULL handles and short structs are statuses, never crashes.
TEST(AbiC, MisuseIsAStatus) {
  EXPECT_GE(rung_abi_version(), 1);
  EXPECT_STRNE(rung_version_string(), "");
  EXPECT_EQ(rung_status_code(nullptr), RUNG_OK);
  EXPECT_STREQ(rung_status_message(nullptr), "");
  EXPECT_EQ(rung_status_exit_code(nullptr), 0);
  rung_status_free(nullptr);
  rung_engine* engine = nullptr;
  rung_status* st = rung_engine_start(nullptr, &engine);
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(rung_status_code(st), RUNG_INVALID_ARGUMENT);
  EXPECT_EQ(rung_status_exit_code(st), 2);
  rung_status_free(st);
  EXPECT_EQ(engine, nullptr) << "out-parameters are written only on success";
  rung_options* options = nullptr;
  ASSERT_EQ(rung_options_create(&options), nullptr);
  st = rung_engine_start(options, &engine);
  ASSERT_NE(st, nullptr) << "no cache directory, no model";
  EXPECT_NE(std::string(rung_status_message(st)).find("cache directory"), std::string::npos);
  rung_status_free(st);
  st = rung_options_set(options, nullptr, "x");
  ASSERT_NE(st, nullptr);
  rung_status_free(st);
  rung_options_free(options);
  EXPECT_EQ(rung_engine_about_line(nullptr), nullptr);
  EXPECT_EQ(rung_engine_wait_until_settled(nullptr, 0), 0);
  rung_engine_free(nullptr);
  rung_job_free(nullptr);
  rung_value_free(nullptr);
  rung_values_free(nullptr, 3);
  EXPECT_STREQ(rung_element_type_name(RUNG_BFLOAT16), "bfloat16");
  EXPECT_STREQ(rung_element_type_name(static_cast<rung_element_type>(1234)), "unknown");
  rung_value* v = nullptr;
  const std::int64_t shape[] = {2};
  const char* words[] = {"a", "b"};
  ASSERT_EQ(rung_value_create_strings("s", shape, 1, words, 2, &v), nullptr);
  EXPECT_EQ(rung_value_string_count(v), 2u);
  EXPECT_STREQ(rung_value_string(v, 1), "b");
  EXPECT_EQ(rung_value_string(v, 2), nullptr);
  std::size_t size = 7;
  EXPECT_EQ(rung_value_data(v, &size), nullptr);
  EXPECT_EQ(size, 0u);
  rung_value_free(v);
  st = rung_value_create_strings("s", shape, 1, words, 1, &v);
  ASSERT_NE(st, nullptr) << "one string for a shape of two";
  rung_status_free(st);
}

TEST_F(AbiLayer, AnOlderCallersSmallerStructIsFilledOnlyAsFarAsItReaches) {
  // A caller compiled when rung_io_info held only struct_size and name.
  struct Old {
    std::size_t struct_size;
    const char* name;
  };
  union {
    Old old;
    unsigned char raw[sizeof(rung_io_info) + 16];
  } buffer;
  std::memset(buffer.raw, 0xAB, sizeof buffer.raw);
  buffer.old.struct_size = sizeof(Old);
  ASSERT_EQ(rung_session_io(session().handle(), RUNG_INPUTS, 0, reinterpret_cast<rung_io_info*>(&buffer)), nullptr);
  EXPECT_STREQ(buffer.old.name, reference().at("input_name").c_str());
  for (std::size_t i = sizeof(Old); i < sizeof buffer.raw; ++i) ASSERT_EQ(buffer.raw[i], 0xAB) << "byte " << i << " written past the caller's struct";

  rung_io_info tiny{};
  tiny.struct_size = 1;
  rung_status* st = rung_session_io(session().handle(), RUNG_INPUTS, 0, &tiny);
  ASSERT_NE(st, nullptr);
  EXPECT_NE(std::string(rung_status_message(st)).find("struct_size"), std::string::npos);
  rung_status_free(st);
  rung_io_info info{};
  info.struct_size = sizeof info;
  st = rung_session_io(session().handle(), RUNG_INPUTS, 5, &info);
  ASSERT_NE(st, nullptr) << "past the last input";
  EXPECT_NE(std::string(rung_status_message(st)).find("has 1 inputs"), std::string::npos) << rung_status_message(st);
  rung_status_free(st);
}

// An index runs from 0 to the count less one, for inputs and outputs alike:
// the count itself is the first index refused.
TEST_F(AbiLayer, AnIndexEqualToTheCountIsRefusedAndTheOneBelowIsServed) {
  for (int32_t which : {RUNG_INPUTS, RUNG_OUTPUTS}) {
    const std::size_t count = rung_session_describe(session().handle(), which);
    ASSERT_GE(count, 1u) << which;
    rung_io_info info{};
    info.struct_size = sizeof info;
    EXPECT_EQ(rung_session_io(session().handle(), which, count - 1, &info), nullptr) << which;
    rung_status* st = rung_session_io(session().handle(), which, count, &info);
    ASSERT_NE(st, nullptr) << "index " << count << " of " << count;
    EXPECT_EQ(rung_status_code(st), RUNG_INVALID_ARGUMENT) << rung_status_message(st);
    rung_status_free(st);
  }
}


// Sets a variable for one scope (the engine must not read it unless asked).
class ScopedVariable {
 public:
  ScopedVariable(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedVariable() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  ScopedVariable(const ScopedVariable&) = delete;
  ScopedVariable& operator=(const ScopedVariable&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// The reference's options less the two that this test leaves to the defaults or sets itself.
rung::Options options_without(const fs::path& cache, const std::vector<std::string>& left_out) {
  auto o = rung::Options::create();
  EXPECT_TRUE(o.ok());
  const std::map<std::string, std::string> keys = {
      {"cache_dir", cache.string()},           {"plugin_dir", env("RUNG_TEST_PLUGIN_DIR")},
      {"runtime_dir", env("RUNG_TEST_RUNTIME_DIR")}, {"runtime_default_locations", "false"},
      {"worker", env("RUNG_TEST_WORKER")},    {"hardware_root", env("RUNG_TEST_HARDWARE_ROOT")},
      {"probe_runs", "1"},                     {"inference_threads", "1"}, {"acceptance_ratio", "1000"}};
  for (const auto& [k, v] : keys) {
    if (std::find(left_out.begin(), left_out.end(), k) == left_out.end()) {
      EXPECT_TRUE(o->set(k, v).ok()) << k;
    }
  }
  EXPECT_TRUE(o->add_model("ppocr_cls", env("RUNG_TEST_MODEL"), "generic").ok());
  return std::move(*o);
}

// Hermetic by default: rung's variables, each set to a hostile value around the
// application, change nothing unless it opts in (`environment`); and even then
// RUNG_PLUGIN_DIR never loads a plugin into the application's process.
TEST(AbiEnvironment, RungsVariablesChangeNothingUnlessTheApplicationOptsIn) {
  const auto ref = reference();
  ASSERT_NE(ref.at("rung"), "cpu") << "the reference must run on the plugin, or the plugin check below proves nothing";
  const fs::path dir = fs::temp_directory_path() / ("rung-abi-environment-" + std::to_string(::getpid()));
  fs::create_directories(dir / "empty");
  {
    ScopedVariable ort("RUNG_ORT_DIR", (dir / "empty").string());
    ScopedVariable forced("RUNG_FORCE_RUNG", "no_such_rung");
    ScopedVariable plugins("RUNG_PLUGIN_DIR", (dir / "empty").string());
    ScopedVariable worker("RUNG_PROBE_WORKER", "/bin/false");
    ScopedVariable gpu("RUNG_SOFTWARE_GPU", "1");
    ScopedVariable gpu_dir("RUNG_SOFTWARE_GPU_DIR", (dir / "empty").string());
    ScopedVariable cache("RUNG_CACHE_DIR", (dir / "empty").string());
    auto e = rung::Engine::start(options_without(dir / "cache1", {}));
    ASSERT_TRUE(e.ok()) << e.error().message;
    ASSERT_TRUE(e->wait_until_settled());
    EXPECT_EQ(e->chosen_rung(), ref.at("rung"));
    EXPECT_EQ(e->about_line().find("RUNG_"), std::string::npos) << e->about_line();
    EXPECT_EQ(e->chosen_reason().find("RUNG_"), std::string::npos) << e->chosen_reason();

    // Opted in, the same variables are read: RUNG_ORT_DIR names no build, and the start says so.
    auto opted = options_without(dir / "cache2", {});
    ASSERT_TRUE(opted.set("environment", "true").ok());
    auto reading = rung::Engine::start(opted);
    ASSERT_FALSE(reading.ok());
    EXPECT_EQ(reading.error().code, rung::ErrorCode::kNoRuntime);
    EXPECT_NE(reading.error().message.find("RUNG_ORT_DIR"), std::string::npos) << reading.error().message;
  }
  {
    // Opted in, with a plugin directory in RUNG_PLUGIN_DIR alone: still never loaded in process.
    ScopedVariable plugins("RUNG_PLUGIN_DIR", env("RUNG_TEST_PLUGIN_DIR"));
    auto opted = options_without(dir / "cache3", {"plugin_dir"});
    ASSERT_TRUE(opted.set("environment", "true").ok());
    auto e = rung::Engine::start(opted);
    ASSERT_TRUE(e.ok()) << e.error().message;
    ASSERT_TRUE(e->wait_until_settled());
    EXPECT_EQ(e->chosen_rung(), "cpu") << e->about_line();
  }
  fs::remove_all(dir);
}

TEST_F(AbiLayer, AnInputGivenTwiceIsRefusedNamingIt) {
  const auto input = bytes_of(fs::path(env("RUNG_TEST_REFERENCE_DIR")) / "input.bin");
  const std::string name = reference().at("input_name");
  std::vector<rung::TensorData> inputs;
  for (int i = 0; i < 2; ++i) inputs.push_back(rung::TensorData::view(name, RUNG_FLOAT32, {1, 3, 48, 192}, std::span<const std::byte>(input)).value());
  auto out = session().run(inputs);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().code, rung::ErrorCode::kInvalidArgument);
  EXPECT_NE(out.error().message.find("input '" + name + "' is given twice"), std::string::npos) << out.error().message;
}

// A timeout saturates (INT64_MAX and Rust's Duration::MAX are "for ever", never "at once").
TEST_F(AbiLayer, AWaitsTimeoutSaturatesAtEachEnd) {
  rung_engine* e = engine_->handle();
  EXPECT_EQ(rung_engine_wait_until_settled(e, INT64_MAX), 1);
  EXPECT_EQ(rung_engine_wait_until_settled(e, INT64_MAX - 1), 1);
  EXPECT_EQ(rung_engine_wait_until_settled(e, -1), 1);
  EXPECT_EQ(rung_engine_wait_until_settled(e, INT64_MIN), 1);
  EXPECT_EQ(rung_engine_wait_until_settled(e, 0), 1);
  EXPECT_EQ(rung_engine_wait_until_settled(e, 1), 1);
}

TEST(AbiOptions, AModelsNameKeepsTheRuleAtEachBoundary) {
  auto o = rung::Options::create().value();
  for (const std::string good : {"a", "9lives", "a.b-c_d", "ppocr_det_v4"}) EXPECT_TRUE(o.add_model(good, "/tmp/m.onnx", "generic").ok()) << good;
  EXPECT_TRUE(o.add_model(std::string(64, 'm'), "/tmp/m.onnx", "generic").ok()) << "64 characters";
  for (const std::string& bad : {std::string(65, 'n'), std::string(), std::string("../../../../escaped"), std::string("/tmp/absolute"),
                                std::string(".hidden"), std::string("_x"), std::string("-x"), std::string("a b"), std::string("a\\b"),
                                std::string("a\x1b[2J"), std::string("caf\xc3\xa9")}) {
    auto st = o.add_model(bad, "/tmp/m.onnx", "generic");
    ASSERT_FALSE(st.ok()) << bad;
    EXPECT_EQ(st.error().code, rung::ErrorCode::kInvalidArgument) << bad;
    EXPECT_EQ(st.error().message.find('\x1b'), std::string::npos) << "the message shows the name printably";
  }
}

// Every text an application hands the ABI must be UTF-8: a status naming the argument, never an abort later.
TEST(AbiC, TextThatIsNotUtf8IsRefusedNamingTheArgument) {
  rung_options* options = nullptr;
  ASSERT_EQ(rung_options_create(&options), nullptr);
  auto expect_refused = [](rung_status* st, const std::string& names) {
    ASSERT_NE(st, nullptr) << names;
    EXPECT_EQ(rung_status_code(st), RUNG_INVALID_ARGUMENT);
    const std::string message = rung_status_message(st);
    EXPECT_NE(message.find(names), std::string::npos) << message;
    EXPECT_NE(message.find("is not UTF-8"), std::string::npos) << message;
    rung_status_free(st);
  };
  expect_refused(rung_options_set(options, "cache_dir", "/tmp/caf\xe9"), "the value of cache_dir");
  expect_refused(rung_options_set(options, "cache\xff", "/tmp"), "the key");
  expect_refused(rung_options_add_model(options, "m\xfe", "/tmp/m.onnx", "generic"), "the name");
  expect_refused(rung_options_add_model(options, "m", "/tmp/\xc3(.onnx", "generic"), "model m's path");
  expect_refused(rung_options_add_model(options, "m", "/tmp/m.onnx", "gen\x80"), "model m's role");
  rung_value* v = nullptr;
  float x = 0;
  const std::int64_t shape[] = {1};
  expect_refused(rung_value_create_view("x\xff", RUNG_FLOAT32, shape, 1, &x, sizeof x, &v), "the input name");
  EXPECT_EQ(v, nullptr);
  EXPECT_EQ(rung_options_set(options, "cache_dir", "/tmp/caf\xc3\xa9"), nullptr) << "UTF-8 is fine";
  rung_options_free(options);
}

TEST_F(AbiLayer, AModelNameThatIsNotUtf8IsRefusedByTheJob) {
  rung_session* s = nullptr;
  rung_job* job = nullptr;
  ASSERT_EQ(rung_engine_open_job(engine_->handle(), &job), nullptr);
  rung_status* st = rung_job_session(job, "ppocr\xff", &s);
  ASSERT_NE(st, nullptr);
  EXPECT_NE(std::string(rung_status_message(st)).find("the model name is not UTF-8"), std::string::npos) << rung_status_message(st);
  rung_status_free(st);
  rung_job_free(job);
}

// The C++ layer keeps its promise: value() on an error throws rung::Error with rung's message and exit code.
TEST(AbiCppLayer, ValueOnAnErrorThrowsRungsError) {
  auto o = rung::Options::create().value();
  try {
    o.set("no_such_key", "1").value();
    FAIL() << "value() on a failed Status must throw";
  } catch (const rung::Error& e) {
    EXPECT_EQ(e.code, rung::ErrorCode::kInvalidArgument);
    EXPECT_EQ(e.exit_code(), 2);
    EXPECT_NE(std::string(e.what()).find("unknown option key 'no_such_key'"), std::string::npos) << e.what();
  }
  try {
    (void)rung::Engine::start(o).value();  // no cache directory, no model
    FAIL() << "value() on a failed Result must throw";
  } catch (const std::exception& e) {  // rung::Error is one
    EXPECT_NE(dynamic_cast<const rung::Error*>(&e), nullptr) << "not std::bad_variant_access: " << e.what();
    EXPECT_NE(std::string(e.what()).find("cache directory"), std::string::npos) << e.what();
  }
}

TEST(AbiOptions, ACacheDirectoryThatIsAFileIsRefused) {
  const fs::path dir = fs::temp_directory_path() / ("rung-abi-cache-file-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "file") << "x";
  auto e = rung::Engine::start(options_for(dir / "file", env("RUNG_TEST_MODEL")));
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().code, rung::ErrorCode::kInvalidArgument);
  EXPECT_NE(e.error().message.find(": is a regular file, not a directory"), std::string::npos) << e.error().message;
  fs::remove_all(dir);
}

// The engine finds its worker from where librung_engine was loaded, never from the
// application's executable: a copy of the library with no worker beside it (nor in
// a kit's libexec/rung) fails to start with isolation on, naming each place; the
// same copy laid out as a kit (lib/ beside libexec/rung/) starts.
TEST(AbiIsolation, TheWorkerIsFoundFromTheLibraryOrTheStartFails) {
  const fs::path dir = fs::temp_directory_path() / ("rung-abi-kit-" + std::to_string(::getpid()));
  const fs::path library = fs::path(env("RUNG_LIB_DIR")) / "librung_engine.so.1";
  for (const bool with_worker : {false, true}) {
    const fs::path kit = dir / (with_worker ? "kit" : "bare");
    fs::create_directories(kit / "lib");
    fs::copy_file(library, kit / "lib" / "librung_engine.so.1", fs::copy_options::overwrite_existing);
    if (with_worker) {
      fs::create_directories(kit / "libexec" / "rung");
      fs::copy_file(env("RUNG_TEST_WORKER"), kit / "libexec" / "rung" / "rung-probe-worker", fs::copy_options::overwrite_existing);
    }
    void* handle = ::dlopen((kit / "lib" / "librung_engine.so.1").c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle, nullptr) << ::dlerror();
    auto sym = [&](const char* name) {
      void* f = ::dlsym(handle, name);
      EXPECT_NE(f, nullptr) << name;
      return f;
    };
    auto create = reinterpret_cast<rung_status* (*)(rung_options**)>(sym("rung_options_create"));
    auto set = reinterpret_cast<rung_status* (*)(rung_options*, const char*, const char*)>(sym("rung_options_set"));
    auto add = reinterpret_cast<rung_status* (*)(rung_options*, const char*, const char*, const char*)>(sym("rung_options_add_model"));
    auto start = reinterpret_cast<rung_status* (*)(const rung_options*, rung_engine**)>(sym("rung_engine_start"));
    auto message = reinterpret_cast<const char* (*)(const rung_status*)>(sym("rung_status_message"));
    auto code = reinterpret_cast<rung_error_code (*)(const rung_status*)>(sym("rung_status_code"));
    auto free_status = reinterpret_cast<void (*)(rung_status*)>(sym("rung_status_free"));
    auto free_options = reinterpret_cast<void (*)(rung_options*)>(sym("rung_options_free"));
    auto free_engine = reinterpret_cast<void (*)(rung_engine*)>(sym("rung_engine_free"));
    rung_options* o = nullptr;
    ASSERT_EQ(create(&o), nullptr);
    for (const auto& [k, v] : std::map<std::string, std::string>{{"cache_dir", (kit / "cache").string()},
                                                                {"runtime_dir", env("RUNG_TEST_RUNTIME_DIR")},
                                                                {"runtime_default_locations", "false"},
                                                                {"hardware_root", env("RUNG_TEST_HARDWARE_ROOT")}}) {
      ASSERT_EQ(set(o, k.c_str(), v.c_str()), nullptr) << k;
    }
    ASSERT_EQ(add(o, "ppocr_cls", env("RUNG_TEST_MODEL").c_str(), "generic"), nullptr);
    rung_engine* engine = nullptr;
    rung_status* st = start(o, &engine);
    free_options(o);
    if (with_worker) {
      EXPECT_EQ(st, nullptr) << message(st);
      free_engine(engine);  // at once: the probe in the kit's worker is stopped
    } else {
      ASSERT_NE(st, nullptr);
      EXPECT_EQ(code(st), RUNG_NOT_FOUND);
      const std::string text = message(st);
      EXPECT_NE(text.find((kit / "lib" / "rung-probe-worker").string()), std::string::npos) << text;
      EXPECT_NE(text.find("libexec"), std::string::npos) << text;
      EXPECT_EQ(text.find(fs::read_symlink("/proc/self/exe").parent_path().string() + "/rung-probe-worker"), std::string::npos)
          << "the application's executable is no place to look: " << text;
      free_status(st);
    }
    // Not dlclose'd: a library whose threads may still be ending stays mapped.
  }
  fs::remove_all(dir);
}


// A runtime_dir the application names serves, or the start says why in a status of
// its own kind: a build that does not load, a location others can write to, an
// empty directory and nowhere to look are four different answers.
TEST(AbiOptions, ANamedRuntimeDirectoryServesOrSaysWhyInAStatusOfItsOwn) {
  const fs::path dir = fs::temp_directory_path() / ("rung-abi-runtime-dir-" + std::to_string(::getpid()));
  fs::create_directories(dir / "open");
  fs::create_directories(dir / "empty");
  fs::copy_file(fs::path(env("RUNG_TEST_RUNTIME_DIR")) / "libonnxruntime.so.1", dir / "open" / "libonnxruntime.so.1");
  fs::permissions(dir / "open", fs::perms::all);  // 0777, no sticky bit: anyone may swap the library
  auto start_with = [&](const std::string& runtime_dir) {
    auto o = options_without(dir / "cache", {"runtime_dir"});
    if (!runtime_dir.empty()) {
      EXPECT_TRUE(o.set("runtime_dir", runtime_dir).ok());
    }
    auto e = rung::Engine::start(o);
    EXPECT_FALSE(e.ok()) << runtime_dir;
    return e.ok() ? rung::Error(rung::ErrorCode::kRuntime, "started") : e.error();
  };
  const auto not_loading = start_with(env("RUNG_TEST_FAKE_RUNTIME"));
  EXPECT_EQ(not_loading.code, rung::ErrorCode::kLoadFailed) << not_loading.message;
  EXPECT_NE(not_loading.message.find("the runtime directory " + env("RUNG_TEST_FAKE_RUNTIME") + " cannot serve"), std::string::npos)
      << not_loading.message;
  const auto refused = start_with((dir / "open").string());
  EXPECT_EQ(refused.code, rung::ErrorCode::kPermission) << refused.message;
  EXPECT_NE(refused.message.find("writable by other users"), std::string::npos) << refused.message;
  const auto empty = start_with((dir / "empty").string());
  EXPECT_EQ(empty.code, rung::ErrorCode::kInvalidArgument) << empty.message;
  EXPECT_NE(empty.message.find("holds no"), std::string::npos) << empty.message;
  const auto nowhere = start_with("");
  EXPECT_EQ(nowhere.code, rung::ErrorCode::kNoRuntime) << nowhere.message;
  fs::remove_all(dir);
}


// A cache file of random bytes (not UTF-8, not JSON) is ignored and written again:
// the application keeps running and its engine decides as it would have.
TEST(AbiFaults, AProbeCacheOfRandomBytesIsIgnoredNotFatal) {
  const auto ref = reference();
  const fs::path dir = fs::temp_directory_path() / ("rung-abi-damaged-cache-" + std::to_string(::getpid()));
  fs::create_directories(dir / "cache");
  {
    std::ofstream junk(dir / "cache" / "probe.json", std::ios::binary);
    unsigned state = 12345;
    for (int i = 0; i < 4096; ++i) {
      state = state * 1103515245u + 12345u;
      junk.put(static_cast<char>(state >> 24));
    }
    junk << "\xff\xfe{\"rung\": \"\xc3\x28\"}";
  }
  auto e = rung::Engine::start(options_for(dir / "cache", env("RUNG_TEST_MODEL")));
  ASSERT_TRUE(e.ok()) << e.error().message;
  ASSERT_TRUE(e->wait_until_settled());
  EXPECT_EQ(e->chosen_rung(), ref.at("rung")) << e->about_line();
  EXPECT_FALSE(e->about_line().empty());
  fs::remove_all(dir);
}

// The document without its one line naming where the cache lies (a copy's differs).
std::string without_cache_file(const std::string& doc) {
  std::istringstream in(doc);
  std::string line, out;
  while (std::getline(in, line)) {
    if (line.find("\"cache_file\":") == std::string::npos) out += line + "\n";
  }
  return out;
}

// In C, on a copy of the reference's cache: the C++ engine core's document, line for line.
TEST(AbiDecision, TheDocumentIsTheCppEnginesFromTheC_Abi) {
  const fs::path ref_dir = env("RUNG_TEST_REFERENCE_DIR");
  const fs::path dir = fs::temp_directory_path() / ("rung-abi-decision-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::copy(ref_dir / "decision-cache", dir / "cache", fs::copy_options::recursive);
  auto e = rung::Engine::start(options_for(dir / "cache", env("RUNG_TEST_MODEL")));
  ASSERT_TRUE(e.ok()) << e.error().message;
  ASSERT_TRUE(e->wait_until_settled());
  char* text = rung_engine_decision_json(e->handle());
  ASSERT_NE(text, nullptr);
  const std::string doc = text;
  rung_string_free(text);
  std::ifstream in(ref_dir / "decision.json");
  const std::string expected((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(without_cache_file(doc), without_cache_file(expected));
  EXPECT_NE(doc.find("\"state\": \"decided\""), std::string::npos) << doc;
  EXPECT_EQ(e->decision_json(), doc);  // the C++ layer's is the C function's
  EXPECT_EQ(rung_engine_decision_json(nullptr), nullptr);
  fs::remove_all(dir);
}

// Each whole-number key at both ends of its range, one value at a time: the
// lowest it takes and the one below, the highest and the one above.
TEST(AbiOptions, EachNumericKeyTakesItsBoundsAndRefusesOneBeyondEither) {
  struct Range {
    const char* key;
    long long low, high;
  };
  const long long day_ms = 24LL * 3600 * 1000;
  for (const Range& r : {Range{"probe_runs", 1, 1000}, Range{"probe_deadline_ms", 1, day_ms}, Range{"build_deadline_ms", 1, day_ms},
                         Range{"worker_memory_mb", 0, 1LL << 24}, Range{"tensorrt_workspace_mb", 1, 1LL << 20}}) {
    auto o = rung::Options::create().value();
    EXPECT_TRUE(o.set(r.key, std::to_string(r.low)).ok()) << r.key << " takes " << r.low;
    EXPECT_TRUE(o.set(r.key, std::to_string(r.high)).ok()) << r.key << " takes " << r.high;
    for (long long beyond : {r.low - 1, r.high + 1}) {
      auto st = o.set(r.key, std::to_string(beyond));
      ASSERT_FALSE(st.ok()) << r.key << " refuses " << beyond;
      EXPECT_EQ(st.error().code, rung::ErrorCode::kInvalidArgument);
      EXPECT_NE(st.error().message.find(r.key), std::string::npos) << st.error().message;
    }
  }
  // Threads: 0 (the default pool) to the CPUs this machine gives rung, which the refusal names.
  auto o = rung::Options::create().value();
  EXPECT_TRUE(o.set("inference_threads", "0").ok());
  EXPECT_FALSE(o.set("inference_threads", "-1").ok());
  auto st = o.set("inference_threads", "100000");
  ASSERT_FALSE(st.ok());
  const std::string said = st.error().message;
  const auto at = said.find("this machine gives rung ");
  ASSERT_NE(at, std::string::npos) << said;
  const long cpus = std::strtol(said.c_str() + at + std::strlen("this machine gives rung "), nullptr, 10);
  ASSERT_GE(cpus, 1) << said;
  EXPECT_TRUE(o.set("inference_threads", std::to_string(cpus)).ok()) << cpus;
  EXPECT_FALSE(o.set("inference_threads", std::to_string(cpus + 1)).ok()) << cpus + 1;
}

// The keys the kit and the manifest brought, each at its boundary.
TEST(AbiOptions, AWorkersMemoryLimitAndTheManifestKeysKeepTheirRules) {
  auto o = rung::Options::create().value();
  EXPECT_TRUE(o.set("worker_memory_mb", "0").ok()) << "0: no limit";
  EXPECT_TRUE(o.set("worker_memory_mb", "16777216").ok());
  for (const char* bad : {"16777217", "-1", "1.5", "64MiB", ""}) {
    auto st = o.set("worker_memory_mb", bad);
    ASSERT_FALSE(st.ok()) << bad;
    EXPECT_EQ(st.error().code, rung::ErrorCode::kInvalidArgument);
    EXPECT_NE(st.error().message.find("worker_memory_mb"), std::string::npos) << st.error().message;
  }
  EXPECT_TRUE(o.set("manifest_variable.RUNG_DEPS_DIR", "/opt/models").ok());
  for (const char* bad : {"manifest_variable.", "manifest_variable.A}B", "manifest_variable.${A}"}) {
    EXPECT_FALSE(o.set(bad, "/x").ok()) << bad;
  }

  // A manifest and a model added by hand both name models: the start refuses, naming both.
  const fs::path dir = fs::temp_directory_path() / ("rung-abi-manifest-keys-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string manifest = env("RUNG_TEST_MANIFESTS_DIR") + "/bundled.variants.json";
  auto both = options_for(dir / "cache", env("RUNG_TEST_MODEL"));
  ASSERT_TRUE(both.set("variant_manifest", manifest).ok());
  auto e = rung::Engine::start(both);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().code, rung::ErrorCode::kInvalidArgument);
  EXPECT_NE(e.error().message.find("both a variant manifest"), std::string::npos) << e.error().message;
  // A deployment alone says nothing: refused.
  auto alone = options_for(dir / "cache", env("RUNG_TEST_MODEL"));
  ASSERT_TRUE(alone.set("deployment", env("RUNG_TEST_MANIFESTS_DIR") + "/bundled.deployment.json").ok());
  e = rung::Engine::start(alone);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message.find("without a variant manifest"), std::string::npos) << e.error().message;
  // A manifest that is not there is NOT_FOUND naming it.
  auto missing = rung::Options::create().value();
  ASSERT_TRUE(missing.set("cache_dir", (dir / "cache").string()).ok());
  ASSERT_TRUE(missing.set("variant_manifest", (dir / "none.variants.json").string()).ok());
  e = rung::Engine::start(missing);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().code, rung::ErrorCode::kNotFound) << e.error().message;
  EXPECT_NE(e.error().message.find("none.variants.json"), std::string::npos) << e.error().message;
  fs::remove_all(dir);
}

// The bundled manifest through the C ABI, as `rung prepare` takes it: on this CPU the
// forms that pay (tools/make-forms.sh made them here), under their model ids, and the
// same model id and rung for every model as the command reports for the same manifest.
TEST(AbiVariants, TheBundledManifestsQuantisedFormsRunOnTheCpuAsPrepareRunsThem) {
  const fs::path manifests = env("RUNG_TEST_MANIFESTS_DIR");
  const fs::path deps = fs::path(env("RUNG_TEST_MODELS_DIR")).parent_path();
  for (const char* form : {"ppocr_det_v4_i8.onnx", "ppocr_cls_w8.onnx"}) {
    ASSERT_TRUE(fs::exists(deps / "forms" / form)) << deps / "forms" / form << ": tools/make-forms.sh makes it (tools/bootstrap.sh --tests runs it)";
  }
  const fs::path dir = fs::temp_directory_path() / ("rung-abi-variants-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  auto o = rung::Options::create().value();
  const std::map<std::string, std::string> keys = {
      {"cache_dir", (dir / "cache").string()}, {"runtime_dir", env("RUNG_TEST_RUNTIME_DIR")},
      {"runtime_default_locations", "false"},  {"worker", env("RUNG_TEST_WORKER")},
      {"hardware_root", env("RUNG_TEST_HARDWARE_ROOT")}, {"probe_runs", "1"}, {"inference_threads", "1"},
      {"variant_manifest", (manifests / "bundled.variants.json").string()},
      {"deployment", (manifests / "bundled.deployment.json").string()},
      {"manifest_variable.RUNG_DEPS_DIR", deps.string()}};
  for (const auto& [k, v] : keys) ASSERT_TRUE(o.set(k, v).ok()) << k;
  auto e = rung::Engine::start(o);
  ASSERT_TRUE(e.ok()) << e.error().message;
  ASSERT_TRUE(e->wait_until_settled());
  // `rung prepare` on the same manifest, deployment and device facts.
  const std::string command = "'" + env("RUNG_CLI") + "' prepare --variants '" + (manifests / "bundled.variants.json").string() +
                              "' --deployment '" + (manifests / "bundled.deployment.json").string() + "' --cache-dir '" +
                              (dir / "cli-cache").string() + "' --ort-dir '" + env("RUNG_TEST_RUNTIME_DIR") + "' --hardware-root '" +
                              env("RUNG_TEST_HARDWARE_ROOT") + "' --threads 1 --json";
  std::string text;
  {
    std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen(("env RUNG_DEPS_DIR='" + deps.string() + "' " + command).c_str(), "r"), ::pclose);
    ASSERT_NE(pipe, nullptr);
    char buffer[4096];
    for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe.get())) > 0;) text.append(buffer, n);
  }
  const auto doc = nlohmann::json::parse(text, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << command << "\n" << text;
  std::map<std::string, std::pair<std::string, std::string>> through_prepare, through_abi;  // model -> (model id, rung)
  for (const auto& m : doc.at("models")) through_prepare[m.at("model")] = {m.at("model_id"), m.at("rung")};
  ASSERT_GE(through_prepare.size(), 4u) << text;

  auto job = e->open_job().value();
  for (const auto& [model, _] : through_prepare) {
    auto session = job.session(model);
    ASSERT_TRUE(session.ok()) << model << ": " << session.error().message;
    through_abi[model] = {session->model_id(), session->rung()};
  }
  EXPECT_EQ(through_abi["ppocr_det_v4"], std::make_pair(std::string("ppocr_det_v4_i8"), std::string("cpu")));
  EXPECT_EQ(through_abi["ppocr_cls"], std::make_pair(std::string("ppocr_cls_w8"), std::string("cpu")));
  // The int8 detector runs, its file the form's.
  auto det = job.session("ppocr_det_v4").value();
  std::vector<float> page(3 * 64 * 64, 0.5f);
  std::vector<rung::TensorData> in;
  in.push_back(rung::TensorData::view<float>("x", RUNG_FLOAT32, {1, 3, 64, 64}, page).value());
  auto out = det.run(in);
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(through_abi, through_prepare);
  fs::remove_all(dir);
}

}  // namespace
