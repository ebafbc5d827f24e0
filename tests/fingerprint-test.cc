// The probe's fingerprint holds every input that can change a verdict, by
// content: each test changes exactly one of them and expects a new fingerprint;
// changes that cannot change a verdict (a tensor directory moved, its bytes the
// same) keep it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "probe/fingerprint.h"
#include "rung/ladder.h"
#include "test_support.h"

namespace rung {
namespace {
namespace fs = std::filesystem;

class FingerprintTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::make_temp_dir("rung-fingerprint");
    fs::create_directories(dir_ / "ort");
    fs::create_directories(dir_ / "tensors");
    write("ort/libonnxruntime.so.1", "core 1");
    write("ort/libonnxruntime_providers_cuda.so", "cuda provider 1");
    write("ort/libonnxruntime_providers_shared.so", "bridge 1");
    write("plugin.so", "plugin 1");
    write("model.onnx", "model 1");
    write("tensors/x.pb", "tensor 1");
    build_.library = dir_ / "ort" / "libonnxruntime.so.1";
    build_.version = "1.30.0";
    build_.api_version = 23;
    build_.providers = {"CUDAExecutionProvider", "CPUExecutionProvider"};
    RungSpec cuda;
    cuda.name = "cuda";
    cuda.provider = "CUDAExecutionProvider";
    cuda.provider_libraries = {"libonnxruntime_providers_cuda.so", "libonnxruntime_providers_shared.so"};
    RungSpec sim;
    sim.name = "sim";
    sim.provider = "RungSimAccelerator";
    sim.plugin_library = (dir_ / "plugin.so").string();
    RungSpec cpu;
    cpu.name = "cpu";
    cpu.provider = "CPUExecutionProvider";
    ladder_ = {sim, cuda, cpu};
    RegisteredModel m;
    m.name = "m";
    m.path = dir_ / "model.onnx";
    m.inputs.tensors_dir = dir_ / "tensors";
    options_.models = {m};
    options_.cache_dir = dir_ / "cache";
  }
  void TearDown() override { fs::remove_all(dir_); }

  void write(const std::string& rel, const std::string& text) {
    std::ofstream(dir_ / rel, std::ios::trunc) << text;
    // A new file time each write, as an edit would leave; the hash cache must not hide a change.
    fs::last_write_time(dir_ / rel, fs::last_write_time(dir_ / rel) + std::chrono::seconds(++tick_));
  }

  std::string fingerprint() {
    FileHashCache hashes(options_.cache_dir);
    auto f = make_fingerprint({&build_, &hardware_, &ladder_, &options_, {"m"}}, hashes);
    EXPECT_TRUE(f) << f.error().message;
    return f ? *f : "";
  }

  fs::path dir_;
  int tick_ = 0;
  RuntimeBuild build_;
  Hardware hardware_;
  std::vector<RungSpec> ladder_;
  ProbeOptions options_;
};

TEST_F(FingerprintTest, NothingChangedNothingChanges) { EXPECT_EQ(fingerprint(), fingerprint()); }

TEST_F(FingerprintTest, TheRuntimeLibrarysBytes) {
  const auto before = fingerprint();
  write("ort/libonnxruntime.so.1", "core 2");
  EXPECT_NE(fingerprint(), before);
}

TEST_F(FingerprintTest, AProviderLibrarysBytesNotOnlyTheProviderList) {
  const auto before = fingerprint();
  write("ort/libonnxruntime_providers_cuda.so", "cuda provider 2");
  EXPECT_NE(fingerprint(), before);
  const auto after_cuda = fingerprint();
  write("ort/libonnxruntime_providers_shared.so", "bridge 2");
  EXPECT_NE(fingerprint(), after_cuda);
}

TEST_F(FingerprintTest, APluginLibrarysBytes) {
  const auto before = fingerprint();
  write("plugin.so", "plugin 2");
  EXPECT_NE(fingerprint(), before);
}

TEST_F(FingerprintTest, TheModelsBytes) {
  const auto before = fingerprint();
  write("model.onnx", "model 2");
  EXPECT_NE(fingerprint(), before);
}

TEST_F(FingerprintTest, RecordedTensorsByTheirBytes) {
  const auto before = fingerprint();
  write("tensors/x.pb", "tensor 2");
  EXPECT_NE(fingerprint(), before);
  const auto after_edit = fingerprint();
  write("tensors/y.pb", "another input");
  EXPECT_NE(fingerprint(), after_edit);
}

TEST_F(FingerprintTest, RecordedTensorsMovedWithTheSameBytesKeepIt) {
  const auto before = fingerprint();
  fs::rename(dir_ / "tensors", dir_ / "moved");
  options_.models[0].inputs.tensors_dir = dir_ / "moved";
  EXPECT_EQ(fingerprint(), before);
}

TEST_F(FingerprintTest, TheDeadline) {
  const auto before = fingerprint();
  options_.probe_deadline = std::chrono::milliseconds(1);
  EXPECT_NE(fingerprint(), before);
}

TEST_F(FingerprintTest, InProcessOrIsolated) {
  const auto before = fingerprint();
  options_.isolate = false;
  EXPECT_NE(fingerprint(), before);
}

TEST_F(FingerprintTest, EachSettingAlone) {
  const auto before = fingerprint();
  options_.probe_runs = 7;
  EXPECT_NE(fingerprint(), before);
  options_.probe_runs = ProbeOptions{}.probe_runs;
  options_.threads = 1;
  EXPECT_NE(fingerprint(), before);
  options_.threads = 0;
  options_.acceptance_ratio = 0.5;
  EXPECT_NE(fingerprint(), before);
  options_.acceptance_ratio = 1.0;
  options_.seed = 99;
  EXPECT_NE(fingerprint(), before);
  options_.seed = ProbeOptions{}.seed;
  EXPECT_EQ(fingerprint(), before);
}

TEST_F(FingerprintTest, TheRungsForm) {
  const auto before = fingerprint();
  ladder_[1].form = ModelForm::kF32ToF16Engine;
  EXPECT_NE(fingerprint(), before);
}

}  // namespace
}  // namespace rung
