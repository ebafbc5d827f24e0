// Atomic writes on Windows (os/windows/atomic_file.cpp), under wine: the file
// appears whole or not at all, an old one is replaced, and a write that fails
// names the file and leaves no temporary behind.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "os/atomic_file.h"
#include "temp_dir_test.h"

namespace rung {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::string contents_of(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

class WindowsAtomicFileTest : public test::TempDirTest {
 protected:
  WindowsAtomicFileTest() : TempDirTest("rung-atomic") {}
};

TEST_F(WindowsAtomicFileTest, WritesANewFileAndNothingElse) {
  ASSERT_TRUE(write_file_atomically(dir_ / "probe.json", "{\"rung\": \"cpu\"}\n"));
  EXPECT_EQ(contents_of(dir_ / "probe.json"), "{\"rung\": \"cpu\"}\n");
  EXPECT_EQ(names_in(dir_), std::vector<std::string>{"probe.json"});
}

TEST_F(WindowsAtomicFileTest, ReplacesAnOldFileLongerOrShorter) {
  ASSERT_TRUE(write_file_atomically(dir_ / "probe.json", std::string(100000, 'o')));
  ASSERT_TRUE(write_file_atomically(dir_ / "probe.json", "short"));
  EXPECT_EQ(contents_of(dir_ / "probe.json"), "short");
  const std::string longer(3 << 20, 'n');
  ASSERT_TRUE(write_file_atomically(dir_ / "probe.json", longer));
  EXPECT_EQ(contents_of(dir_ / "probe.json"), longer);
  EXPECT_EQ(names_in(dir_), std::vector<std::string>{"probe.json"});
}

TEST_F(WindowsAtomicFileTest, BytesAreWrittenAsGiven) {
  const std::string bytes("a\r\nb\nc\0d\x1a", 9);  // no text-mode translation, no end at ^Z
  ASSERT_TRUE(write_file_atomically(dir_ / "bytes.bin", bytes));
  EXPECT_EQ(contents_of(dir_ / "bytes.bin"), bytes);
  ASSERT_TRUE(write_file_atomically(dir_ / "empty", ""));
  EXPECT_EQ(fs::file_size(dir_ / "empty"), 0u);
}

TEST_F(WindowsAtomicFileTest, ATargetThatIsADirectoryIsAnErrorNamingItAndLeavesNoTemporary) {
  fs::create_directory(dir_ / "probe.json");
  auto s = write_file_atomically(dir_ / "probe.json", "new");
  ASSERT_FALSE(s);
  EXPECT_THAT(s.error().message, HasSubstr((dir_ / "probe.json").string()));
  EXPECT_THAT(s.error().message, HasSubstr("replacing it failed"));
  EXPECT_TRUE(fs::is_directory(dir_ / "probe.json"));
  EXPECT_EQ(names_in(dir_), std::vector<std::string>{"probe.json"});
}

TEST_F(WindowsAtomicFileTest, AMissingDirectoryIsAnErrorNamingTheFile) {
  auto s = write_file_atomically(dir_ / "missing" / "probe.json", "new");
  ASSERT_FALSE(s);
  EXPECT_THAT(s.error().message, HasSubstr((dir_ / "missing" / "probe.json").string()));
  EXPECT_THAT(s.error().message, HasSubstr("creating a temporary file failed"));
  EXPECT_TRUE(names_in(dir_).empty());
}

TEST_F(WindowsAtomicFileTest, CommitPutsAFinishedTemporaryInPlace) {
  ASSERT_TRUE(write_file_atomically(dir_ / "engine.onnx", "old engine"));
  std::ofstream(dir_ / "engine.onnx.partial", std::ios::binary) << "new engine";
  ASSERT_TRUE(commit_file(dir_ / "engine.onnx.partial", dir_ / "engine.onnx"));
  EXPECT_EQ(contents_of(dir_ / "engine.onnx"), "new engine");
  EXPECT_EQ(names_in(dir_), std::vector<std::string>{"engine.onnx"});
}

TEST_F(WindowsAtomicFileTest, CommitRefusesAMissingTemporaryOrADirectoryAndKeepsTheOldFile) {
  ASSERT_TRUE(write_file_atomically(dir_ / "engine.onnx", "old engine"));
  auto missing = commit_file(dir_ / "gone.partial", dir_ / "engine.onnx");
  ASSERT_FALSE(missing);
  EXPECT_THAT(missing.error().message, HasSubstr((dir_ / "gone.partial").string() + ": not committed"));
  fs::create_directory(dir_ / "dir.partial");
  auto directory = commit_file(dir_ / "dir.partial", dir_ / "engine.onnx");
  ASSERT_FALSE(directory);
  EXPECT_THAT(directory.error().message, HasSubstr("not a regular file"));
  EXPECT_EQ(contents_of(dir_ / "engine.onnx"), "old engine");
}

}  // namespace
}  // namespace rung
