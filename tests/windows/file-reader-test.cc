// Reading files on Windows (os/windows/opened_file.cpp), under wine: the cases
// every system's reader is held to (tests/file_reader_cases.h), with a named pipe
// for the FIFO and NUL for the device.
#include <windows.h>

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>

#include "file_reader_cases.h"

namespace rung::system_files {

void sized(const std::filesystem::path& file, std::uint64_t bytes) {
  // SetEndOfFile past the end allocates nothing it need not (the C runtime's _chsize would write zeros).
  const HANDLE h = CreateFileW(file.c_str(), GENERIC_WRITE, 0, nullptr, CREATE_ALWAYS, FILE_ATTRIBUTE_NORMAL, nullptr);
  ASSERT_NE(h, INVALID_HANDLE_VALUE) << file;
  LARGE_INTEGER at{};
  at.QuadPart = static_cast<LONGLONG>(bytes);
  EXPECT_TRUE(SetFilePointerEx(h, at, nullptr, FILE_BEGIN) && SetEndOfFile(h)) << file;
  CloseHandle(h);
}

std::filesystem::path make_pipe(const std::filesystem::path&) {
  // A server end that stays open for the whole test program, one instance: the
  // first client connects, later ones find it busy; each must be refused at once.
  static std::atomic<int> made{0};
  const std::wstring name = L"\\\\.\\pipe\\rung-file-reader-" + std::to_wstring(GetCurrentProcessId()) + L"-" + std::to_wstring(made++);
  const HANDLE server = CreateNamedPipeW(name.c_str(), PIPE_ACCESS_DUPLEX, PIPE_TYPE_BYTE | PIPE_WAIT, 1, 4096, 4096, 0, nullptr);
  EXPECT_NE(server, INVALID_HANDLE_VALUE) << "CreateNamedPipeW";
  return std::filesystem::path(name);
}

const char* const kPipeKind = "a named pipe";
const char* const kDevicePath = "NUL";

}  // namespace rung::system_files
