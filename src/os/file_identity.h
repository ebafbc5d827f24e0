// What says "the same file, unchanged" without reading it: the device and inode
// it lives at, its size, and its modification and status-change times. The
// status-change time (ctime) is set by the kernel on every write, chmod, chown,
// link or rename onto the name, and no user call can set it back, so a file whose
// whole identity is unchanged holds the same bytes and the same mode it held.
// On Windows: the volume's serial number, the file's id on it, its size, its
// last write time and its change time (FILE_BASIC_INFO's ChangeTime, which the
// file system sets on every change to the file or its attributes), in ns since
// 1601 (os/windows/file_identity.cpp).
#pragma once

#include <cstdint>
#include <filesystem>

namespace rung {

struct FileIdentity {
  std::uint64_t device = 0, inode = 0, size = 0;
  std::int64_t mtime_ns = 0, ctime_ns = 0;
  bool operator==(const FileIdentity&) const = default;
};

// False when the file's facts cannot be had (missing, or unreadable even as facts);
// links are followed, as opening the file would.
bool identity_of(const std::filesystem::path& file, FileIdentity& identity);

}  // namespace rung
