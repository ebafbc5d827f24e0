// An application written against ONNX Runtime keeps its own run code: given the
// OrtApi table and the OrtSession the engine built on its chosen rung (rung.h,
// version 2), ONNX Runtime's own C++ API (onnxruntime_cxx_api.h, manual init)
// runs the classifier with IO binding and gives the engine's bytes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "onnxruntime_cxx_api.h"
#include "abi_test_env.h"
#include "rung/engine.h"

namespace fs = std::filesystem;

namespace {

using abi_test::env;
using abi_test::reference;

std::vector<char> bytes_of(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(OrtInterop, OnnxRuntimesOwnCppApiOverTheHandedSessionGivesTheEnginesBytes) {
  const auto ref = reference();
  const fs::path dir = fs::temp_directory_path() / ("rung-ort-interop-" + std::to_string(::getpid()));
  auto o = rung::Options::create().value();
  for (const auto& [k, v] : std::map<std::string, std::string>{
           {"cache_dir", (dir / "cache").string()}, {"plugin_dir", env("RUNG_TEST_PLUGIN_DIR")},
           {"runtime_dir", env("RUNG_TEST_RUNTIME_DIR")}, {"runtime_default_locations", "false"},
           {"worker", env("RUNG_TEST_WORKER")}, {"hardware_root", env("RUNG_TEST_HARDWARE_ROOT")},
           {"probe_runs", "1"}, {"inference_threads", "1"}, {"acceptance_ratio", "1000"}}) {
    o.set(k, v).value();
  }
  o.add_model("ppocr_cls", env("RUNG_TEST_MODEL"), "generic").value();
  auto engine = rung::Engine::start(o).value();
  ASSERT_TRUE(engine.wait_until_settled());
  auto job = engine.open_job().value();
  auto session = job.session("ppocr_cls").value();
  ASSERT_EQ(session.rung(), ref.at("rung"));
  ASSERT_NE(session.ort_api(), nullptr);
  ASSERT_NE(session.ort_session(), nullptr);
  ASSERT_GE(session.ort_api_version(), 17u);
  // The header's version is newer than some builds rung serves: what the table holds is what may be called.
  ASSERT_LE(session.ort_api_version(), static_cast<std::uint32_t>(ORT_API_VERSION));
  Ort::InitApi(static_cast<const OrtApi*>(session.ort_api()));

  Ort::Session ort(static_cast<OrtSession*>(session.ort_session()));  // rung's: released, never freed, below
  EXPECT_EQ(ort.GetInputCount(), 1u);
  Ort::AllocatorWithDefaultOptions allocator;
  EXPECT_EQ(std::string(ort.GetInputNameAllocated(0, allocator).get()), ref.at("input_name"));

  auto input = bytes_of(fs::path(env("RUNG_TEST_REFERENCE_DIR")) / "input.bin");
  const auto expected = bytes_of(fs::path(env("RUNG_TEST_REFERENCE_DIR")) / "output.bin");
  const std::vector<int64_t> shape = {1, 3, 48, 192};
  auto memory = Ort::MemoryInfo::CreateCpu(OrtArenaAllocator, OrtMemTypeDefault);
  auto x = Ort::Value::CreateTensor(memory, input.data(), input.size(), shape.data(), shape.size(),
                                    ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT);
  Ort::IoBinding binding(ort);
  binding.BindInput(ref.at("input_name").c_str(), x);
  // A pre-allocated output, bound by the application: [1, 2] float32.
  std::vector<float> out(expected.size() / sizeof(float));
  const std::vector<int64_t> out_shape = {1, static_cast<int64_t>(out.size())};
  auto y = Ort::Value::CreateTensor<float>(memory, out.data(), out.size(), out_shape.data(), out_shape.size());
  binding.BindOutput(ref.at("output_name").c_str(), y);
  Ort::RunOptions run_options;
  run_options.SetRunTag("application");
  ort.Run(run_options, binding);
  ort.release();

  ASSERT_EQ(out.size() * sizeof(float), expected.size());
  EXPECT_EQ(std::memcmp(out.data(), expected.data(), expected.size()), 0) << "ONNX Runtime's own run differs from the engine's bytes";
  // rung's own run on the same session still works: the session was not released.
  std::vector<rung::TensorData> inputs;
  inputs.push_back(rung::TensorData::view(ref.at("input_name"), RUNG_FLOAT32, {1, 3, 48, 192},
                                          std::as_bytes(std::span<const char>(input.data(), input.size())))
                       .value());
  auto again = session.run(inputs).value();
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(std::memcmp(again[0].bytes().data(), expected.data(), expected.size()), 0);
  fs::remove_all(dir);
}

}  // namespace
