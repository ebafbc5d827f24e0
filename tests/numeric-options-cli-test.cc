// One way in for numbers: every numeric option of every command (rung's and
// the example application's) is declared with its range (cli/numeric_args.h),
// so each refuses nan, inf, 1e300, a negative, a fraction for a whole number
// and one past either bound with exit 2 naming the option and the range, and
// takes each bound exactly. Then the library: the numbers that size a run
// (thread counts, deadlines, random input sets, tolerances) are refused with a
// Status where the C++ API takes them, with no CLI in front.
#include <gmock/gmock.h>
#include <cmath>
#include <gtest/gtest.h>

#include <limits>
#include <ostream>
#include <string>
#include <vector>

#include "model_builder.h"
#include "rung/bench.h"
#include "rung/conform.h"
#include "rung/cpus.h"
#include "rung/engine_core.h"
#include "rung/limits.h"
#include "rung/parity.h"
#include "rung/probe.h"
#include "rung/quantise.h"
#include "test_support.h"

namespace rung {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

enum class Kind { kWhole, kReal };

struct NumericOption {
  std::string label;   // the test's name
  std::string program; // "rung" or "ocr-lines"
  std::string before;  // what makes the rest of the command line valid (required arguments)
  std::string name;    // "--threads"
  Kind kind;
  std::string lo, hi;           // the bounds, as the error states them
  std::string below, above;     // one past each bound ("" where the bound is the type's own end)
};

// gtest names a failing case by this, not by the struct's bytes.
void PrintTo(const NumericOption& o, std::ostream* os) { *os << o.label << " (" << o.name << ")"; }

const std::string kCpus = std::to_string(usable_cpus());
const std::string kCpusPlusOne = std::to_string(usable_cpus() + 1);

// Required arguments of each command, so the number is the only thing wrong (or, when it is right, an unknown option is).
const std::string kProbe = "probe";
const std::string kPrepare = "prepare";
const std::string kBench = "bench m.onnx";
const std::string kParity = "parity --ref m.onnx --cand m.onnx";
const std::string kQuantise = "quantise m.onnx --calibration c --holdout h --gate g.json";
const std::string kUpgrade = "upgrade m.onnx --out o.onnx";
const std::string kConform = "conform";
const std::string kOcr = "images --models models --cache-dir cache";

// Every numeric option of every command. A new one that is not here is still
// checked by its declaration (tools/check-options.py); add it here to pin its range.
const std::vector<NumericOption> kOptions = {
    {"probe_deadline", "rung", kProbe, "--deadline", Kind::kReal, "0.001", "86400", "0.0009", "86400.001"},
    {"probe_worker_memory_mb", "rung", kProbe, "--worker-memory-mb", Kind::kWhole, "0", "16777216", "-1", "16777217"},
    {"prepare_worker_memory_mb", "rung", kPrepare, "--worker-memory-mb", Kind::kWhole, "0", "16777216", "-1", "16777217"},
    {"bench_worker_memory_mb", "rung", kBench, "--worker-memory-mb", Kind::kWhole, "0", "16777216", "-1", "16777217"},
    {"parity_worker_memory_mb", "rung", kParity, "--worker-memory-mb", Kind::kWhole, "0", "16777216", "-1", "16777217"},
    {"conform_worker_memory_mb", "rung", kConform, "--worker-memory-mb", Kind::kWhole, "0", "16777216", "-1", "16777217"},
    {"probe_runs", "rung", kProbe, "--runs", Kind::kWhole, "1", "1000", "0", "1001"},
    {"probe_threads", "rung", kProbe, "--threads", Kind::kWhole, "0", kCpus, "-1", kCpusPlusOne},
    {"probe_accept_ratio", "rung", kProbe, "--accept-ratio", Kind::kReal, "0.01", "10000", "0.009", "10000.5"},
    {"probe_min_gain", "rung", kProbe, "--min-gain", Kind::kReal, "0", "0.999", "-0.001", "1"},
    {"probe_time_budget", "rung", kProbe, "--time-budget", Kind::kReal, "0", "86400", "-0.001", "86400.5"},
    {"probe_min_placed", "rung", kProbe, "--min-placed", Kind::kReal, "0", "1", "-0.001", "1.001"},
    {"probe_max_tensor_mb", "rung", kProbe, "--max-tensor-mb", Kind::kWhole, "1", "1073741824", "0", "1073741825"},
    {"prepare_deadline", "rung", kPrepare, "--deadline", Kind::kReal, "0.001", "86400", "0.0009", "86400.001"},
    {"prepare_build_deadline", "rung", kPrepare, "--build-deadline", Kind::kReal, "0.001", "86400", "0.0009", "86400.001"},
    {"prepare_threads", "rung", kPrepare, "--threads", Kind::kWhole, "0", kCpus, "-1", kCpusPlusOne},
    {"prepare_accept_ratio", "rung", kPrepare, "--accept-ratio", Kind::kReal, "0.01", "10000", "0.009", "10000.5"},
    {"prepare_max_tensor_mb", "rung", kPrepare, "--max-tensor-mb", Kind::kWhole, "1", "1073741824", "0", "1073741825"},
    {"bench_warmup", "rung", kBench, "--warmup", Kind::kWhole, "0", "1000000", "-1", "1000001"},
    {"bench_runs", "rung", kBench, "--runs", Kind::kWhole, "1", "1000000", "0", "1000001"},
    {"bench_duration", "rung", kBench, "--duration", Kind::kReal, "0.001", "3600", "0.0009", "3600.001"},
    {"bench_rounds", "rung", kBench, "--rounds", Kind::kWhole, "1", "1000", "0", "1001"},
    {"bench_threads", "rung", kBench, "--threads", Kind::kWhole, "0", kCpus, "-1", kCpusPlusOne},
    {"bench_deadline", "rung", kBench, "--deadline", Kind::kReal, "0.001", "86400", "0.0009", "86400.001"},
    {"bench_max_tensor_mb", "rung", kBench, "--max-tensor-mb", Kind::kWhole, "1", "1073741824", "0", "1073741825"},
    {"parity_random", "rung", kParity, "--random", Kind::kWhole, "1", "1000000", "0", "1000001"},
    {"parity_seed", "rung", kParity, "--seed", Kind::kWhole, "0", "18446744073709551615", "-1", "18446744073709551616"},
    {"parity_deadline", "rung", kParity, "--deadline", Kind::kReal, "0.001", "86400", "0.0009", "86400.001"},
    {"parity_max_tensor_mb", "rung", kParity, "--max-tensor-mb", Kind::kWhole, "1", "1073741824", "0", "1073741825"},
    {"quantise_opset", "rung", kQuantise, "--opset", Kind::kWhole, "1", "1000", "0", "1001"},
    {"quantise_threads", "rung", kQuantise, "--threads", Kind::kWhole, "0", kCpus, "-1", kCpusPlusOne},
    {"quantise_deadline", "rung", kQuantise, "--deadline", Kind::kReal, "0.001", "86400", "0.0009", "86400.001"},
    {"upgrade_opset", "rung", kUpgrade, "--opset", Kind::kWhole, "1", "1000", "0", "1001"},
    {"upgrade_random", "rung", kUpgrade, "--random", Kind::kWhole, "1", "1000000", "0", "1000001"},
    {"upgrade_seed", "rung", kUpgrade, "--seed", Kind::kWhole, "0", "18446744073709551615", "-1", "18446744073709551616"},
    {"upgrade_deadline", "rung", kUpgrade, "--deadline", Kind::kReal, "0.001", "86400", "0.0009", "86400.001"},
    {"conform_atol", "rung", kConform, "--atol", Kind::kReal, "0", "1000000", "-1e-9", "1000000.5"},
    {"conform_rtol", "rung", kConform, "--rtol", Kind::kReal, "0", "1000000", "-1e-9", "1000000.5"},
    {"conform_threads", "rung", kConform, "--threads", Kind::kWhole, "0", kCpus, "-1", kCpusPlusOne},
    {"conform_deadline", "rung", kConform, "--deadline", Kind::kReal, "0.001", "86400", "0.0009", "86400.001"},
    {"ocr_accept_ratio", "ocr-lines", kOcr, "--accept-ratio", Kind::kReal, "0.01", "10000", "0.009", "10000.5"},
    {"ocr_unclip_ratio", "ocr-lines", kOcr, "--unclip-ratio", Kind::kReal, "0.01", "10", "0.009", "10.001"},
    {"ocr_decode_threads", "ocr-lines", kOcr, "--decode-threads", Kind::kWhole, "1", kCpus, "0", kCpusPlusOne},
    {"ocr_recognise_batch", "ocr-lines", kOcr, "--recognise-batch", Kind::kWhole, "0", "256", "-1", "257"},
    {"ocr_recognise_threads", "ocr-lines", kOcr, "--recognise-threads", Kind::kWhole, "0", kCpus, "-1", kCpusPlusOne},
};

// Never an option of any command: when the number is taken, this is what the command line is refused for.
const std::string kSentinel = "--not-an-option-of-any-command";

class NumericOptionTest : public ::testing::TestWithParam<NumericOption> {
 protected:
  test::CommandResult run(const std::string& value, bool with_sentinel = false) const {
    const NumericOption& o = GetParam();
    const fs::path program = o.program == "rung" ? test::cli_path() : test::binary_dir() / "ocr-lines";
    // NAME=VALUE, so that "-1" is the option's value, never taken for an option itself.
    return test::run_command("cd /tmp && '" + program.string() + "' " + o.before + " '" + o.name + "=" + value + "'" +
                             (with_sentinel ? " " + kSentinel : ""));
  }

