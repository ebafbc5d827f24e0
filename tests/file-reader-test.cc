// One way in for files (src/os/read_file.h): the cases every system shares
// (file_reader_cases.h: each kind at its limit and one byte past it, only
// regular files, a FIFO or /dev/zero refused at once), procfs. Then the readers that used to go
// around it, through the library and the CLI: the variant manifest and
// deployment (100 000-deep nesting, a field of the wrong kind, a FIFO,
// /dev/zero, too big), a gate file's character list (a FIFO, /dev/zero), and
// tools/check-inputs.py, which keeps the bypasses out.
#include <fcntl.h>
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <future>
#include <nlohmann/json.hpp>
#include <thread>

#include "file_reader_cases.h"
#include "model_builder.h"
#include "os/json_input.h"
#include "os/read_file.h"
#include "rung/decode.h"
#include "rung/registry.h"
#include "rung/variants.h"
#include "test_support.h"

namespace rung {

// What the shared cases (file_reader_cases.h) need that differs on Linux.
namespace system_files {
void sized(const std::filesystem::path& file, std::uint64_t bytes) {
  std::ofstream(file, std::ios::trunc | std::ios::binary).flush();
  ASSERT_EQ(::truncate(file.c_str(), static_cast<off_t>(bytes)), 0) << file;  // nothing written: sparse
}
std::filesystem::path make_pipe(const std::filesystem::path& dir) {
  const auto fifo = dir / "shared-cases.fifo";
  EXPECT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << fifo;
  return fifo;
}
const char* const kPipeKind = "a FIFO";
const char* const kDevicePath = "/dev/zero";
}  // namespace system_files

namespace {
namespace fs = std::filesystem;
using json = nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

const fs::path kSource = fs::path(RUNG_TEST_FIXTURES).parent_path().parent_path();
constexpr std::size_t kDeep = 100'000;

std::string deep_object(std::size_t levels) {
  std::string s;
  for (std::size_t i = 0; i < levels; ++i) s += "{\"a\":";
  return s + "1" + std::string(levels, '}');
}

void write(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::trunc | std::ios::binary) << text; }

void sized(const fs::path& p, std::uint64_t bytes) { system_files::sized(p, bytes); }

// Runs `read` on another thread; a reader still blocked after 20 s is a
// failure, and the FIFO is then opened for writing and closed so it ends.
template <class F>
auto within_seconds(F read, const fs::path& fifo) {
  auto task = std::make_shared<std::packaged_task<decltype(read())()>>(read);
  auto done = task->get_future();
  std::thread([task] { (*task)(); }).detach();
  if (done.wait_for(std::chrono::seconds(20)) != std::future_status::ready) {
    ADD_FAILURE() << "the reader blocked on " << fifo;
    const int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
    if (fd >= 0) ::close(fd);
  }
  return done.get();
}

class FileReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::make_temp_dir("rung-file-reader");
    ASSERT_EQ(::mkfifo((dir_ / "fifo").c_str(), 0600), 0);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

// --- the table: each kind at its limit and one byte past it ---

// Linux's own: procfs states a size of 0 whatever a file holds; it is read to its end all the same.
TEST_F(FileReaderTest, AProcfsFileIsReadToItsEndWithinItsBound) {
  auto cmdline = read_system_file("/proc/self/cmdline");
  ASSERT_TRUE(cmdline);
  EXPECT_THAT(*cmdline, HasSubstr("file-reader-test"));
  EXPECT_EQ(read_system_file("/proc/self/cmdline", 4)->size(), 4u);
}

TEST_F(FileReaderTest, AJsonFilesLimitIsADocuments) { EXPECT_EQ(kMaxJsonFileBytes, file_kind_limit(FileKind::kDocument).max_bytes); }

TEST_F(FileReaderTest, AJsonFileIsADocumentUnlessToldOtherwise) {
  sized(dir_ / "big.json", (16u << 20) + 1);
  EXPECT_THAT(read_json_file(dir_ / "big.json").error().message, HasSubstr("rung reads at most 16.0 MiB for a document"));
  write(dir_ / "deep.json", deep_object(kDeep));
  EXPECT_EQ(read_json_file(dir_ / "deep.json").error().message, (dir_ / "deep.json").string() + ": nested deeper than 64 levels");
  EXPECT_EQ(parse_json_or("{", json::object()), json::object());
  EXPECT_EQ(parse_json_or(deep_object(kDeep), json::array()), json::array());
  EXPECT_EQ(parse_json_or(R"({"a": 1})", json()), json({{"a", 1}}));
}

// --- the variant manifest and deployment: read by os, fields by kind ---

json manifest_with(const json& group) { return {{"schema", "rung-variant-manifest"}, {"schema_version", 1}, {"groups", {group}}}; }

json cpu_variant() {
  return {{"key", "cpu_f32"}, {"rungs", {"cpu"}}, {"form", "f32"}, {"file", {{"path", "m.onnx"}}}, {"sha256", std::string(64, 'a')}};
}

TEST_F(FileReaderTest, AManifestOrDeploymentThatIsNoFileOrTooBigOrTooDeepIsRefusedNamingIt) {
  write(dir_ / "deep.json", deep_object(kDeep));
  sized(dir_ / "big.json", (16u << 20) + 1);
  const std::vector<std::pair<fs::path, std::string>> cases = {
      {dir_ / "deep.json", (dir_ / "deep.json").string() + ": nested deeper than 64 levels"},
      {dir_ / "big.json", (dir_ / "big.json").string() + ": is 16.0 MiB; rung reads at most 16.0 MiB for a document"},
      {dir_ / "fifo", (dir_ / "fifo").string() + ": is a FIFO, not a file"},
      {"/dev/zero", "/dev/zero: is a character device, not a file"},
      {dir_, dir_.string() + ": is a directory, not a file"}};
  for (const auto& [file, message] : cases) {
    auto m = within_seconds([&] { return variants::load_manifest(file); }, dir_ / "fifo");
    ASSERT_FALSE(m) << file;
    EXPECT_EQ(m.error().code, ErrorCode::kInvalidArgument) << file;
    EXPECT_THAT(m.error().message, HasSubstr(message));
    auto d = within_seconds([&] { return variants::load_deployment(file); }, dir_ / "fifo");
    ASSERT_FALSE(d) << file;
    EXPECT_THAT(d.error().message, HasSubstr(message));
  }
  EXPECT_EQ(variants::load_manifest(dir_ / "gone.json").error().code, ErrorCode::kNotFound);
  EXPECT_THAT(variants::load_deployment(dir_ / "gone.json").error().message, HasSubstr("gone.json: does not exist"));
}

TEST_F(FileReaderTest, AManifestFieldOfTheWrongKindIsAFindingNamingTheFileAndTheField) {
  const fs::path f = dir_ / "m.json";
  auto error = [&](const json& j) {
    write(f, j.dump());
    auto m = variants::load_manifest(f);
    EXPECT_FALSE(m) << j.dump();
    return m ? std::string() : m.error().message;
  };
  EXPECT_THAT(error({{"schema", 5}}), HasSubstr(f.string() + ": is not a variant manifest (\"schema\" is 5;"));
  EXPECT_THAT(error(json::array({1})), HasSubstr(f.string() + ": is not a variant manifest"));
  EXPECT_THAT(error({{"schema", "rung-variant-manifest"}, {"schema_version", "1"}}), HasSubstr("has schema_version \"1\"; this rung reads 1"));
  EXPECT_THAT(error({{"schema", "rung-variant-manifest"}, {"schema_version", 1}, {"groups", 5}}), HasSubstr(f.string() + ": 'groups' must be a list"));
  EXPECT_THAT(error({{"schema", "rung-variant-manifest"}, {"schema_version", 1}, {"groups", {5}}}),
              HasSubstr(f.string() + ": a group: must be a JSON object"));
  EXPECT_THAT(error(manifest_with({{"name", 5}})), HasSubstr(f.string() + ": a group: 'name' must be a string"));
  EXPECT_THAT(error(manifest_with({{"name", "g"}, {"role", 1}})), HasSubstr("group g: 'role' must be a string"));
  EXPECT_THAT(error(manifest_with({{"name", "g"}, {"variants", {{{"key", 7}}}}})), HasSubstr("group g variant '': 'key' must be a string"));
  EXPECT_THAT(error(manifest_with({{"name", "g"}, {"variants", {{{"key", "k"}, {"rungs", "cpu"}}}}})),
              HasSubstr("group g variant 'k': 'rungs' must be a list"));
  auto v = cpu_variant();
  v["form"] = 32;
  EXPECT_THAT(error(manifest_with({{"name", "g"}, {"variants", {v}}})), HasSubstr("group g variant 'cpu_f32': 'form' must be a string"));
  v = cpu_variant();
  v["file"] = "m.onnx";
  EXPECT_THAT(error(manifest_with({{"name", "g"}, {"variants", {v}}})), HasSubstr("group g variant 'cpu_f32': 'file' must be an object"));
  v["file"] = {{"path", 3}};
  EXPECT_THAT(error(manifest_with({{"name", "g"}, {"variants", {v}}})), HasSubstr("variant 'cpu_f32': \"file\": 'path' must be a string"));
  v = cpu_variant();
  v["sha256"] = json::array();
  EXPECT_THAT(error(manifest_with({{"name", "g"}, {"variants", {v}}})), HasSubstr("variant 'cpu_f32': 'sha256' must be a string"));
  v = cpu_variant();
  v["sha_256"] = "x";
  EXPECT_THAT(error(manifest_with({{"name", "g"}, {"variants", {v}}})), HasSubstr("variant 'cpu_f32': unknown key 'sha_256'"));
  EXPECT_THAT(error(manifest_with({{"name", "g"}, {"variants", {cpu_variant()}}, {"pins", {{{"platform", {1}}}}}})),
              HasSubstr("group g: a pin: 'platform' must be a string"));
  EXPECT_THAT(error(manifest_with({{"name", "g"}, {"variants", {cpu_variant()}}, {"pins", {"any"}}})),
              HasSubstr("group g: a pin: must be a JSON object"));
  // A right one still loads.
  write(f, manifest_with({{"name", "g"}, {"variants", {cpu_variant()}}}).dump());
  EXPECT_TRUE(variants::load_manifest(f));
}

TEST_F(FileReaderTest, ADeploymentFieldOfTheWrongKindIsAFindingNamingTheFileAndTheField) {
  const fs::path f = dir_ / "d.json";
  auto error = [&](const json& j) {
    write(f, j.dump());
    auto d = variants::load_deployment(f);
    EXPECT_FALSE(d) << j.dump();
    return d ? std::string() : d.error().message;
  };
  EXPECT_THAT(error({{"schema", 5}}), HasSubstr(f.string() + ": is not a deployment file (\"schema\" is 5;"));
  EXPECT_THAT(error({{"schema", "rung-deployment"}, {"schema_version", 1.5}}), HasSubstr("has schema_version 1.5"));
  EXPECT_THAT(error({{"schema", "rung-deployment"}, {"schema_version", 1}, {"provisions", "cuda"}}), HasSubstr(f.string() + ": 'provisions' must be a list"));
  EXPECT_THAT(error({{"schema", "rung-deployment"}, {"schema_version", 1}, {"provisions", {"cuda"}}, {"description", 3}}),
              HasSubstr("'description' must be a string"));
}

// --- the CLI: exit 2 naming the file, never a crash ---

std::string rung(const std::string& args) { return "env -u RUNG_ORT_DIR -u RUNG_PLUGIN_DIR timeout 60 '" + test::cli_path().string() + "' " + args; }

TEST_F(FileReaderTest, RungVariantsRefusesADamagedManifestOrDeploymentWithExitTwo) {
  write(dir_ / "deep.json", deep_object(kDeep));
  write(dir_ / "schema5.json", R"({"schema": 5})");
  sized(dir_ / "big.json", (16u << 20) + 1);
  const fs::path bundled = kSource / "manifests" / "bundled.variants.json";
  for (const auto& [file, message] : std::vector<std::pair<std::string, std::string>>{
           {(dir_ / "deep.json").string(), "nested deeper than 64 levels"},
           {(dir_ / "schema5.json").string(), "is not a"},
           {(dir_ / "big.json").string(), "is 16.0 MiB; rung reads at most 16.0 MiB for a document"},
           {(dir_ / "fifo").string(), "is a FIFO, not a file"},
           {"/dev/zero", "is a character device, not a file"}}) {
    for (const std::string& option : {"--variants " + file, "--variants " + bundled.string() + " --deployment " + file}) {
      auto r = test::run_command(rung("variants resolve " + option));
      EXPECT_EQ(r.exit_code, 2) << option << ": " << r.err;
      EXPECT_THAT(r.err, HasSubstr(file + ": " + message)) << option;
    }
  }
}

// --- a gate file's character list ---

TEST_F(FileReaderTest, ACharacterListThatIsAFifoOrADeviceIsRefusedAtOnceNamingIt) {
  auto fifo = within_seconds([&] { return CharacterList::from_file(dir_ / "fifo"); }, dir_ / "fifo");
  ASSERT_FALSE(fifo);
  EXPECT_EQ(fifo.error().message, "character list " + (dir_ / "fifo").string() + ": is a FIFO, not a file");
  auto zero = CharacterList::from_file("/dev/zero");
  ASSERT_FALSE(zero);
  EXPECT_EQ(zero.error().message, "character list /dev/zero: is a character device, not a file");
  sized(dir_ / "keys.txt", (4u << 20) + 1);
  EXPECT_THAT(CharacterList::from_file(dir_ / "keys.txt").error().message, HasSubstr("rung reads at most 4.0 MiB for a character list"));
  // Lines as before: a final newline ends the last symbol, CRLF is one line end.
  write(dir_ / "keys.txt", "a\r\nb\n\nc");
  auto keys = CharacterList::from_file(dir_ / "keys.txt", false);
  ASSERT_TRUE(keys);
  EXPECT_EQ(keys->classes(), 5u);  // blank, a, b, "", c
  EXPECT_EQ(keys->symbol(4), "c");
}

TEST_F(FileReaderTest, ParityRefusesAGateFilesCharacterListThatIsAFifoOrADevice) {
  test::write_elementwise_model(dir_ / "tiny.onnx", {1, 4, 6});
  for (const std::string& characters : {(dir_ / "fifo").string(), std::string("/dev/zero")}) {
    write(dir_ / "gate.json", json{{"gates", {{{"decoder", "text"}, {"output", "y"}, {"characters", characters}}}}}.dump());
    // A bound on memory too: the old reader grew a line from /dev/zero without end.
    auto r = test::run_command("ulimit -v 8000000; env -u RUNG_ORT_DIR timeout 60 '" + test::cli_path().string() + "' parity --ref " +
                               (dir_ / "tiny.onnx").string() + " --cand " + (dir_ / "tiny.onnx").string() + " --random 1 --gate " +
                               (dir_ / "gate.json").string() + " --ort-dir " + test::runtime_dir("1.30.0").string());
    EXPECT_EQ(r.exit_code, 2) << characters << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr("character list " + characters + ": is a "));
  }
}

