// Windows: the file opened for its attributes alone (no read access needed, any
// sharing, directories too), then GetFileInformationByHandle for the volume, the
// file id and the size, and FILE_BASIC_INFO for the last write and change times.
#include <windows.h>

#include "os/file_identity.h"

namespace rung {
namespace {

// 100 ns ticks since 1601, in ns: comparable with each other, which is all an identity needs.
std::int64_t ns_of(LARGE_INTEGER ticks) { return static_cast<std::int64_t>(ticks.QuadPart) * 100; }

}  // namespace

bool identity_of(const std::filesystem::path& file, FileIdentity& id) {
  const HANDLE h = CreateFileW(file.c_str(), FILE_READ_ATTRIBUTES, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr, OPEN_EXISTING,
                               FILE_FLAG_BACKUP_SEMANTICS, nullptr);
  if (h == INVALID_HANDLE_VALUE) return false;
  BY_HANDLE_FILE_INFORMATION info{};
  FILE_BASIC_INFO times{};
  const bool ok = GetFileInformationByHandle(h, &info) && GetFileInformationByHandleEx(h, FileBasicInfo, &times, sizeof times);
  CloseHandle(h);
  if (!ok) return false;
  id.device = info.dwVolumeSerialNumber;
  id.inode = (static_cast<std::uint64_t>(info.nFileIndexHigh) << 32) | info.nFileIndexLow;
  id.size = (static_cast<std::uint64_t>(info.nFileSizeHigh) << 32) | info.nFileSizeLow;
  id.mtime_ns = ns_of(times.LastWriteTime);
  id.ctime_ns = ns_of(times.ChangeTime);
  return true;
}

}  // namespace rung
