// Each knob declared once (rung/option_table.h): the C ABI's setter reads every
// row as the row says, at both bounds and one past each, lands each where the
// engine keeps it, in its unit; and every face that offers the knob (the
// command line's flag and its range, docs/abi.md, the Python binding) says
// what the row says, or this names the face that does not.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <regex>
#include <set>
#include <type_traits>

#include "capi/options.h"
#include "../cli/knob_flags.h"
#include "rung/option_table.h"
#include "rung/probe.h"
#include "rung/setting_names.h"
#include "test_support.h"

namespace rung {
namespace {
using ::testing::HasSubstr;
using ::testing::Not;

std::string source_text(const std::string& rel) { return test::read_file(test::source_path(rel)); }

// A concrete key of a row (a family's with a name filled in).
std::string concrete(const OptionRow& row) {
  std::string key(row.key);
  if (auto at = key.find("NAME"); at != std::string::npos) key.replace(at, 4, "m");  // a name of one letter: the shortest
  if (auto at = key.find("FORM"); at != std::string::npos) key.replace(at, 4, "i8");
  return key;
}

std::string text_of(double v) { return fmt::format("{}", v); }

// A value the row takes (its lower bound for a number).
std::string valid(const OptionRow& row) {
  switch (row.kind) {
    case OptionKind::kFlag: return "true";
    case OptionKind::kWhole:
    case OptionKind::kReal: return text_of(row.lo);
    case OptionKind::kText:
    case OptionKind::kAnyText: return "cpu";
    case OptionKind::kPath:
    case OptionKind::kPathEach: return "/tmp/x";
  }
  return "";
}

capi::OptionSet with_model() {
  capi::OptionSet o;
  EXPECT_TRUE(o.add_model("m", "/tmp/m.onnx", "detector"));
  return o;
}

TEST(OptionTableTest, EveryKeyIsOneRowAndEveryRowIsTakenByTheCAbi) {
  std::set<std::string_view> keys;
  for (const auto& row : option_table()) {
    EXPECT_TRUE(keys.insert(row.key).second) << row.key << " twice";
    EXPECT_FALSE(row.doc.empty()) << row.key;
    EXPECT_EQ(find_option(concrete(row)), &row) << row.key;
    if (row.key == "model.NAME.input_spec") continue;  // reads its file: below
    auto o = with_model();
    auto s = o.set(concrete(row), valid(row));
    EXPECT_TRUE(s) << row.key << ": " << (s ? "" : s.error().message);
  }
  EXPECT_EQ(find_option("probe_run"), nullptr);
  EXPECT_EQ(find_option("model..input_spec"), nullptr) << "a family's NAME is never empty";
  EXPECT_EQ(find_option("model.det.form."), nullptr);
  EXPECT_EQ(find_option("model..form.i8"), nullptr);
  EXPECT_EQ(find_option("manifest_variable."), nullptr);
  EXPECT_NE(find_option("model.m.form.i8"), nullptr) << "a name and a form of one and two letters";
  EXPECT_NE(find_option("manifest_variable.A"), nullptr);
  // An unknown key is refused naming every key the table has.
  capi::OptionSet o;
  auto s = o.set("probe_run", "3");
  ASSERT_FALSE(s);
  for (const auto& row : option_table()) EXPECT_THAT(s.error().message, HasSubstr(std::string(row.key))) << row.key;
}

TEST(OptionTableTest, ANumberIsTakenAtEachBoundAndRefusedOnePastEachNamingKeyAndRange) {
  for (const auto& row : option_table()) {
    if (row.kind != OptionKind::kWhole && row.kind != OptionKind::kReal) continue;
    const double hi = option_hi(row);
    const double step = row.kind == OptionKind::kWhole ? 1 : row.lo / 10 + 1e-9;
    for (double v : {row.lo, hi}) {
      auto o = with_model();
      EXPECT_TRUE(o.set(std::string(row.key), text_of(v))) << row.key << "=" << v;
    }
    for (double v : {row.lo - step, hi + (row.kind == OptionKind::kWhole ? 1 : hi / 1000)}) {
      auto o = with_model();
      auto s = o.set(std::string(row.key), text_of(v));
      ASSERT_FALSE(s) << row.key << "=" << v << " was taken";
      EXPECT_THAT(s.error().message, HasSubstr("option " + std::string(row.key) + "=")) << row.key;
      EXPECT_THAT(s.error().message, HasSubstr(text_of(hi))) << row.key << ": the range's end is named";
    }
  }
}

TEST(OptionTableTest, EachNumberLandsWhereTheEngineKeepsItInItsUnit) {
  auto engine = [](const std::string& key, const std::string& value) {
    capi::OptionSet o;
    EXPECT_TRUE(o.set(key, value)) << key;
    EXPECT_TRUE(o.set("cache_dir", "/tmp/c"));
    auto e = o.engine_options();
    EXPECT_TRUE(e) << key;
    return *e;
  };
  EXPECT_EQ(engine("probe_runs", "7").probe_runs, 7);
  EXPECT_EQ(engine("inference_threads", "1").inference_threads, 1);
  EXPECT_EQ(engine("acceptance_ratio", "2.5").acceptance_ratio, 2.5);
  EXPECT_EQ(engine("probe_deadline_ms", "1500").probe_deadline, std::chrono::milliseconds(1500));
  EXPECT_EQ(engine("build_deadline_ms", "2500").build_deadline, std::chrono::milliseconds(2500));
  EXPECT_EQ(engine("worker_memory_mb", "3").worker_memory_limit_mb, 3u);
  EXPECT_EQ(engine("tensorrt_workspace_mb", "3").tensorrt_workspace_bytes, std::size_t{3} << 20) << "MiB, not bytes or KiB";
  EXPECT_FALSE(engine("isolate", "false").isolate);
  EXPECT_FALSE(engine("runtime_default_locations", "false").runtimes.include_default_locations);
  EXPECT_TRUE(engine("environment", "true").runtimes.read_environment);
  EXPECT_TRUE(engine("runtime_environment", "true").runtimes.read_environment);
  EXPECT_EQ(engine("forced_rung", "cpu").forced_rung, "cpu");
  EXPECT_EQ(engine("hardware_root", "/tmp/hw").hardware_root, "/tmp/hw");
  EXPECT_EQ(engine("runtime_dir", "/tmp/rt").runtimes.explicit_dir, "/tmp/rt");
  EXPECT_EQ(engine("worker", "/tmp/w").worker, "/tmp/w");
}

// The probe an engine runs when it starts is asked what `rung probe` is asked, from
// one struct handed on whole (rung/probe.h's ProbeSettings): a probe setting given
// to the one and not the other cannot be written.
static_assert(std::is_base_of_v<ProbeSettings, core::EngineOptions>);
static_assert(std::is_base_of_v<ProbeSettings, ProbeOptions>);

// What the engine starts with when nothing is set is what the table says the default is.
TEST(OptionTableTest, TheDefaultEachRowStatesIsTheEngines) {
  const core::EngineOptions e;
  EXPECT_EQ(find_option("probe_runs")->fallback, std::to_string(e.probe_runs));
  EXPECT_EQ(find_option("acceptance_ratio")->fallback, text_of(e.acceptance_ratio));
  EXPECT_EQ(find_option("probe_deadline_ms")->fallback, std::to_string(e.probe_deadline.count()));
  EXPECT_EQ(find_option("build_deadline_ms")->fallback, std::to_string(e.build_deadline.count()));
  EXPECT_EQ(find_option("inference_threads")->fallback, std::to_string(e.inference_threads));
  EXPECT_EQ(find_option("tensorrt_workspace_mb")->fallback, std::to_string(e.tensorrt_workspace_bytes >> 20));
  EXPECT_EQ(find_option("isolate")->fallback, e.isolate ? "true" : "false");
  const capi::OptionSet o;  // the C ABI's own defaults: hermetic, the kit's runtimes
  auto c = capi::OptionSet(o).engine_options();
  ASSERT_TRUE(c);
  EXPECT_EQ(find_option("environment")->fallback, c->runtimes.read_environment ? "true" : "false");
  EXPECT_EQ(find_option("runtime_default_locations")->fallback, c->runtimes.include_default_locations ? "true" : "false");
}

// docs/abi.md's table of keys: a row per key of the table, each number's range as the table states it.
TEST(OptionTableTest, TheDocsTableOfKeysIsTheTable) {
  const std::string page = source_text("docs/abi.md");
  ASSERT_FALSE(page.empty());
  // The section of the keys' table: from "## Options" to the next heading.
  const auto start = page.find("\n## Options\n");
  ASSERT_NE(start, std::string::npos);
  const std::string docs = page.substr(start, page.find("\n## ", start + 1) - start);
  std::set<std::string> documented;
  const std::regex row_re("\\n\\| `([a-z_.A-Z]+)`");
  for (auto it = std::sregex_iterator(docs.begin(), docs.end(), row_re); it != std::sregex_iterator(); ++it) {
    documented.insert((*it)[1]);
  }
  for (const auto& row : option_table()) {
    const std::string key(row.key);
    EXPECT_EQ(documented.count(key), 1u) << "docs/abi.md: no row for " << key;
    const auto at = docs.find("\n| `" + key + "` |");
    if (at == std::string::npos || option_range_text(row).empty()) continue;
    const std::string line = docs.substr(at + 1, docs.find('\n', at + 1) - at - 1);
    EXPECT_THAT(line, HasSubstr(option_range_text(row))) << "docs/abi.md's row for " << key;
  }
  for (const auto& key : documented) {
    EXPECT_NE(find_option(key), nullptr) << "docs/abi.md documents option " << key << ", which the table does not have";
  }
}

// rung.h's comment on rung_options_set, which the Rust crate and every C user read:
// each key named, each number's range as the table has it.
TEST(OptionTableTest, TheCHeaderListsEveryKeyWithItsRange) {
  const std::string header = source_text("include/rung/rung.h");
  const auto from = header.find("Sets one option from text");
  const auto to = header.find("RUNG_API rung_status* rung_options_set(");
  ASSERT_NE(to, std::string::npos);
  const std::string doc = header.substr(from == std::string::npos ? 0 : from, to - (from == std::string::npos ? 0 : from));
  for (const auto& row : option_table()) {
    std::string key(row.key);
    if (auto at = key.find(".FORM"); at != std::string::npos) key = key.substr(0, at + 1);  // written with a form: model.NAME.form.i8
    const auto at = doc.find(" *   " + key);
    ASSERT_NE(at, std::string::npos) << "rung.h does not list " << key;
    if (row.kind != OptionKind::kWhole && row.kind != OptionKind::kReal) continue;
    if (row.hi == kUsableCpus) continue;  // "up to the machine's limit"
    const std::string entry = doc.substr(at, doc.find("\n *   ", doc.find('\n', at)) - at);
    const std::string lo = row.lo == 0 && !row.zero.empty() ? "0 (" + std::string(row.zero) + ")" : text_of(row.lo);
    EXPECT_THAT(entry, HasSubstr(lo + " to " + text_of(row.hi))) << "rung.h's " << key;
    if (row.fallback.find_first_not_of("0123456789.") == std::string_view::npos) {
      EXPECT_THAT(entry, HasSubstr("default " + std::string(row.fallback))) << "rung.h's " << key;
    }
  }
}

// The Python binding passes keys through to rung_options_set; its docs name each one.
TEST(OptionTableTest, ThePythonBindingNamesEveryKey) {
  const std::string py = source_text("bindings/python/rung/engine.py");
  ASSERT_FALSE(py.empty());
  const auto from = py.find("class Options:");
  const std::string doc = py.substr(from, py.find("def __init__", from) - from);
  for (const auto& row : option_table()) {
    EXPECT_THAT(doc, HasSubstr(std::string(row.key))) << "bindings/python/rung/engine.py's Options does not name " << row.key;
  }
}

// cli/knob_flags.h is the command line's face of this table: an entry per row, none for a key it lacks.
TEST(OptionTableTest, TheCommandLinesFacesAreOnePerRow) {
  for (const auto& row : option_table()) EXPECT_NE(cli::knob_flag(row.key), nullptr) << row.key;
  std::set<std::string_view> flags;
  for (const auto& f : cli::kKnobFlags) {
    EXPECT_NE(find_option(f.key), nullptr) << "cli/knob_flags.h names " << f.key << ", which the table has not";
    if (!f.flag.empty()) {
      EXPECT_TRUE(flags.insert(f.flag).second) << f.flag << " for two knobs";
    }
    EXPECT_GT(f.per_unit, 0) << f.key;
  }
  EXPECT_EQ(std::size(cli::kKnobFlags), option_table().size());
}

// A setting that messages advise (rung/setting_names.h) is named by its row of the
// table on each face: an embedded engine says "the option KEY", the command line
// the row's flag. A setting whose key the table lacks, or whose row has no flag,
// fails here, naming it.
TEST(OptionTableTest, TheSettingsMessagesAdviseAreRowsNamedByTheirFaces) {
  use_setting_names(nullptr);  // the engine's names
  for (const Setting s : {Setting::kAllowWritableRuntime, Setting::kAllowWritablePlugin, Setting::kMaxTensorMb, Setting::kShape, Setting::kInputSpec,
                          Setting::kProbeDeadline}) {
    const std::string key(setting_option_key(s));
    if (key.empty()) {
      EXPECT_THAT(setting_name(s, "m"), Not(HasSubstr("the option"))) << "a setting without a key is advised as an option";
      continue;
    }
    ASSERT_NE(find_option(key), nullptr) << "setting_names.cpp names the key " << key << ", which the table has not";
    ASSERT_NE(cli::knob_flag(key), nullptr) << key;
    EXPECT_FALSE(cli::knob_flag(key)->flag.empty()) << "messages advise " << key << ", but the command line has no flag for it";
    std::string shown = key;
    if (const auto name = shown.find("NAME"); name != std::string::npos) shown.replace(name, 4, "m");
    EXPECT_EQ(setting_name(s, "m"), "the option " + shown);
  }
}

// The command line's flag for a knob: taken by `rung probe` or `rung prepare`
// (the command line is then refused only for an option no command has), and,
// for a number, refused one past the table's range, which its error states.
TEST(OptionTableTest, TheCommandLinesFlagForAKnobTakesTheTablesRange) {
  const std::string sentinel = "--not-an-option-of-any-command";
  auto run = [&](const char* command, const std::string& arg, bool with_sentinel) {
    return test::run_command("cd /tmp && '" + test::cli_path().string() + "' " + command + " '" + arg + "'" +
                             (with_sentinel ? " " + sentinel : ""));
  };
  for (const auto& row : option_table()) {
    const cli::KnobFlag* face = cli::knob_flag(row.key);
    ASSERT_NE(face, nullptr) << "cli/knob_flags.h has no entry for " << row.key;
    if (face->flag.empty()) continue;
    const std::string flag(face->flag);
    const double lo = row.lo / face->per_unit, hi = option_hi(row) / face->per_unit;
    std::string value;
    switch (row.kind) {
      case OptionKind::kFlag: break;
      case OptionKind::kWhole:
      case OptionKind::kReal: value = text_of(lo); break;
      case OptionKind::kText:
      case OptionKind::kAnyText: value = row.key == "forced_rung" ? "cpu" : "A=b"; break;
      case OptionKind::kPath:
      case OptionKind::kPathEach: value = row.key == "model.NAME.input_spec" ? "det=/tmp/spec.json" : "/tmp"; break;
    }
    const std::string arg = value.empty() ? flag : flag + "=" + value;
    int takers = 0;
    for (const char* command : {"probe", "prepare"}) {
      auto r = run(command, arg, true);
      // CLI11 lists every argument it did not expect: the flag is taken when only the sentinel is.
      const bool taken = r.err.find("was not expected: " + sentinel) != std::string::npos;
      if (!taken) continue;
      ++takers;
      if (row.kind != OptionKind::kWhole && row.kind != OptionKind::kReal) continue;
      const double past = row.kind == OptionKind::kWhole && face->per_unit == 1 ? hi + 1 : hi * 1.001;
      auto refused = run(command, flag + "=" + text_of(past), false);
      EXPECT_EQ(refused.exit_code, 2) << command << " " << flag << "=" << past << "\n" << refused.err;
      EXPECT_THAT(refused.err, HasSubstr(" from " + text_of(lo) + " to " + text_of(hi))) << command << " " << flag << " (" << row.key << ")";
    }
    EXPECT_GT(takers, 0) << "neither probe nor prepare takes " << arg << " (" << row.key << ")";
  }
}

}  // namespace
}  // namespace rung
