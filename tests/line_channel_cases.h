// The cases every system's line channel (os/line_channel.h) is held to, within
// one process: lines both ways, several in one send, lines sent apart, a
// megabyte line that arrives in many reads, a read that times out at its deadline, the end seen
// when the other side closes, and a send to a closed end that fails instead of
// killing the sender. Included by tests/os-seam-test.cc (Linux: a socket pair)
// and tests/windows/line-channel-test.cc (Windows under wine: a named pipe).
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "os/line_channel.h"

namespace rung {
namespace {

TEST(LineChannelCases, APairCarriesLinesBothWaysAndTellsTheEnd) {
  auto ends = open_channel_pair();
  ASSERT_TRUE(ends) << ends.error().message;
  EXPECT_GE(ends->in_child, 0);
  LineChannel ours(ends->ours);
  {
    LineChannel theirs(ends->theirs);
    ASSERT_TRUE(ours.send("{\"to\": \"worker\"}"));
    std::string line;
    ASSERT_EQ(theirs.receive(line, std::chrono::steady_clock::now() + std::chrono::seconds(5)), LineChannel::Read::kLine);
    EXPECT_EQ(line, "{\"to\": \"worker\"}");
    ASSERT_TRUE(theirs.send("one\ntwo"));
    ASSERT_EQ(ours.receive(line), LineChannel::Read::kLine);
    EXPECT_EQ(line, "one");
    ASSERT_EQ(ours.receive(line), LineChannel::Read::kLine);
    EXPECT_EQ(line, "two");
    ASSERT_TRUE(theirs.send(""));
    ASSERT_EQ(ours.receive(line), LineChannel::Read::kLine);
    EXPECT_EQ(line, "") << "an empty line is a line";
    std::string none;
    const auto before = std::chrono::steady_clock::now();
    EXPECT_EQ(ours.receive(none, before + std::chrono::milliseconds(300)), LineChannel::Read::kTimedOut);
    // It waited for its deadline (a read that never returned would be the test's own timeout, not a clock bound here).
    EXPECT_GE(std::chrono::steady_clock::now() - before, std::chrono::milliseconds(290));
    EXPECT_EQ(ours.receive(none, before), LineChannel::Read::kTimedOut) << "a deadline already past";
  }  // their end closes
  std::string after;
  EXPECT_EQ(ours.receive(after), LineChannel::Read::kClosed);
  EXPECT_FALSE(ours.send("nobody listens")) << "a closed peer is a false send, not SIGPIPE";
}

TEST(LineChannelCases, AMegabyteLineCrossesWhileTheOtherSideReads) {
  auto ends = open_channel_pair();
  ASSERT_TRUE(ends) << ends.error().message;
  LineChannel ours(ends->ours), theirs(ends->theirs);
  std::string big;
  for (int i = 0; i < (1 << 20); ++i) big += static_cast<char>('a' + i % 26);
  bool sent = false;
  std::thread sender([&] { sent = ours.send(big) && ours.send("after"); });
  std::string line;
  EXPECT_EQ(theirs.receive(line, std::chrono::steady_clock::now() + std::chrono::seconds(60)), LineChannel::Read::kLine);
  EXPECT_EQ(line.size(), big.size());
  EXPECT_TRUE(line == big);
  EXPECT_EQ(theirs.receive(line, std::chrono::steady_clock::now() + std::chrono::seconds(60)), LineChannel::Read::kLine);
  EXPECT_EQ(line, "after");
  sender.join();
  EXPECT_TRUE(sent);
}

TEST(LineChannelCases, LinesSentApartWaitForEachOtherAndACloseEndsSending) {
  auto ends = open_channel_pair();
  ASSERT_TRUE(ends) << ends.error().message;
  LineChannel ours(ends->ours), theirs(ends->theirs);
  std::thread sender([&] {
    ours.send("first half");  // the reader waits for the second across the pause
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    ours.send("second");
  });
  std::string line;
  EXPECT_EQ(theirs.receive(line, std::chrono::steady_clock::now() + std::chrono::seconds(30)), LineChannel::Read::kLine);
  EXPECT_EQ(line, "first half");
  EXPECT_EQ(theirs.receive(line, std::chrono::steady_clock::now() + std::chrono::seconds(30)), LineChannel::Read::kLine);
  EXPECT_EQ(line, "second");
  sender.join();
  theirs.close();
  EXPECT_FALSE(ours.send("gone"));
  theirs.close();  // twice is harmless
}

}  // namespace
}  // namespace rung