  void expect_refused(const std::string& value, const std::string& why) const {
    const NumericOption& o = GetParam();
    auto r = run(value);
    EXPECT_EQ(r.exit_code, 2) << o.name << "=" << value << "\n" << r.out << r.err;
    EXPECT_THAT(r.err, HasSubstr(o.name + ": " + value + " " + why)) << o.name << "=" << value;
    const std::string range = (o.kind == Kind::kWhole ? "expected a whole number" : "expected a finite number");
    EXPECT_THAT(r.err, HasSubstr(range)) << o.name << "=" << value;
    EXPECT_THAT(r.err, HasSubstr(" from " + o.lo + " to " + o.hi)) << o.name << "=" << value;
  }

  // Taken: the command line is refused only for the unknown option after it, never for the number.
  void expect_taken(const std::string& value) const {
    const NumericOption& o = GetParam();
    auto r = run(value, true);
    EXPECT_EQ(r.exit_code, 2) << o.name << "=" << value << "\n" << r.out << r.err;
    EXPECT_THAT(r.err, HasSubstr("not expected: " + kSentinel)) << o.name << "=" << value;
    EXPECT_THAT(r.err, Not(HasSubstr(o.name + ":"))) << o.name << "=" << value;
  }
};

TEST_P(NumericOptionTest, NotANumberIsRefusedNamingTheOptionAndTheRange) {
  for (const char* v : {"nan", "-nan", "NaN"}) expect_refused(v, "is out of range");
}

TEST_P(NumericOptionTest, AnInfinityIsRefused) {
  for (const char* v : {"inf", "-inf", "infinity"}) expect_refused(v, "is out of range");
}

TEST_P(NumericOptionTest, AHugeNumberIsRefused) {
  // As a whole number 1e300 is not written in digits; as a real it is past the range. Either way, refused.
  expect_refused("1e300", GetParam().kind == Kind::kWhole ? "is not written as a whole number" : "is out of range");
  expect_refused("99999999999999999999999", "is out of range");
}

TEST_P(NumericOptionTest, ANegativeIsRefused) {
  expect_refused("-1", "is out of range");
  expect_refused("-18446744073709551615", "is out of range");  // would wrap round to 1 in an unsigned
}

TEST_P(NumericOptionTest, AFractionIsRefusedForAWholeNumberAndTakenForAReal) {
  if (GetParam().kind == Kind::kWhole) {
    expect_refused("2.5", "is not a whole number");
    expect_refused("0.5", "is not a whole number");
  } else {
    // Half way between the bounds (plus a half when that is whole): inside the range, not a whole number.
    double mid = (std::stod(GetParam().lo) + std::stod(GetParam().hi)) / 2;
    if (mid == std::floor(mid)) mid += 0.5;  // every such range is wider than one
    const std::string text = std::to_string(mid);
    ASSERT_NE(mid, std::floor(mid)) << text;
    expect_taken(text);
  }
}

TEST_P(NumericOptionTest, TextThatIsNotANumberIsRefused) {
  const NumericOption& o = GetParam();
  for (const char* v : {"abc", "0x10", "1,5", "--"}) {
    auto r = run(v);
    EXPECT_EQ(r.exit_code, 2) << o.name << "=" << v << "\n" << r.err;
    EXPECT_THAT(r.err, HasSubstr(o.name + ": '" + v + "' is not a number")) << v;
  }
}

TEST_P(NumericOptionTest, ZeroIsTakenOnlyWhenTheRangeStartsThere) {
  const NumericOption& o = GetParam();
  if (o.lo == "0") {
    expect_taken("0");
  } else {
    expect_refused("0", "is out of range");
  }
}

TEST_P(NumericOptionTest, EachBoundIsTakenAndOnePastItIsNot) {
  const NumericOption& o = GetParam();
  expect_taken(o.lo);
  expect_taken(o.hi);
  if (!o.below.empty()) expect_refused(o.below, "is out of range");
  if (!o.above.empty()) expect_refused(o.above, "is out of range");
}

INSTANTIATE_TEST_SUITE_P(EveryCommand, NumericOptionTest, ::testing::ValuesIn(kOptions),
                         [](const ::testing::TestParamInfo<NumericOption>& param_info) { return param_info.param.label; });

// The help names each option's range, as the error does.
TEST(NumericOptionHelp, SaysTheRange) {
  auto r = test::run_command("'" + test::cli_path().string() + "' conform --help");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("0.001..86400"));
  EXPECT_THAT(r.out, HasSubstr("0.." + kCpus));
}

