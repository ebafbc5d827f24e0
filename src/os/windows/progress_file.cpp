// Windows: a handle that children do not inherit, written at offset 0 through an OVERLAPPED offset.
#include <windows.h>

#include "os/progress_file.h"
#include "os/windows/handle.h"

namespace rung {

ProgressFile::ProgressFile(const std::filesystem::path& path) {
  if (path.empty()) return;
  HANDLE h = CreateFileW(path.c_str(), GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr, CREATE_ALWAYS,
                         FILE_ATTRIBUTE_NORMAL, nullptr);
  if (h != INVALID_HANDLE_VALUE) file_ = bits_of(h);
}

ProgressFile::~ProgressFile() {
  if (file_ != -1) CloseHandle(handle_of(file_));
}

void ProgressFile::write_line(const std::string& line) {
  OVERLAPPED at{};  // offset 0
  DWORD wrote = 0;
  WriteFile(handle_of(file_), line.data(), static_cast<DWORD>(line.size()), &wrote, &at);
}

}  // namespace rung
