// The engine through its C ABI as an application on Windows meets it (under
// wine): every path handed over as UTF-8, beyond ASCII and past MAX_PATH (the
// default cache under LOCALAPPDATA is the CLI's: windows.cli_paths). Each must build its
// sessions, run the classifier and leave its decision where it was asked to,
// with nothing of the probe's work behind (a long path once hung the probe:
// std::filesystem's listing of it listed the current directory instead).
#include <windows.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "os/windows/text.h"
#include "rung/directory.h"
#include "rung/rung.h"
#include "temp_dir_test.h"

namespace rung {
namespace {

namespace fs = std::filesystem;

const fs::path kModels = fs::path(RUNG_TEST_MODELS);
const std::string kRuntimes = std::string(RUNG_TEST_WINDOWS_DEPS) + "/runtimes";

std::string message_of(rung_status* st) {
  std::string m = st != nullptr ? rung_status_message(st) : "";
  rung_status_free(st);
  return m;
}

class AbiPathsTest : public test::TempDirTest {
 protected:
  AbiPathsTest() : TempDirTest("rung-abi-paths") {}
  void TearDown() override {
    std::error_code ec;
    remove_tree(dir_, ec);  // std::filesystem's remove_all never returns past MAX_PATH (rung/directory.h)
  }

  // Copies the classifier to `to` (its parent made), through the wide API.
  static void copy_model(const fs::path& to) {
    fs::create_directories(to.parent_path());
    ASSERT_TRUE(CopyFileW((kModels / "ppocr" / "ch_ppocr_mobile_v2.0_cls_infer.onnx").c_str(), to.c_str(), FALSE))
        << windows_error_text(GetLastError());
  }

  // Starts an engine on `model` with `cache` as its cache_dir, runs the
  // classifier once and frees it; the failure's message, or "".
  static std::string run_classifier(const fs::path& model, const fs::path& cache) {
    rung_options* options = nullptr;
    if (rung_status* st = rung_options_create(&options)) return message_of(st);
    std::vector<std::pair<std::string, std::string>> set = {{"runtime_dir", kRuntimes},         {"probe_runs", "1"},
                                                             {"inference_threads", "1"},         {"runtime_default_locations", "false"},
                                                             {"runtime_environment", "false"}};
    set.emplace_back("cache_dir", cache.string());  // path::string() is UTF-8 here
    rung_status* st = rung_options_add_model(options, "ppocr_cls", model.string().c_str(), "generic");
    for (const auto& [key, value] : set) {
      if (st == nullptr) st = rung_options_set(options, key.c_str(), value.c_str());
    }
    rung_engine* engine = nullptr;
    if (st == nullptr) st = rung_engine_start(options, &engine);
    rung_options_free(options);
    if (st != nullptr) return message_of(st);
    rung_engine_wait_until_settled(engine, -1);
    static float pixels[3 * 48 * 192] = {};
    const int64_t shape[4] = {1, 3, 48, 192};
    rung_job* job = nullptr;
    rung_session* session = nullptr;
    rung_value* input = nullptr;
    rung_value** outputs = nullptr;
    size_t n_outputs = 0;
    if ((st = rung_engine_open_job(engine, &job)) == nullptr && (st = rung_job_session(job, "ppocr_cls", &session)) == nullptr &&
        (st = rung_value_create_view("x", RUNG_FLOAT32, shape, 4, pixels, sizeof pixels, &input)) == nullptr) {
      st = rung_session_run(session, reinterpret_cast<const rung_value* const*>(&input), 1, &outputs, &n_outputs);
    }
    std::string failure = message_of(st);
    if (failure.empty() && n_outputs != 1) failure = "the classifier gave " + std::to_string(n_outputs) + " outputs";
    rung_values_free(outputs, n_outputs);
    rung_value_free(input);
    rung_job_free(job);
    rung_engine_free(engine);
    return failure;
  }

  // Every file under `dir`, by rung's own listing (std::filesystem's fails past MAX_PATH).
  static std::vector<fs::path> files_under(const fs::path& dir) {
    auto all = list_directory(dir, {.recursive = true});
    EXPECT_TRUE(all) << (all ? "" : all.error().message);
    return all ? *all : std::vector<fs::path>{};
  }

  static void expect_a_decision_and_no_work_left(const fs::path& cache) {
    bool decision = false;
    for (const auto& f : files_under(cache)) {
      decision = decision || f.filename() == "probe.json";
      EXPECT_EQ(f.filename().string().rfind("probe-work", 0), std::string::npos) << "left behind: " << f.string();
    }
    EXPECT_TRUE(decision) << "no probe.json under " << cache.string();
  }
};

TEST_F(AbiPathsTest, ModelAndCachePathsBeyondAsciiAreTheFilesNamed) {
  const fs::path base = dir_ / fs::path(u8"données-中文");
  const fs::path model = base / fs::path(u8"modèle-分类.onnx");
  const fs::path cache = base / fs::path(u8"cache-é");
  copy_model(model);
  EXPECT_EQ(run_classifier(model, cache), "");
  EXPECT_TRUE(fs::is_directory(cache)) << "the cache is not where its UTF-8 name says";
  expect_a_decision_and_no_work_left(cache);
  // Nothing was made under a name read in the ANSI code page ("donnÃ©es-...").
  const auto made = list_directory(dir_);
  ASSERT_TRUE(made);
  for (const auto& e : *made) EXPECT_EQ(e.filename(), fs::path(u8"données-中文")) << e.string();
}

TEST_F(AbiPathsTest, ACachePathPastMaxPathHoldsTheDecision) {
  fs::path cache = dir_;
  while (cache.native().size() < 300) cache /= fs::path(std::string(60, 'c'));
  ASSERT_GT(cache.native().size(), std::size_t{MAX_PATH});
  const fs::path model = dir_ / "cls.onnx";
  copy_model(model);
  EXPECT_EQ(run_classifier(model, cache), "");
  expect_a_decision_and_no_work_left(cache);
}

}  // namespace
}  // namespace rung
