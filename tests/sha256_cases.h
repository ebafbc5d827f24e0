// The SHA-256 cases every system's digest (os/sha256.h) is held to: FIPS 180-2's
// vectors, and one input fed in pieces of every awkward size. Included by
// tests/sha256-test.cc (Linux, OpenSSL) and tests/windows/sha256-test.cc (Windows
// under wine, CNG): one body, so both systems give the same digests.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "os/sha256.h"

namespace rung {
namespace {

TEST(Sha256, TheStandardsVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string(1'000'000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, PiecesOfAnySizeGiveTheWholesDigest) {
  std::string text;
  for (int i = 0; i < 10'000; ++i) text += static_cast<char>(i * 7 + 3);
  const std::string whole = sha256_hex(text);
  for (std::size_t piece : {std::size_t{1}, std::size_t{63}, std::size_t{64}, std::size_t{65}, std::size_t{4096}}) {
    Sha256 h;
    for (std::size_t at = 0; at < text.size(); at += piece) h.update(text.data() + at, std::min(piece, text.size() - at));
    EXPECT_EQ(h.hex_digest(), whole) << "pieces of " << piece;
  }
  Sha256 nothing;
  nothing.update(nullptr, 0);
  EXPECT_EQ(nothing.hex_digest(), sha256_hex(""));
}

}  // namespace
}  // namespace rung