// --- what the fuzzers found ---

// fuzz/quantise-report.cc: a recipe file that is not JSON and not UTF-8 made
// the release key throw json's type_error out of the library.
TEST(FuzzFindings, AReleaseKeyIsMadeOfARecipeThatIsNeitherJsonNorUtf8) {
  Release r;
  r.recipe_json = "{\"command\": \"rung upgrade m.onnx\", \xa2settings\": {}}";
  std::string key;
  EXPECT_NO_THROW(key = r.release_key());
  EXPECT_EQ(key.size(), 64u);
  EXPECT_NO_THROW((void)r.to_json());
}

// --- the check that keeps it so ---

test::CommandResult check_inputs(const fs::path& root) {
  return test::run_command("/usr/bin/python3 '" + (kSource / "tools" / "check-inputs.py").string() + "' --root '" + root.string() + "'");
}

// (ctest's layers.one_way_in_for_files runs it on rung itself.)
TEST_F(FileReaderTest, TheCheckNamesEachBypassPlantedInACopyOfTheTree) {
  // A copy of the manifest reader with json::parse put back, and other ways around os.
  fs::create_directories(dir_ / "src" / "variants");
  fs::create_directories(dir_ / "src" / "os");
  fs::create_directories(dir_ / "tests");
  fs::copy_file(kSource / "src" / "variants" / "manifest.cpp", dir_ / "src" / "variants" / "manifest.cpp");
  EXPECT_EQ(check_inputs(dir_).exit_code, 0) << check_inputs(dir_).out;
  std::ofstream(dir_ / "src" / "variants" / "manifest.cpp", std::ios::app) << "\nauto planted = nlohmann::json::parse(text);\n";
  write(dir_ / "src" / "variants" / "more.cpp",
        "// std::ifstream in a comment is fine\n"
        "const char* s = \"fopen( in a string is fine\";\n"
        "using ordered = nlohmann::ordered_json;\n"
        "auto a = ordered::parse(t);\n"
        "std::ifstream in(p);\n"
        "std::FILE* f = std::fopen(p, \"r\");\n"
        "int fd = ::open(p, O_RDONLY);\n"
        "auto r = Registry::open(url);\n"
        "void* m = mmap(nullptr, 1, 0, 0, fd, 0);\n"
        "auto i = stbi_load(p, &w, &h, &n, 3);\n");
  write(dir_ / "src" / "os" / "reader.cpp", "auto j = nlohmann::json::parse(text);\n");
  write(dir_ / "tests" / "t-test.cc", "std::ifstream in(p);\n");
  auto found = check_inputs(dir_);
  EXPECT_EQ(found.exit_code, 1);
  const std::string original = test::read_file(kSource / "src" / "variants" / "manifest.cpp");
  const auto manifest_lines = std::count(original.begin(), original.end(), '\n');
  EXPECT_THAT(found.out, HasSubstr(fmt::format("src/variants/manifest.cpp:{}: nlohmann::json::parse(", manifest_lines + 2)));
  for (int line : {4, 5, 6, 7, 9, 10}) EXPECT_THAT(found.out, HasSubstr(fmt::format("src/variants/more.cpp:{}:", line)));
  for (int line : {1, 2, 3, 8}) EXPECT_THAT(found.out, Not(HasSubstr(fmt::format("src/variants/more.cpp:{}:", line))));
  EXPECT_THAT(found.out, Not(HasSubstr("src/os/reader.cpp")));
  EXPECT_THAT(found.out, Not(HasSubstr("tests/t-test.cc")));
}

}  // namespace
}  // namespace rung
