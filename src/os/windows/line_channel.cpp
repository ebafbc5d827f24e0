// Windows: a named pipe of one instance, duplex and overlapped, made by this
// process under a fresh name (FILE_FLAG_FIRST_PIPE_INSTANCE: nobody else can have
// made it first), its client end opened at once, remote clients refused. A read
// waits on its event until the deadline and is cancelled there; a closed peer is
// ERROR_BROKEN_PIPE, never a signal.
#include <windows.h>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <random>

#include "os/line_channel.h"
#include "os/windows/handle.h"
#include "os/windows/text.h"

namespace rung {
namespace {

// The neutral header's int, and back (os/line_channel.h says why 32 bits hold a handle).
HANDLE channel_handle(int end) { return handle_of(static_cast<std::intptr_t>(end)); }
int end_of(HANDLE h) { return static_cast<int>(bits_of(h)); }

// One overlapped operation on the channel, waited for on its own event.
struct Pending {
  OVERLAPPED overlapped{};
  Pending() { overlapped.hEvent = CreateEventW(nullptr, TRUE, FALSE, nullptr); }
  ~Pending() {
    if (overlapped.hEvent != nullptr) CloseHandle(overlapped.hEvent);
  }
  Pending(const Pending&) = delete;
  Pending& operator=(const Pending&) = delete;
};

}  // namespace

bool LineChannel::send(const std::string& line) {
  if (fd_ < 0) return false;
  const std::string data = line + "\n";
  std::size_t sent = 0;
  while (sent < data.size()) {
    Pending op;
    const DWORD chunk = static_cast<DWORD>(std::min<std::size_t>(data.size() - sent, 1 << 20));
    DWORD n = 0;
    if (!WriteFile(channel_handle(fd_), data.data() + sent, chunk, nullptr, &op.overlapped) && GetLastError() != ERROR_IO_PENDING) return false;
    if (!GetOverlappedResult(channel_handle(fd_), &op.overlapped, &n, TRUE) || n == 0) return false;
    sent += n;
  }
  return true;
}

LineChannel::Read LineChannel::read_more(std::optional<std::chrono::steady_clock::time_point> until) {
  for (;;) {
    if (fd_ < 0) return Read::kClosed;
    if (until && std::chrono::steady_clock::now() >= *until) return Read::kTimedOut;
    char chunk[4096];
    Pending op;
    DWORD n = 0;
    if (!ReadFile(channel_handle(fd_), chunk, sizeof chunk, nullptr, &op.overlapped)) {
      const DWORD code = GetLastError();
      if (code != ERROR_IO_PENDING) return Read::kClosed;  // a closed peer (ERROR_BROKEN_PIPE), or any failure: the channel has ended
      DWORD wait = INFINITE;
      if (until) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*until - std::chrono::steady_clock::now()).count();
        wait = static_cast<DWORD>(std::clamp<long long>(left, 0, 1000));
      }
      if (WaitForSingleObject(op.overlapped.hEvent, wait) != WAIT_OBJECT_0) {
        // No data yet: cancel the read and take what it may have got meanwhile, then look at the clock again.
        CancelIoEx(channel_handle(fd_), &op.overlapped);
      }
    }
    if (!GetOverlappedResult(channel_handle(fd_), &op.overlapped, &n, TRUE)) {
      const DWORD code = GetLastError();
      if (code == ERROR_OPERATION_ABORTED) continue;  // cancelled at a wait's end
      if (code != ERROR_MORE_DATA) return Read::kClosed;
    } else if (n == 0) {
      return Read::kClosed;
    }
    buffer_.append(chunk, n);
    return Read::kLine;
  }
}

Result<ChannelEnds> open_channel_pair() {
  static std::atomic<unsigned> made{0};
  static thread_local std::mt19937_64 random{std::random_device{}()};
  const std::wstring name = wide_of(fmt::format("\\\\.\\pipe\\rung-channel-{}-{}-{:016x}", GetCurrentProcessId(), made++, random()));
  // Neither end is inheritable: ChildProcess::spawn hands `theirs` to one child alone.
  const HANDLE server = CreateNamedPipeW(name.c_str(), PIPE_ACCESS_DUPLEX | FILE_FLAG_OVERLAPPED | FILE_FLAG_FIRST_PIPE_INSTANCE,
                                         PIPE_TYPE_BYTE | PIPE_READMODE_BYTE | PIPE_WAIT | PIPE_REJECT_REMOTE_CLIENTS, 1, 1 << 16, 1 << 16, 0, nullptr);
  if (server == INVALID_HANDLE_VALUE) return Error{ErrorCode::kIo, fmt::format("creating a channel's pipe failed: {}", windows_error_text(GetLastError()))};
  const HANDLE client = CreateFileW(name.c_str(), GENERIC_READ | GENERIC_WRITE, 0, nullptr, OPEN_EXISTING, FILE_FLAG_OVERLAPPED, nullptr);
  if (client == INVALID_HANDLE_VALUE) {
    const DWORD code = GetLastError();
    CloseHandle(server);
    return Error{ErrorCode::kIo, fmt::format("opening a channel's pipe failed: {}", windows_error_text(code))};
  }
  // The client is already there: connecting answers ERROR_PIPE_CONNECTED at once.
  Pending op;
  if (!ConnectNamedPipe(server, &op.overlapped)) {
    const DWORD code = GetLastError();
    DWORD unused = 0;
    if (code == ERROR_IO_PENDING) GetOverlappedResult(server, &op.overlapped, &unused, TRUE);
  }
  return ChannelEnds{end_of(server), end_of(client), end_of(client)};
}

void close_channel_end(int end) {
  if (end >= 0) CloseHandle(channel_handle(end));
}

void LineChannel::close() {
  if (fd_ < 0) return;
  CloseHandle(channel_handle(fd_));  // the other end's next read is ERROR_BROKEN_PIPE
  fd_ = -1;
}

}  // namespace rung
