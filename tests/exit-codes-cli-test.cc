// A model a command cannot read is exit 2 naming the file and why, before
// anything else happens (no cache made, nothing on stdout), for every command
// that takes models; progress only on a terminal; a long reason said once; and
// the probe's first line a short summary.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cctype>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <vector>

#include "model_builder.h"
#include "parity_test_support.h"

namespace rung {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

using test::q;
std::string cpu_vm() { return q(test::fixtures_dir() / "hardware" / "cpu-vm"); }
std::string ort() { return " --ort-dir " + q(test::runtime_dir("1.30.0")); }

struct ModelCommand {
  const char* name;
  // The command line with `model` where the command takes its model; `good` a readable model for its other side; `dir` scratch.
  std::string (*args)(const fs::path& model, const fs::path& good, const fs::path& dir);
};

const ModelCommand kModelCommands[] = {
    {"probe", [](const fs::path& m, const fs::path&, const fs::path& d) {
       return "probe --in-process --model tiny=" + q(m) + " --cache-dir " + q(d / "cache") + " --hardware-root " + cpu_vm() + ort();
     }},
    {"probe_path_only", [](const fs::path& m, const fs::path&, const fs::path& d) {
       return "probe --in-process --model " + q(m) + " --cache-dir " + q(d / "cache") + ort();
     }},
    {"prepare", [](const fs::path& m, const fs::path&, const fs::path& d) {
       return "prepare --in-process --model tiny=" + q(m) + " --cache-dir " + q(d / "cache") + " --hardware-root " + cpu_vm() + ort();
     }},
    {"bench", [](const fs::path& m, const fs::path&, const fs::path&) { return "bench tiny=" + q(m) + " --rung cpu --runs 1" + ort(); }},
    {"parity_ref", [](const fs::path& m, const fs::path& g, const fs::path&) { return "parity --ref " + q(m) + " --cand " + q(g) + " --random 1"; }},
    {"parity_cand", [](const fs::path& m, const fs::path& g, const fs::path&) { return "parity --ref " + q(g) + " --cand " + q(m) + " --random 1"; }},
    {"quantise", [](const fs::path& m, const fs::path&, const fs::path& d) {
       return "quantise " + q(m) + " --calibration " + q(d / "cal") + " --holdout " + q(d / "hold") + " --gate " + q(d / "gate.json") + " --out " + q(d / "q.onnx") + ort();
     }},
    {"upgrade", [](const fs::path& m, const fs::path&, const fs::path& d) { return "upgrade " + q(m) + " --opset 17 --out " + q(d / "u.onnx") + ort(); }},
};

class UnreadableModelCliTest : public ::testing::TestWithParam<ModelCommand> {
 protected:
  void SetUp() override {
    dir_ = test::make_temp_dir("rung-exit-codes");
    good_ = test::write_elementwise_model(dir_ / "good.onnx", {1, 4, 8});
    // quantise's calibration and holdout sets: one input each.
    for (const auto& [set, v] : {std::pair{"cal", 1.0f}, std::pair{"hold", -1.0f}}) {
      fs::create_directories(dir_ / set);
      ASSERT_TRUE(write_tensor_file(test::float_tensor("x", {1, 4}, {v, 2, 3, 4}), dir_ / set / "x.pb").ok());
    }
    test::write_text(dir_ / "gate.json", R"({"gates": [{"decoder": "tensor", "atol": 1, "rtol": 1}]})");
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Exit 2, the file and the reason in one line, and nothing done: no output, no cache, no file written.
  void expect_refused_first(const fs::path& model, const std::string& reason) {
    auto r = test::run_command("env -u RUNG_ORT_DIR " + q(test::cli_path()) + " " + GetParam().args(model, good_, dir_));
    EXPECT_EQ(r.exit_code, 2) << model << "\n" << r.out << r.err;
    EXPECT_THAT(r.err, ::testing::ContainsRegex("rung: [^\n]*" + std::regex_replace(model.string(), std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)") +
                                                ": " + reason));
    EXPECT_EQ(r.out, "") << "it printed before refusing";
    EXPECT_THAT(r.err, Not(HasSubstr("input spec"))) << "it went on past the model";
    EXPECT_FALSE(fs::exists(dir_ / "cache")) << "the cache was made before the model was checked";
    EXPECT_FALSE(fs::exists(dir_ / "q.onnx"));
    EXPECT_FALSE(fs::exists(dir_ / "u.onnx"));
  }

  fs::path dir_;
  fs::path good_;
};

TEST_P(UnreadableModelCliTest, AMissingModelIsExitTwoNamingIt) { expect_refused_first(dir_ / "nope.onnx", "does not exist"); }

// An empty path (NAME= with nothing after it, or '') is a usage error that says so: never an
// internal error from making an empty path absolute.
TEST_P(UnreadableModelCliTest, AnEmptyModelPathIsExitTwoAndNeverAnInternalError) {
  auto r = test::run_command("env -u RUNG_ORT_DIR " + q(test::cli_path()) + " " + GetParam().args("", good_, dir_));
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, Not(HasSubstr("internal error")));
  EXPECT_THAT(r.err, ::testing::StartsWith("rung: "));
  EXPECT_EQ(r.out, "");
  EXPECT_FALSE(fs::exists(dir_ / "cache"));
}

TEST_P(UnreadableModelCliTest, ADirectoryAsTheModelIsExitTwoNamingIt) {
  fs::create_directories(dir_ / "models.onnx");
  expect_refused_first(dir_ / "models.onnx", "is a directory, not a file");
}

TEST_P(UnreadableModelCliTest, AFifoAsTheModelIsExitTwoAndNeverWaitedOn) {
  ASSERT_EQ(::mkfifo((dir_ / "pipe.onnx").c_str(), 0600), 0);
  expect_refused_first(dir_ / "pipe.onnx", "is a FIFO, not a file");
}

TEST_P(UnreadableModelCliTest, AFileThatCannotBeOpenedIsExitTwoNamingIt) {
  fs::copy_file(good_, dir_ / "locked.onnx");
  fs::permissions(dir_ / "locked.onnx", fs::perms::none);
  if (::access((dir_ / "locked.onnx").c_str(), R_OK) == 0) GTEST_SKIP() << "running as root: permissions do not bite (the FIFO and the directory stand in)";
  expect_refused_first(dir_ / "locked.onnx", "cannot be read: Permission denied");
}

// A file that is there and readable but is no model the CPU can load is an input error in
// every command too: exit 2 naming the file, where probe, prepare and parity once said 1.
TEST_P(UnreadableModelCliTest, AModelTheCpuCannotLoadIsExitTwoNamingIt) {
  test::write_text(dir_ / "junk.onnx", "these bytes are no ONNX model");
  // And one that parses but holds an operator no build has.
  test::ModelBuilder b;
  b.input("x", {1, 4}).node("NoSuchOperator", {"x"}, {"y"}).output("y", {1, 4});
  b.save(dir_ / "unknown-op.onnx");
  for (const fs::path& model : {dir_ / "junk.onnx", dir_ / "unknown-op.onnx"}) {
    auto r = test::run_command("env -u RUNG_ORT_DIR -u RUNG_FORCE_RUNG " + q(test::cli_path()) + " " + GetParam().args(model, good_, dir_));
    EXPECT_EQ(r.exit_code, 2) << model << "\n" << r.out << r.err;
    EXPECT_THAT(r.err, HasSubstr(model.filename().string())) << r.err;
    EXPECT_THAT(r.err, Not(HasSubstr("internal error")));
  }
  // Bytes that are no model at all are said one way, whether rung's reader or ONNX Runtime's met them.
  auto r = test::run_command("env -u RUNG_ORT_DIR -u RUNG_FORCE_RUNG " + q(test::cli_path()) + " " + GetParam().args(dir_ / "junk.onnx", good_, dir_));
  EXPECT_THAT(r.err, HasSubstr((dir_ / "junk.onnx").string() + ": not an ONNX model: protobuf parsing failed")) << r.err;
}

INSTANTIATE_TEST_SUITE_P(EveryCommandThatTakesAModel, UnreadableModelCliTest, ::testing::ValuesIn(kModelCommands),
                         [](const ::testing::TestParamInfo<ModelCommand>& param_info) { return std::string(param_info.param.name); });

// --- progress, reasons, the probe's first line -----------------------------------------

class CliOutputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::make_temp_dir("rung-cli-output");
    model_ = test::write_elementwise_model(dir_ / "tiny.onnx", {1, 4, 8});
  }
  void TearDown() override { fs::remove_all(dir_); }
  static test::CommandResult rung(const std::string& args) {
    return test::run_command("env -u RUNG_ORT_DIR -u RUNG_PLUGIN_DIR -u RUNG_FORCE_RUNG -u RUNG_SOFTWARE_GPU " + q(test::cli_path()) + " " + args);
  }
  fs::path dir_;
  fs::path model_;
};

