// Path trust on Windows (os/windows/path_trust.cpp), under wine: each component's
// owner and access list, from the root down, on real files whose access lists are
// set with the system's own calls (SetEntriesInAclW, SetNamedSecurityInfoW). Wine
// keeps of an access list only what a Unix mode can say, so the rule itself is
// also held to descriptors written in SDDL (os/windows/path_trust_rules.h).
#include <windows.h>
#include <aclapi.h>
#include <sddl.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "os/path_trust.h"
#include "os/windows/path_trust_rules.h"
#include "os/windows/security.h"
#include "temp_dir_test.h"

namespace rung {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// Grants `rights` to Everyone on `path`, beside what its list already holds.
void grant_everyone(const fs::path& path, DWORD rights, DWORD inheritance = NO_INHERITANCE) {
  PACL old_list = nullptr;
  PSECURITY_DESCRIPTOR descriptor = nullptr;
  ASSERT_EQ(GetNamedSecurityInfoW(path.c_str(), SE_FILE_OBJECT, DACL_SECURITY_INFORMATION, nullptr, nullptr, &old_list, nullptr, &descriptor),
            static_cast<DWORD>(ERROR_SUCCESS));
  EXPLICIT_ACCESSW grant{};
  grant.grfAccessPermissions = rights;
  grant.grfAccessMode = GRANT_ACCESS;
  grant.grfInheritance = inheritance;
  grant.Trustee.TrusteeForm = TRUSTEE_IS_NAME;
  grant.Trustee.TrusteeType = TRUSTEE_IS_WELL_KNOWN_GROUP;
  wchar_t everyone[] = L"Everyone";
  grant.Trustee.ptstrName = everyone;
  PACL new_list = nullptr;
  ASSERT_EQ(SetEntriesInAclW(1, &grant, old_list, &new_list), static_cast<DWORD>(ERROR_SUCCESS));
  ASSERT_EQ(SetNamedSecurityInfoW(const_cast<wchar_t*>(path.c_str()), SE_FILE_OBJECT, DACL_SECURITY_INFORMATION, nullptr, nullptr, new_list, nullptr),
            static_cast<DWORD>(ERROR_SUCCESS));
  LocalFree(new_list);
  LocalFree(descriptor);
}

class WindowsPathTrustTest : public test::TempDirTest {
 protected:
  WindowsPathTrustTest() : TempDirTest("rung-trust") {}
  fs::path file(const fs::path& path) {
    fs::create_directories(path.parent_path());
    std::ofstream(path) << "x";
    return path;
  }
};

TEST_F(WindowsPathTrustTest, AFileOfThisUsersInItsOwnDirectoriesIsTrusted) {
  const fs::path lib = file(dir_ / "a" / "b" / "onnxruntime.dll");
  auto s = check_path_trusted(lib);
  EXPECT_TRUE(s) << s.error().message;
}

TEST_F(WindowsPathTrustTest, AFileOthersMayWriteIsRefusedNamingThemAndTheRight) {
  const fs::path lib = file(dir_ / "onnxruntime.dll");
  grant_everyone(lib, FILE_GENERIC_WRITE);
  auto s = check_path_trusted(lib);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, ErrorCode::kPermission);
  EXPECT_THAT(s.error().message, HasSubstr(lib.string() + " is writable by other users"));
  EXPECT_THAT(s.error().message, HasSubstr("S-1-1-0"));  // Everyone
  EXPECT_THAT(s.error().message, HasSubstr("change its data"));
}

TEST_F(WindowsPathTrustTest, EveryDirectoryUpThePathIsChecked) {
  // Not only the parent: a grandparent others can write lets them swap the parent.
  const fs::path lib = file(dir_ / "a" / "b" / "onnxruntime.dll");
  grant_everyone(dir_ / "a", FILE_GENERIC_WRITE | DELETE);
  auto s = check_path_trusted(lib);
  ASSERT_FALSE(s);
  EXPECT_THAT(s.error().message, HasSubstr((dir_ / "a").string() + " is writable by other users"));
  EXPECT_THAT(s.error().message, HasSubstr("Everyone"));
}

// The rule on one component, from an SDDL descriptor: O: its owner, D: its access list.
class WindowsTrustRuleTest : public ::testing::Test {
 protected:
  static std::string me() {
    std::vector<unsigned char> sid = this_user_sid();
    wchar_t* text = nullptr;
    EXPECT_TRUE(ConvertSidToStringSidW(sid.data(), &text));
    std::string out;
    for (const wchar_t* c = text; *c; ++c) out += static_cast<char>(*c);
    LocalFree(text);
    return out;
  }
  static Status judge(const std::string& sddl, bool directory) {
    std::wstring wide(sddl.begin(), sddl.end());
    PSECURITY_DESCRIPTOR descriptor = nullptr;
    EXPECT_TRUE(ConvertStringSecurityDescriptorToSecurityDescriptorW(wide.c_str(), SDDL_REVISION_1, &descriptor, nullptr)) << sddl;
    Status s = judge_security("C:\\x", descriptor, directory);
    LocalFree(descriptor);
    return s;
  }
};