// ---- The library: the same numbers refused where the C++ API takes them ----

class LibraryNumbersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::make_temp_dir("rung-numbers");
    test::write_elementwise_model(dir_ / "m.onnx", {1, 4});
  }
  void TearDown() override { fs::remove_all(dir_); }

  static void expect_invalid(const Status& st, const std::string& said) {
    ASSERT_FALSE(st.ok()) << "expected: " << said;
    EXPECT_EQ(st.error().code, ErrorCode::kInvalidArgument) << st.error().message;
    EXPECT_THAT(st.error().message, HasSubstr(said));
  }
  template <class T>
  static Status status_of(const Result<T>& r) {
    if (r) return {};
    return r.error();
  }

  fs::path dir_;
};

const auto kPastADay = kMaxDeadline + std::chrono::milliseconds(1);

TEST_F(LibraryNumbersTest, ConformRefusesThreadsDeadlinesAndTolerancesOutOfRange) {
  auto base = [&] {
    ConformOptions o;
    o.suites = {dir_ / "no-suite-is-read"};
    return o;
  };
  auto o = base();
  o.threads = usable_cpus() + 1;
  expect_invalid(status_of(run_conform(o)), "threads " + kCpusPlusOne + " is out of range");
  o = base();
  o.threads = -1;
  expect_invalid(status_of(run_conform(o)), "threads -1 is out of range");
  o = base();
  o.deadline = std::chrono::milliseconds(0);
  expect_invalid(status_of(run_conform(o)), "the deadline of 0 ms is out of range");
  o = base();
  o.deadline = kPastADay;
  expect_invalid(status_of(run_conform(o)), "the deadline of 86400001 ms is out of range");
  o = base();
  o.tolerance.atol = std::numeric_limits<double>::quiet_NaN();
  expect_invalid(status_of(run_conform(o)), "must be finite and not negative");
  o = base();
  o.tolerance.rtol = -1;
  expect_invalid(status_of(run_conform(o)), "must be finite and not negative");
}

