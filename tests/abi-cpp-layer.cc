// The C++ layer (rung/engine.h) and the C ABI under it, linked against the
// shared librung_engine alone: the same bytes as the C++ engine core on the
// abi_reference fixture's crop, and every misuse a status, never a crash.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "rung/engine.h"

namespace fs = std::filesystem;

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') ADD_FAILURE() << name << " is not set (ctest sets it)";
  return v == nullptr ? std::string() : std::string(v);
}

std::vector<std::byte> bytes_of(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> out(chars.size());
  std::memcpy(out.data(), chars.data(), chars.size());
  return out;
}

std::map<std::string, std::string> reference() {
  std::map<std::string, std::string> out;
  std::ifstream in(fs::path(env("RUNG_TEST_REFERENCE_DIR")) / "reference.txt");
  for (std::string line; std::getline(in, line);) {
    if (auto eq = line.find('='); eq != std::string::npos) out[line.substr(0, eq)] = line.substr(eq + 1);
  }
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

}  // namespace