TEST_F(WindowsTrustRuleTest, OwnedByThisUserOrTheSystemWithNoOneElseWritingIsTrusted) {
  // This user and SYSTEM in full, Administrators in full, Users reading and running.
  const std::string list = "D:(A;;FA;;;" + me() + ")(A;;FA;;;SY)(A;;FA;;;BA)(A;;FRFX;;;BU)";
  EXPECT_TRUE(judge("O:" + me() + list, false));
  EXPECT_TRUE(judge("O:SY" + list, true));
  EXPECT_TRUE(judge("O:BA" + list, true));
  EXPECT_TRUE(judge("O:S-1-5-80-956008885-3418522649-1831038044-1850903045-2717205279" + list, false));  // TrustedInstaller
}

TEST_F(WindowsTrustRuleTest, AnotherOwnerIsRefusedByName) {
  auto s = judge("O:BUD:(A;;FA;;;SY)", false);
  ASSERT_FALSE(s);
  EXPECT_THAT(s.error().message, HasSubstr("C:\\x is owned by"));
  EXPECT_THAT(s.error().message, HasSubstr("S-1-5-32-545"));  // BUILTIN\Users
  EXPECT_THAT(s.error().message, HasSubstr("not by you, SYSTEM, Administrators or TrustedInstaller"));
}

TEST_F(WindowsTrustRuleTest, NoAccessListLetsAnyoneChangeIt) {
  // A present but null list (SDDL's NO_ACCESS_CONTROL, which wine's parser does not read), owned by SYSTEM.
  SECURITY_DESCRIPTOR descriptor;
  ASSERT_TRUE(InitializeSecurityDescriptor(&descriptor, SECURITY_DESCRIPTOR_REVISION));
  unsigned char system[SECURITY_MAX_SID_SIZE];
  DWORD size = sizeof system;
  ASSERT_TRUE(CreateWellKnownSid(WinLocalSystemSid, nullptr, system, &size));
  ASSERT_TRUE(SetSecurityDescriptorOwner(&descriptor, system, FALSE));
  ASSERT_TRUE(SetSecurityDescriptorDacl(&descriptor, TRUE, nullptr, FALSE));
  EXPECT_THAT(judge_security("C:\\x", &descriptor, false).error().message, HasSubstr("has no access list: anyone may change it"));
}

TEST_F(WindowsTrustRuleTest, EachRightThatChangesAFileIsRefusedAlone) {
  const std::pair<const char*, const char*> cases[] = {
      {"FW", "change its data"},  {"0x2", "change its data"}, {"0x4", "change its data"}, {"SD", "delete or rename it"},
      {"WD", "change its access list"}, {"WO", "take ownership"}, {"GA", "write"}, {"GW", "write"},
  };
  for (const auto& [right, words] : cases) {
    auto s = judge("O:SYD:(A;;FA;;;SY)(A;;" + std::string(right) + ";;;WD)", false);
    ASSERT_FALSE(s) << right;
    EXPECT_THAT(s.error().message, HasSubstr("is writable by other users")) << right;
    EXPECT_THAT(s.error().message, HasSubstr(words)) << right;
    EXPECT_THAT(s.error().message, HasSubstr("S-1-1-0")) << right;  // Everyone
  }
  // Reading, running and its attributes change nothing it holds.
  EXPECT_TRUE(judge("O:SYD:(A;;FRFX;;;WD)(A;;0x100;;;WD)", false));
}

TEST_F(WindowsTrustRuleTest, ADirectoryWhereOthersMayOnlyAddNamesIsPassedThrough) {
  // As C:\ lets Authenticated Users make folders: a new name is not on the path.
  EXPECT_TRUE(judge("O:SYD:(A;;FA;;;SY)(A;;0x6;;;AU)(A;;FRFX;;;BU)", true));
  // The same rights on a file change its data.
  EXPECT_FALSE(judge("O:SYD:(A;;FA;;;SY)(A;;0x6;;;AU)", false));
  // Deleting what it holds (FILE_DELETE_CHILD) lets them replace a name on the path.
  EXPECT_THAT(judge("O:SYD:(A;;FA;;;SY)(A;;0x46;;;AU)", true).error().message, HasSubstr("delete what it holds"));
}

TEST_F(WindowsTrustRuleTest, RightsOnlyForWhatIsMadeBelowAreJudgedThere) {
  // Inherit-only: C:\'s "Modify" for Authenticated Users on what they create below.
  EXPECT_TRUE(judge("O:SYD:(A;;FA;;;SY)(A;OICIIO;SDGXGWGR;;;AU)", true));
  // CREATOR OWNER and OWNER RIGHTS stand for the owner, already judged.
  EXPECT_TRUE(judge("O:SYD:(A;;FA;;;SY)(A;;FA;;;CO)(A;;FA;;;OW)", false));
  // A denial takes nothing away from what is checked.
  EXPECT_FALSE(judge("O:SYD:(D;;FA;;;WD)(A;;FW;;;WD)", false));
}

TEST_F(WindowsPathTrustTest, MissingRelativeAndUnreadablePathsAreSaidAsSuch) {
  EXPECT_EQ(check_path_trusted("onnxruntime.dll").error().code, ErrorCode::kInvalidArgument);
  auto missing = check_path_trusted(dir_ / "absent" / "onnxruntime.dll");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
  EXPECT_THAT(missing.error().message, HasSubstr((dir_ / "absent").string()));
}

}  // namespace
}  // namespace rung