// stderr redirected to a file (as run_command does): no line redrawn in place, no escape sequence.
// A first word that names no command is exit 2 saying so, with the command
// meant where a slip or two of the keyboard (or an unambiguous beginning) says
// which; through the front, which hands every command but probe to rung-full.
TEST(UnknownCommandCliTest, AMisspeltCommandIsExitTwoNamingTheOneMeant) {
  struct Case {
    const char* typed;
    const char* meant;  // nullptr: nothing close enough
  };
  for (const Case c : {Case{"bnech", "bench"}, Case{"prob", "probe"}, Case{"probee", "probe"}, Case{"Bench", "bench"},
                       Case{"regis", "registry"}, Case{"docter", "doctor"}, Case{"xyzzy", nullptr}, Case{"pr", nullptr},
                       Case{"benchmark", nullptr}}) {
    SCOPED_TRACE(c.typed);
    auto r = test::run_command(q(test::cli_path()) + " " + c.typed + " --runs 3");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_THAT(r.err, HasSubstr(std::string("no command '") + c.typed + "'"));
    if (c.meant != nullptr) {
      EXPECT_THAT(r.err, HasSubstr(std::string("did you mean '") + c.meant + "'?"));
    } else {
      EXPECT_THAT(r.err, Not(HasSubstr("did you mean")));
    }
    EXPECT_EQ(r.out, "");
  }
  // A command that exists, with a bad option, is that command's error, not this one.
  auto known = test::run_command(q(test::cli_path()) + " bench --no-such-option");
  EXPECT_EQ(known.exit_code, 2);
  EXPECT_THAT(known.err, Not(HasSubstr("no command")));
  // The user's text is escaped like any other.
  auto escaped = test::run_command(q(test::cli_path()) + " \"$(printf '\\033[31mred')\"");
  EXPECT_EQ(escaped.exit_code, 2);
  EXPECT_THAT(escaped.err, Not(HasSubstr("\x1b[31m")));
}

