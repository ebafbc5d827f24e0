// The cases every system's file reader (os/read_file.h over os/opened_file.h) is
// held to: each kind read up to its limit and refused one byte past, a raised
// limit named with its option, only regular files read (a FIFO or named pipe, a
// device, a directory each refused as what it is, without waiting), a log read
// from its tail, a file read at offsets. Included by tests/file-reader-test.cc
// (Linux) and tests/windows/file-reader-test.cc (Windows under wine), each of
// which defines what differs between the systems (rung::system_files, below).
#pragma once

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "os/read_file.h"
#include "temp_dir_test.h"
#include "rung/setting_names.h"

namespace rung {

namespace system_files {
void sized(const std::filesystem::path& file, std::uint64_t bytes);  // a sparse file of that size: a 2 GiB limit costs no disk
std::filesystem::path make_pipe(const std::filesystem::path& dir);  // a FIFO, or a named pipe waiting for a client
extern const char* const kPipeKind;                                  // "a FIFO", "a named pipe"
extern const char* const kDevicePath;                                // a character device: "/dev/zero", "NUL"
}  // namespace system_files

namespace {

namespace fs = std::filesystem;

void write_bytes(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::trunc | std::ios::binary) << text; }

class FileReaderCases : public test::TempDirTest {
 protected:
  FileReaderCases() : TempDirTest("rung-file-reader") {}
  void SetUp() override {
    TempDirTest::SetUp();
    pipe_ = system_files::make_pipe(dir_);
  }
  fs::path pipe_;
};

TEST_F(FileReaderCases, EachKindIsReadUpToItsLimitAndRefusedOneBytePast) {
  for (const auto& kind : kFileKinds) {
    SCOPED_TRACE(kind.name);
    const fs::path at = dir_ / "at", over = dir_ / "over";
    system_files::sized(at, kind.max_bytes);
    system_files::sized(over, kind.max_bytes + 1);
    auto opened = open_input_file(at, kind.kind);
    ASSERT_TRUE(opened) << opened.error().message;
    EXPECT_EQ(opened->size(), kind.max_bytes);
    auto refused = open_input_file(over, kind.kind);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code, ErrorCode::kInvalidArgument);
    EXPECT_THAT(refused.error().message, ::testing::HasSubstr(over.string() + ": is "));
    EXPECT_THAT(refused.error().message,
                ::testing::HasSubstr(fmt::format("rung reads at most {} for {}", byte_size_text(kind.max_bytes), kind.name)));
    // The whole file is read where that is small enough to hold here (documents, character lists, text).
    if (kind.max_bytes <= (16u << 20)) {
      auto read = read_input_file(at, kind.kind);
      ASSERT_TRUE(read) << read.error().message;
      EXPECT_EQ(read->size(), kind.max_bytes);
      EXPECT_FALSE(read_input_file(over, kind.kind));
    }
    fs::remove(at);
    fs::remove(over);
  }
}

TEST_F(FileReaderCases, TheLimitsAreThoseTheDocumentationStates) {
  EXPECT_EQ(file_kind_limit(FileKind::kDocument).max_bytes, 16u << 20);
  EXPECT_EQ(file_kind_limit(FileKind::kModel).max_bytes, (2ull << 30) - 1);
  EXPECT_EQ(file_kind_limit(FileKind::kTensor).max_bytes, (1ull << 30) + (64u << 10));
  EXPECT_EQ(file_kind_limit(FileKind::kImage).max_bytes, 1ull << 30);
  EXPECT_EQ(file_kind_limit(FileKind::kCharacterList).max_bytes, 4u << 20);
  EXPECT_EQ(file_kind_limit(FileKind::kText).max_bytes, 16u << 20);
}

TEST_F(FileReaderCases, ARaisedLimitIsUsedAndNamedWithTheOptionThatRaisesIt) {
  write_bytes(dir_ / "t.pb", std::string(1001, 'x'));
  EXPECT_TRUE(read_input_file(dir_ / "t.pb", FileKind::kTensor, 1001));
  auto over = read_input_file(dir_ / "t.pb", FileKind::kTensor, 1000);
  ASSERT_FALSE(over);
  // The engine's own words name no option (an application has no flag to pass)...
  EXPECT_THAT(over.error().message, ::testing::EndsWith("is 1001 bytes; rung reads at most 1000 bytes for a tensor file"));
  // ...and under a front that names its settings (the CLI), the option that raises it.
  use_setting_names([](Setting s, std::string_view) -> std::string { return s == Setting::kMaxTensorMb ? "--max-tensor-mb" : ""; });
  EXPECT_THAT(read_input_file(dir_ / "t.pb", FileKind::kTensor, 1000).error().message,
              ::testing::HasSubstr("is 1001 bytes; rung reads at most 1000 bytes for a tensor file (raise it with --max-tensor-mb)"));
  EXPECT_THAT(read_input_file(dir_ / "t.pb", FileKind::kImage, 1000).error().message,
              ::testing::HasSubstr("for an image (raise it with --max-tensor-mb)"));
  EXPECT_THAT(read_input_file(dir_ / "t.pb", FileKind::kDocument, 1000).error().message, ::testing::EndsWith("for a document"));
  use_setting_names(nullptr);
  EXPECT_THAT(read_regular_file(dir_ / "t.pb", 1000).error().message, ::testing::HasSubstr("rung reads at most 1000 bytes here"));
}

