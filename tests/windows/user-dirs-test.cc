// The default directories on Windows (os/windows/user_dirs.cpp), under wine:
// %LOCALAPPDATA%\rung\cache and \data, the variable taken only when absolute.
#include <windows.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <string>

#include "rung/user_dirs.h"

namespace rung {
namespace {

namespace fs = std::filesystem;

// Sets LOCALAPPDATA (or removes it, for nullopt) for one test, and puts it back after.
class LocalAppData {
 public:
  explicit LocalAppData(const std::optional<std::wstring>& value) {
    wchar_t old[32768];
    const DWORD n = GetEnvironmentVariableW(L"LOCALAPPDATA", old, 32768);
    if (n > 0 && n < 32768) old_ = std::wstring(old, n);
    SetEnvironmentVariableW(L"LOCALAPPDATA", value ? value->c_str() : nullptr);
  }
  ~LocalAppData() { SetEnvironmentVariableW(L"LOCALAPPDATA", old_ ? old_->c_str() : nullptr); }

 private:
  std::optional<std::wstring> old_;
};

TEST(WindowsUserDirs, AnAbsoluteLocalAppDataHoldsBoth) {
  LocalAppData set(std::wstring(L"C:\\Users\\someone\\AppData\\Local"));
  auto cache = user_cache_dir();
  auto data = user_data_dir();
  ASSERT_TRUE(cache) << cache.error().message;
  ASSERT_TRUE(data) << data.error().message;
  EXPECT_EQ(*cache, fs::path(L"C:\\Users\\someone\\AppData\\Local\\rung\\cache"));
  EXPECT_EQ(*data, fs::path(L"C:\\Users\\someone\\AppData\\Local\\rung\\data"));
}

// A LOCALAPPDATA beyond ASCII is the folder it names, and its UTF-8 text says it
// (wine sets its own LOCALAPPDATA over the Unix one, so the CLI's test cannot).
TEST(WindowsUserDirs, ALocalAppDataBeyondAsciiIsTheFolderNamed) {
  LocalAppData set(std::wstring(L"C:\\Users\\Zo\u00eb\\AppData-\u4e2d\\Local"));
  auto cache = user_cache_dir();
  ASSERT_TRUE(cache) << cache.error().message;
  EXPECT_EQ(*cache, fs::path(L"C:\\Users\\Zo\u00eb\\AppData-\u4e2d\\Local\\rung\\cache"));
  EXPECT_EQ(cache->string(), "C:\\Users\\Zo\xc3\xab\\AppData-\xe4\xb8\xad\\Local\\rung\\cache");
}

// Without the variable, the system's own folder: an absolute directory that exists.
TEST(WindowsUserDirs, WithoutTheVariableTheKnownFolderIsUsed) {
  LocalAppData unset(std::nullopt);
  auto cache = user_cache_dir();
  ASSERT_TRUE(cache) << cache.error().message;
  EXPECT_TRUE(cache->is_absolute()) << cache->string();
  EXPECT_EQ(cache->filename(), "cache");
  EXPECT_EQ(cache->parent_path().filename(), "rung");
  EXPECT_TRUE(fs::is_directory(cache->parent_path().parent_path())) << cache->string();
}

TEST(WindowsUserDirs, ARelativeLocalAppDataIsNotTaken) {
  std::optional<fs::path> known;
  {
    LocalAppData unset(std::nullopt);
    auto cache = user_cache_dir();
    ASSERT_TRUE(cache);
    known = *cache;
  }
  LocalAppData relative(std::wstring(L"relative\\dir"));
  auto cache = user_cache_dir();
  ASSERT_TRUE(cache) << cache.error().message;
  EXPECT_EQ(*cache, *known) << "a relative LOCALAPPDATA would put the cache wherever rung is started";
}

}  // namespace
}  // namespace rung