TEST_F(CliOutputTest, PrepareAndProbeWriteNoProgressEscapesIntoARedirectedStderr) {
  for (const std::string command : {"prepare", "probe"}) {
    auto r = rung(command + " --in-process --model tiny=" + q(model_) + " --cache-dir " + q(dir_ / ("cache-" + command)) + " --hardware-root " + cpu_vm() + ort());
    EXPECT_EQ(r.exit_code, 0) << command << r.out << r.err;
    EXPECT_THAT(r.err, Not(HasSubstr("\r"))) << command;
    EXPECT_THAT(r.err, Not(HasSubstr("\033"))) << command;
    EXPECT_THAT(r.err, Not(HasSubstr("Preparing engines"))) << command;
    EXPECT_THAT(r.out, Not(HasSubstr("\033"))) << command;
  }
}

// How often `text` holds `part`.
std::size_t count_of(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + part.size())) ++n;
  return n;
}

// Every reason the JSON gives is in the text exactly once, and no row of the table is longer than its columns and a short reason.
void expect_each_reason_once(const std::string& text, const std::vector<std::string>& reasons, const std::string& what) {
  ASSERT_FALSE(reasons.empty()) << what;
  for (const auto& reason : reasons) EXPECT_EQ(count_of(text, reason), 1u) << what << ": " << reason << "\n" << text;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("  [")) continue;  // a note
    if (line.find(" · ") != std::string::npos) continue;  // the first line
    EXPECT_LT(line.size(), 260u) << what << ": a row carries a long reason: " << line;
  }
}

TEST_F(CliOutputTest, VariantsResolveSaysEachLongReasonOnceUnderTheTable) {
  const std::string args = "variants resolve --hardware-root " + cpu_vm() + ort();
  auto j = rung(args + " --json");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  auto doc = nlohmann::json::parse(j.out);
  std::vector<std::string> reasons;
  for (const auto& g : doc["groups"]) reasons.push_back(g["reason"]);
  auto text = rung(args);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  expect_each_reason_once(text.out, reasons, "variants resolve");
  EXPECT_THAT(text.out, HasSubstr("\n  [1] "));
  // Its w8 form where tools/make-forms.sh made it here, the f32 file where not: either way the row points at its note.
  EXPECT_THAT(text.out, ::testing::ContainsRegex("\n  ppocr_cls +(cpu_w8 +cpu +ppocr_cls_w8|cpu_f32 +cpu +ppocr_cls) +\\[3\\]\n"));
}

