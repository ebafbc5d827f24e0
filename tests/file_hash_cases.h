// The cases every system's file identity (os/file_identity.h) and file-hash cache
// (os/file_hash.h) are held to: one file, unchanged, is the same identity; a
// rewrite or a replacement by rename is another; a file is hashed once while it
// is unchanged, across processes through the table on disk, and again once it
// changes; a damaged table is ignored, named and rewritten; a digest streamed
// over several reads is the digest of the whole. Included by
// tests/os-safety-test.cc (Linux) and tests/windows/file-hash-test.cc (Windows under wine).
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "os/file_hash.h"
#include "os/file_identity.h"
#include "os/sha256.h"
#include "temp_dir_test.h"

namespace rung {
namespace {

class FileHashCases : public test::TempDirTest {
 protected:
  FileHashCases() : TempDirTest("rung-file-hash") {}
  std::filesystem::path put(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name, std::ios::trunc | std::ios::binary) << text;
    return dir_ / name;
  }
};

TEST_F(FileHashCases, OneUnchangedFileIsOneIdentityAndEveryChangeIsAnother) {
  const auto file = put("m.onnx", "first");
  FileIdentity a, b;
  ASSERT_TRUE(identity_of(file, a));
  ASSERT_TRUE(identity_of(file, b));
  EXPECT_TRUE(a == b);
  EXPECT_EQ(a.size, 5u);
  EXPECT_NE(a.inode, 0u);
  // Rewritten in place: another size, and its times move.
  put("m.onnx", "second!");
  FileIdentity rewritten;
  ASSERT_TRUE(identity_of(file, rewritten));
  EXPECT_FALSE(rewritten == a);
  EXPECT_EQ(rewritten.size, 7u);
  EXPECT_EQ(rewritten.inode, a.inode) << "the same file, written again";
  // Replaced by a rename onto its name: another file, even with the same size.
  const auto other = put("m.onnx.new", "second!");
  FileIdentity before_rename;
  ASSERT_TRUE(identity_of(other, before_rename));
  std::filesystem::rename(other, file);
  FileIdentity replaced;
  ASSERT_TRUE(identity_of(file, replaced));
  EXPECT_NE(replaced.inode, rewritten.inode);
  EXPECT_EQ(replaced.inode, before_rename.inode) << "the renamed file, by its id";
  EXPECT_EQ(replaced.device, a.device);
  // Another file beside it is another identity.
  FileIdentity beside;
  ASSERT_TRUE(identity_of(put("n.onnx", "second!"), beside));
  EXPECT_NE(beside.inode, replaced.inode);
  FileIdentity none;
  EXPECT_FALSE(identity_of(dir_ / "absent.onnx", none));
  EXPECT_FALSE(identity_of(dir_ / "absent" / "deeper.onnx", none));
}

TEST_F(FileHashCases, AFileIsHashedOnceWhileUnchangedEvenAcrossProcesses) {
  const auto file = put("m.onnx", "hello");
  const std::filesystem::path cache = dir_ / "cache";
  std::filesystem::create_directories(cache);
  {
    FileHashCache hashes(cache);
    EXPECT_EQ(hashes.ignored_because(), "");
    auto first = hashes.hash(file);
    ASSERT_TRUE(first) << first.error().message;
    EXPECT_EQ(*first, sha256_hex("hello"));
    EXPECT_EQ(*hashes.hash(file), *first);
    EXPECT_EQ(hashes.files_hashed(), 1u);
    hashes.save();
  }
  EXPECT_TRUE(std::filesystem::exists(cache / "model-hashes.json"));
  {
    FileHashCache again(cache);  // as the next process would
    EXPECT_EQ(*again.hash(file), sha256_hex("hello"));
    EXPECT_EQ(again.files_hashed(), 0u) << "answered from the table, not read";
    put("m.onnx", "hello, again");
    EXPECT_EQ(*again.hash(file), sha256_hex("hello, again"));
    EXPECT_EQ(again.files_hashed(), 1u);
    auto missing = again.hash(dir_ / "absent.onnx");
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
    EXPECT_THAT(missing.error().message, ::testing::HasSubstr("absent.onnx"));
  }
}

TEST_F(FileHashCases, ADamagedTableIsIgnoredNamedAndRewritten) {
  const std::filesystem::path cache = dir_ / "cache";
  std::filesystem::create_directories(cache);
  std::ofstream(cache / "model-hashes.json") << "{ not json";
  const auto file = put("m.onnx", "bytes");
  {
    FileHashCache hashes(cache);
    EXPECT_THAT(hashes.ignored_because(), ::testing::HasSubstr("model-hashes.json"));
    EXPECT_EQ(*hashes.hash(file), sha256_hex("bytes"));
    hashes.save();
  }
  FileHashCache reread(cache);
  EXPECT_EQ(reread.ignored_because(), "");
  EXPECT_EQ(*reread.hash(file), sha256_hex("bytes"));
  EXPECT_EQ(reread.files_hashed(), 0u);
}

TEST_F(FileHashCases, AFileOfSeveralReadsHasTheDigestOfItsWhole) {
  std::string text;
  for (int i = 0; i < 3'000'000; ++i) text += static_cast<char>(i * 31 + 7);
  const auto file = put("big.onnx", text);
  auto digest = sha256_of_file(file);
  ASSERT_TRUE(digest) << digest.error().message;
  EXPECT_EQ(*digest, sha256_hex(text));
  auto missing = sha256_of_file(dir_ / "absent.onnx");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
  EXPECT_FALSE(sha256_of_file(dir_)) << "a directory is no file to hash";
}

}  // namespace
}  // namespace rung