TEST_F(LibraryNumbersTest, QuantiseAndUpgradeRefuseTheirSettingsBeforeAnyWork) {
  QuantiseOptions q;
  q.model = dir_ / "m.onnx";
  q.settings.threads = 100000;
  expect_invalid(status_of(run_quantise(q)), "threads 100000 is out of range");
  q.settings.threads = 0;
  q.settings.deadline = kPastADay;
  expect_invalid(status_of(run_quantise(q)), "the deadline of 86400001 ms is out of range");

  UpgradeOptions u;
  u.model = dir_ / "m.onnx";
  u.out = dir_ / "out.onnx";
  u.random = std::numeric_limits<std::size_t>::max();  // what `--random -1` wrapped to
  expect_invalid(status_of(run_upgrade(u)), "random input sets is out of range");
  u.random = 3;
  u.settings.deadline = std::chrono::milliseconds(0);
  expect_invalid(status_of(run_upgrade(u)), "the deadline of 0 ms is out of range");
  EXPECT_FALSE(fs::exists(u.out));
}

TEST_F(LibraryNumbersTest, ParityRefusesDeadlinesThreadsAndRandomSetsOutOfRange) {
  ParityOptions o;
  o.ref.model = o.cand.model = dir_ / "m.onnx";
  o.random = 1;
  o.deadline = kPastADay;
  expect_invalid(status_of(run_parity(o)), "the deadline of 86400001 ms is out of range");
  o.deadline = std::chrono::seconds(10);
  o.random = kMaxRandomInputSets + 1;
  expect_invalid(status_of(run_parity(o)), "random input sets is out of range");
  o.random = 1;
  o.cand.threads = usable_cpus() + 1;
  expect_invalid(status_of(run_parity(o)), "threads " + kCpusPlusOne + " is out of range");
}