TEST_F(CliOutputTest, PrepareSaysEachLongReasonOnceUnderTheTable) {
  const std::string args = "prepare --in-process --cache-dir " + q(dir_ / "cache") + " --hardware-root " + cpu_vm() + ort();
  auto j = rung(args + " --json");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  auto doc = nlohmann::json::parse(j.out);
  std::map<std::string, int> distinct;
  for (const auto& m : doc["models"]) {
    distinct[m["reason"]]++;
    if (m.contains("variant")) distinct[m["variant"]["reason"]]++;
  }
  std::vector<std::string> long_reasons;
  for (const auto& [reason, n] : distinct) {
    if (reason.size() > 120) long_reasons.push_back(reason);
  }
  auto text = rung(args);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  expect_each_reason_once(text.out, long_reasons, "prepare");
}

// The first line is a summary: the chosen rung, the build, and the failures counted, not each failure's words again.
TEST_F(CliOutputTest, TheProbesFirstLineIsAShortSummary) {
  auto r = rung("probe --in-process --model tiny=" + q(model_) + " --cache-dir " + q(dir_ / "cache") + " --hardware-root " + cpu_vm() + ort());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string first = r.out.substr(0, r.out.find('\n'));
  // cpu-vm's ladder: TensorRT, CUDA and WebGPU, each failing here, then the CPU floor.
  EXPECT_EQ(first, "CPU · ONNX Runtime 1.30.0 · 3 rungs failed (see the table)");
  EXPECT_THAT(r.out.substr(first.size()), HasSubstr("failed: ")) << "the table still says why";

  auto j = rung("probe --in-process --model tiny=" + q(model_) + " --cache-dir " + q(dir_ / "cache") + " --hardware-root " + cpu_vm() + ort() + " --json");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  EXPECT_EQ(nlohmann::json::parse(j.out)["about"], "CPU · ONNX Runtime 1.30.0 · 3 rungs failed");
}

// --- output that cannot be written -------------------------------------------------

// A result that never reached its reader is a failed run: stdout on a full disk
// is exit 1 saying so, for the front's warm probe, rung-full's commands and help
// alike; a stderr that cannot be written never aborts the command.
TEST_F(CliOutputTest, StdoutOnAFullDiskIsExitOneSayingSoAndAFullStderrNeverAborts) {
  const std::string probe = "probe --in-process --model tiny=" + q(model_) + " --cache-dir " + q(dir_ / "cache") + " --hardware-root " + cpu_vm() + ort();
  ASSERT_EQ(rung(probe).exit_code, 0);  // decided: the next probe is answered by the front from the cache
  for (const std::string& args : {probe, probe + " --json", std::string("doctor"), std::string("doctor --json") + ort(), std::string("--help"),
                                 std::string("bench --help")}) {
    auto full = test::run_command("{ env -u RUNG_ORT_DIR " + q(test::cli_path()) + " " + args + " >/dev/full; }");
    EXPECT_EQ(full.exit_code, 1) << args << "\n" << full.err;
    EXPECT_THAT(full.err, HasSubstr("rung: the output could not be written to standard output")) << args;
    auto fine = rung(args);
    EXPECT_EQ(fine.exit_code, 0) << args << "\n" << fine.err;
  }
  // Errors said into a full stderr: the command's own exit code, never SIGABRT's 134.
  for (const auto& [args, code] : std::vector<std::pair<std::string, int>>{{"probe --bogus", 2},
                                                                        {"bench " + q(dir_ / "absent.onnx") + " --rung cpu" + ort(), 2},
                                                                        {probe, 0}}) {
    auto r = test::run_command("{ env -u RUNG_ORT_DIR " + q(test::cli_path()) + " " + args + " 2>/dev/full; }");
    EXPECT_EQ(r.exit_code, code) << args;
  }
}

}  // namespace
}  // namespace rung