TEST_F(FileReaderCases, OnlyRegularFilesAreReadAndNothingWaitsOnAPipe) {
  const std::string pipe_words = pipe_.string() + ": is " + system_files::kPipeKind + ", not a file";
  const std::string device_words = std::string(system_files::kDevicePath) + ": is a character device, not a file";
  for (FileKind kind : {FileKind::kDocument, FileKind::kModel, FileKind::kCharacterList, FileKind::kText}) {
    SCOPED_TRACE(file_kind_limit(kind).name);
    EXPECT_EQ(read_input_file(pipe_, kind).error().message, pipe_words);
    EXPECT_EQ(open_input_file(pipe_, kind).error().message, pipe_words);
    EXPECT_EQ(read_input_file(system_files::kDevicePath, kind).error().message, device_words);
    EXPECT_EQ(read_input_file(dir_, kind).error().message, dir_.string() + ": is a directory, not a file");
    auto gone = read_input_file(dir_ / "gone", kind);
    EXPECT_EQ(gone.error().code, ErrorCode::kNotFound);
    EXPECT_EQ(gone.error().message, (dir_ / "gone").string() + ": does not exist");
    EXPECT_EQ(read_input_file(dir_ / "gone" / "deeper", kind).error().code, ErrorCode::kNotFound);
  }
  EXPECT_FALSE(read_input_file_if_usable(pipe_, FileKind::kDocument));
  EXPECT_FALSE(read_input_file_if_usable(dir_ / "gone", FileKind::kDocument));
  EXPECT_EQ(read_file_tail(pipe_, 100), "");
  EXPECT_EQ(read_file_tail(system_files::kDevicePath, 100), "");
  EXPECT_FALSE(read_system_file(pipe_));
  EXPECT_FALSE(read_system_file(system_files::kDevicePath));
  EXPECT_FALSE(read_system_file(dir_));
}

TEST_F(FileReaderCases, ALogIsReadFromItsTailAndASystemFileToItsEndWithinItsBound) {
  write_bytes(dir_ / "worker.log", std::string(100, 'a') + "\nthe last line\n");
  EXPECT_EQ(read_file_tail(dir_ / "worker.log", 14), "the last line\n");
  EXPECT_EQ(read_file_tail(dir_ / "worker.log", 1000).size(), 115u);
  EXPECT_EQ(read_file_tail(dir_ / "worker.log", 0), "");
  EXPECT_EQ(read_file_tail(dir_ / "gone.log", 100), "");
  EXPECT_EQ(read_system_file(dir_ / "worker.log")->size(), 115u);
  EXPECT_EQ(*read_system_file(dir_ / "worker.log", 4), "aaaa");
  // More than one read's worth (64 KiB) is read whole.
  write_bytes(dir_ / "big.txt", std::string(200'000, 'b') + "end");
  EXPECT_EQ(read_system_file(dir_ / "big.txt")->size(), 200'003u);
}

TEST_F(FileReaderCases, AnOpenFileIsReadAtAnyOffsetAndNothingPastItsEnd) {
  std::string text;
  for (int i = 0; i < 70'000; ++i) text += static_cast<char>('a' + i % 26);
  write_bytes(dir_ / "m.onnx", text);
  auto file = open_input_file(dir_ / "m.onnx", FileKind::kModel);
  ASSERT_TRUE(file) << file.error().message;
  EXPECT_EQ(file->size(), text.size());
  EXPECT_EQ(*file->read(0, 4), "abcd");
  EXPECT_EQ(*file->read(26 * 100 + 1, 3), "bcd");
  EXPECT_EQ(*file->read(text.size() - 2, 100), text.substr(text.size() - 2));  // fewer at the end
  EXPECT_EQ(*file->read(text.size(), 10), "");
  EXPECT_EQ(*file->read(text.size() + 1000, 10), "");
  EXPECT_EQ(*file->read(0, text.size()), text);
  // The file stays readable while another writer has it open, as on every system rung runs on.
  std::ofstream writer(dir_ / "m.onnx", std::ios::app | std::ios::binary);
  EXPECT_EQ(*file->read(1, 2), "bc");
}

}  // namespace
}  // namespace rung