TEST_F(LibraryNumbersTest, ProbeAndBenchRefuseADeadlinePastADay) {
  ProbeOptions p;
  p.cache_dir = dir_ / "cache";
  p.models = {{"m", dir_ / "m.onnx", {}}};
  p.probe_deadline = kPastADay;
  expect_invalid(status_of(run_probe(p)), "the deadline of 86400001 ms is out of range");
  BenchOptions b;
  b.models = {{"m", dir_ / "m.onnx", {}}};
  b.deadline = kPastADay;
  expect_invalid(status_of(run_bench(b)), "--deadline of 86400001 ms is out of range");
}

TEST_F(LibraryNumbersTest, EngineStartRefusesThreadsAndDeadlinesOutOfRange) {
  auto base = [&] {
    core::EngineOptions o;
    o.cache_dir = dir_ / "cache";
    ModelRegistration m;
    m.name = "m";
    m.f32 = dir_ / "m.onnx";
    o.models = {m};
    o.runtimes.explicit_dir = test::runtime_dir("1.30.0");
    return o;
  };
  auto o = base();
  o.inference_threads = usable_cpus() + 1;
  expect_invalid(status_of(core::Engine::start(o)), "inference threads " + kCpusPlusOne + " is out of range");
  o = base();
  o.probe_deadline = std::chrono::milliseconds(0);
  expect_invalid(status_of(core::Engine::start(o)), "the probe deadline of 0 ms is out of range");
  o = base();
  o.build_deadline = kPastADay;
  expect_invalid(status_of(core::Engine::start(o)), "the build deadline of 86400001 ms is out of range");
  EXPECT_FALSE(fs::exists(dir_ / "cache"));  // refused before anything was made
}

}  // namespace
}  // namespace rung