namespace rung {
namespace {

// A setting that names nothing is refused alike in every command that takes it: exit 2 naming it.
TEST_F(CliOutputTest, ASettingThatNamesNothingIsExitTwoInEveryCommandThatTakesIt) {
  const std::string m = q(model_);
  const std::string common = " --cache-dir " + q(dir_ / "cache") + " --hardware-root " + q(test::fixtures_dir() / "hardware" / "cpu-vm") + ort();
  // A forced rung not on this device's ladder: probe and prepare alike.
  for (const std::string command : {"probe", "prepare"}) {
    auto r = test::run_command("env -u RUNG_ORT_DIR RUNG_FORCE_RUNG=junk " + q(test::cli_path()) + " " + command + " --model tiny=" + m + common);
    EXPECT_EQ(r.exit_code, 2) << command << "\n" << r.out << r.err;
    EXPECT_THAT(r.err, HasSubstr("cannot force rung 'junk' (from RUNG_FORCE_RUNG)")) << command;
    r = rung(command + " --model tiny=" + m + " --use-rung junk" + common);
    EXPECT_EQ(r.exit_code, 2) << command << " --use-rung junk\n" << r.out << r.err;
  }
  // --plugin-dir naming a file, a FIFO, a socket or nothing: refused as the arguments are read.
  test::write_text(dir_ / "a-file", "not a directory");
  ASSERT_EQ(::mkfifo((dir_ / "a-fifo").c_str(), 0600), 0);
  const int sock = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string sock_path = (dir_ / "a-socket").string();
  ASSERT_LT(sock_path.size(), sizeof addr.sun_path);
  std::memcpy(addr.sun_path, sock_path.c_str(), sock_path.size() + 1);
  ASSERT_EQ(::bind(sock, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  for (const std::string& command : {"probe --model tiny=" + m + common, "prepare --model tiny=" + m + common,
                                    "bench tiny=" + m + " --rung cpu --runs 1" + ort(), "conform --suite " + q(dir_) + ort()}) {
    for (const std::string bad : {"a-file", "a-fifo", "a-socket", "nowhere"}) {
      auto r = rung(command + " --plugin-dir " + q(dir_ / bad));
      EXPECT_EQ(r.exit_code, 2) << command << " --plugin-dir " << bad << "\n" << r.out << r.err;
      EXPECT_THAT(r.err, HasSubstr((dir_ / bad).string())) << command;
      EXPECT_THAT(r.err, HasSubstr(bad == "nowhere" ? ": does not exist" : ", not a directory")) << command;
    }
  }
  ::close(sock);
  EXPECT_FALSE(fs::exists(dir_ / "cache" / "probe.json")) << "a refused setting probed first";
}

}  // namespace
}  // namespace rung

namespace rung {
namespace {

// One wording per failure class of an input (rung/input_words.h), in every command
// and for every kind of input (a file, a folder of tensors, a gate, a record, a
// suite, a plugin, a registry, a runtime directory), always exit 2:
// - not there: "PATH: does not exist";
// - there but the wrong kind of file: "PATH: is a FIFO, not a file", "PATH: is a
//   regular file, not a directory";
// - there and readable but not what it was given as: "PATH: not valid JSON: line
//   L, column C: ...", "PATH: not a registry: ...".
// A model (UnreadableModelCliTest above) is said the same way.
enum class Takes { kFile, kFolder, kFileOrFolder };
enum class Reads { kJson, kRegistry, kOther };

struct InputCase {
  const char* label;
  Takes takes;
  Reads reads;
  std::string (*args)(const fs::path& input, const fs::path& good, const fs::path& dir);
};

const InputCase kInputCases[] = {
    {"quantise --gate", Takes::kFile, Reads::kJson, [](const fs::path& m, const fs::path& g, const fs::path& d) {
       return "quantise " + q(g) + " --calibration " + q(d / "cal") + " --holdout " + q(d / "hold") + " --gate " + q(m) + " --out " + q(d / "q.onnx") + ort();
     }},
    {"quantise --calibration", Takes::kFolder, Reads::kOther, [](const fs::path& m, const fs::path& g, const fs::path& d) {
       return "quantise " + q(g) + " --calibration " + q(m) + " --holdout " + q(d / "hold") + " --gate " + q(d / "gate.json") + " --out " + q(d / "q.onnx") + ort();
     }},
    {"quantise --holdout", Takes::kFolder, Reads::kOther, [](const fs::path& m, const fs::path& g, const fs::path& d) {
       return "quantise " + q(g) + " --calibration " + q(d / "cal") + " --holdout " + q(m) + " --gate " + q(d / "gate.json") + " --out " + q(d / "q.onnx") + ort();
     }},
    {"upgrade --inputs", Takes::kFolder, Reads::kOther, [](const fs::path& m, const fs::path& g, const fs::path& d) {
       return "upgrade " + q(g) + " --opset 17 --inputs " + q(m) + " --out " + q(d / "u.onnx") + ort();
     }},
    {"parity --inputs", Takes::kFolder, Reads::kOther,
     [](const fs::path& m, const fs::path& g, const fs::path&) { return "parity --ref " + q(g) + " --cand " + q(g) + " --inputs " + q(m); }},
    {"parity --gate", Takes::kFile, Reads::kJson, [](const fs::path& m, const fs::path& g, const fs::path&) {
       return "parity --ref " + q(g) + " --cand " + q(g) + " --random 1 --gate " + q(m);
     }},
    {"parity --preprocess", Takes::kFile, Reads::kJson, [](const fs::path& m, const fs::path& g, const fs::path&) {
       return "parity --ref " + q(g) + " --cand " + q(g) + " --random 1 --preprocess " + q(m);
     }},
    {"parity expected:", Takes::kFolder, Reads::kOther, [](const fs::path& m, const fs::path& g, const fs::path& d) {
       return "parity --ref " + q(g) + " --cand " + q("expected:" + m.string()) + " --inputs " + q(d / "cal");
     }},
    {"prepare --input-spec", Takes::kFile, Reads::kJson, [](const fs::path& m, const fs::path& g, const fs::path& d) {
       return "prepare --in-process --model tiny=" + q(g) + " --input-spec tiny=" + q(m) + " --cache-dir " + q(d / "cache") + " --hardware-root " + cpu_vm() + ort();
     }},
    {"bench --input", Takes::kFolder, Reads::kOther,
     [](const fs::path& m, const fs::path& g, const fs::path&) { return "bench tiny=" + q(g) + " --rung cpu --runs 1 --input " + q(m) + ort(); }},
    {"bench compare", Takes::kFileOrFolder, Reads::kJson,
     [](const fs::path& m, const fs::path&, const fs::path& d) { return "bench compare " + q(m) + " " + q(d / "gate.json"); }},
    {"conform --suite", Takes::kFolder, Reads::kOther, [](const fs::path& m, const fs::path&, const fs::path&) { return "conform --suite " + q(m) + ort(); }},
    {"conform --rung", Takes::kFile, Reads::kOther,
     [](const fs::path& m, const fs::path&, const fs::path& d) { return "conform --suite " + q(d / "suite") + " --rung " + q(m) + ort(); }},
    {"--plugin-dir", Takes::kFolder, Reads::kOther, [](const fs::path& m, const fs::path&, const fs::path& d) {
       return "conform --suite " + q(d / "suite") + " --plugin-dir " + q(m) + ort();
     }},
    {"--ort-dir", Takes::kFolder, Reads::kOther,
     [](const fs::path& m, const fs::path&, const fs::path& d) { return "conform --suite " + q(d / "suite") + " --ort-dir " + q(m); }},
    {"registry list", Takes::kFile, Reads::kRegistry, [](const fs::path& m, const fs::path&, const fs::path&) { return "registry list --registry " + q(m); }},
    {"registry import", Takes::kFile, Reads::kJson, [](const fs::path& m, const fs::path&, const fs::path& d) {
       return "registry --registry " + q(d / "r.sqlite") + " import " + q(m);
     }},
    {"variants resolve", Takes::kFile, Reads::kJson, [](const fs::path& m, const fs::path&, const fs::path&) { return "variants resolve --variants " + q(m); }},
};

std::string test_name(const ::testing::TestParamInfo<InputCase>& param_info) {
  std::string name;
  for (const char* c = param_info.param.label; *c; ++c) name += std::isalnum(static_cast<unsigned char>(*c)) ? *c : '_';
  return name;
}

class InputWordsCliTest : public ::testing::TestWithParam<InputCase> {
 protected:
  void SetUp() override {
    dir_ = test::make_temp_dir("rung-input-words");
    good_ = test::write_elementwise_model(dir_ / "good.onnx", {1, 4});
    for (const auto& [set, v] : {std::pair{"cal", 1.0f}, std::pair{"hold", -1.0f}}) {
      fs::create_directories(dir_ / set);
      ASSERT_TRUE(write_tensor_file(test::float_tensor("x", {1, 4}, {v, 2, 3, 4}), dir_ / set / "x.pb").ok());
    }
    test::write_text(dir_ / "gate.json", R"({"gates": [{"decoder": "tensor", "atol": 1, "rtol": 1}]})");
    // A conformance suite of one test: its model, and a set of one input and its expected output.
    fs::create_directories(dir_ / "suite" / "test_one" / "test_data_set_0");
    fs::copy_file(good_, dir_ / "suite" / "test_one" / "model.onnx");
    for (const char* file : {"input_0.pb", "output_0.pb"}) {
      fs::copy_file(dir_ / "cal" / "x.pb", dir_ / "suite" / "test_one" / "test_data_set_0" / file);
    }
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs the case with `input` in its place: exit 2 with `words` after the path,
  // no internal error, nothing written, and none of the other wordings.
  void expect_said(const fs::path& input, const std::string& words) {
    const std::string args = GetParam().args(input, good_, dir_);
    auto r = test::run_command("env -u RUNG_ORT_DIR -u RUNG_PLUGIN_DIR timeout 120 " + q(test::cli_path()) + " " + args);
    EXPECT_EQ(r.exit_code, 2) << GetParam().label << "\n" << r.out << r.err;
    EXPECT_THAT(r.err, HasSubstr(input.string() + ": " + words)) << GetParam().label;
    for (const char* other : {"is not there", "no such file", "No such file", "is not a directory", "is not a file", "not a regular file", "internal error",
                              "json.exception", "disk I/O error"}) {
      EXPECT_THAT(r.err, Not(HasSubstr(other))) << GetParam().label << ": another wording for the same failure";
    }
    EXPECT_FALSE(fs::exists(dir_ / "q.onnx"));
    EXPECT_FALSE(fs::exists(dir_ / "u.onnx"));
  }

  fs::path dir_;
  fs::path good_;
};

using MissingInputCliTest = InputWordsCliTest;
using WrongKindInputCliTest = InputWordsCliTest;
using MalformedInputCliTest = InputWordsCliTest;

TEST_P(MissingInputCliTest, IsExitTwoSayingPathDoesNotExist) { expect_said(dir_ / "not-there", "does not exist"); }

TEST_P(WrongKindInputCliTest, IsExitTwoSayingWhatItIsAndWhatWasWanted) {
  const Takes takes = GetParam().takes;
  ASSERT_EQ(::mkfifo((dir_ / "a-fifo").c_str(), 0600), 0);
  // A FIFO is read by no command: each says what it is, and none waits on it.
  expect_said(dir_ / "a-fifo", takes == Takes::kFolder ? "is a FIFO, not a directory" : "is a FIFO, not a file");
  if (takes == Takes::kFile) {
    fs::create_directories(dir_ / "a-folder");
    expect_said(dir_ / "a-folder", "is a directory, not a file");
  }
  if (takes == Takes::kFolder) {
    test::write_text(dir_ / "a-file", "some text");
    expect_said(dir_ / "a-file", "is a regular file, not a directory");
  }
}

TEST_P(MalformedInputCliTest, IsExitTwoSayingWhatItIsNot) {
  switch (GetParam().reads) {
    case Reads::kJson:
      // The parser's place and words, without its exception's id.
      test::write_text(dir_ / "bad.json", "{\"gates\": [1, 2,\n  oops}");
      expect_said(dir_ / "bad.json", "not valid JSON: line 2, column 3: syntax error");
      break;
    case Reads::kRegistry:
      test::write_text(dir_ / "bad.sqlite", std::string(4096, 'x'));
      expect_said(dir_ / "bad.sqlite", "not a registry: file is not a database");
      break;
    case Reads::kOther: FAIL() << GetParam().label << " is not instantiated here";
  }
}

// The inputs whose content one malformed file stands for (a folder's files have their own tests).
std::vector<InputCase> read_as_documents() {
  std::vector<InputCase> out;
  for (const auto& c : kInputCases) {
    if (c.reads != Reads::kOther) out.push_back(c);
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(EveryInputOfEveryCommand, MissingInputCliTest, ::testing::ValuesIn(kInputCases), test_name);
INSTANTIATE_TEST_SUITE_P(EveryInputOfEveryCommand, WrongKindInputCliTest, ::testing::ValuesIn(kInputCases), test_name);
INSTANTIATE_TEST_SUITE_P(EveryDocumentOfEveryCommand, MalformedInputCliTest, ::testing::ValuesIn(read_as_documents()), test_name);

}  // namespace
}  // namespace rung
