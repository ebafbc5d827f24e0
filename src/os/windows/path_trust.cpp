// Windows: each component's owner and access list, read from a handle opened on
// the component itself (a reparse point is judged where it lies, then followed).
// The owner must be this user, SYSTEM, Administrators or TrustedInstaller (the
// system's own files belong to the last). No one else may be granted a right that
// changes what the path names: writing a file, deleting or renaming a component,
// deleting what a directory holds, or changing an owner or access list. Adding new
// names to a directory is allowed, as a sticky directory allows it on Linux
// (C:\ lets any user make a folder): a name added there is not on the path, and
// what lies below is checked in turn.
#include <windows.h>
#include <aclapi.h>
#include <sddl.h>

#include <fmt/format.h>

#include <deque>
#include <string>
#include <vector>

#include "os/path_trust.h"
#include "os/windows/path_trust_rules.h"
#include "os/windows/handle.h"
#include "os/windows/security.h"
#include "os/windows/text.h"

namespace rung {
namespace fs = std::filesystem;
namespace {

constexpr int kMaxLinks = 40;  // as Linux's, for the same loops

// NT SERVICE\TrustedInstaller, which owns the system's own files.
constexpr wchar_t kTrustedInstaller[] = L"S-1-5-80-956008885-3418522649-1831038044-1850903045-2717205279";

struct Sid {
  std::vector<unsigned char> bytes;
  PSID get() { return bytes.data(); }
};

Sid well_known(WELL_KNOWN_SID_TYPE type) {
  Sid sid{std::vector<unsigned char>(SECURITY_MAX_SID_SIZE)};
  DWORD size = SECURITY_MAX_SID_SIZE;
  if (!CreateWellKnownSid(type, nullptr, sid.get(), &size)) sid.bytes.clear();
  return sid;
}

// Who may own, and change, a component: this user and the system's own accounts.
class TrustedAccounts {
 public:
  TrustedAccounts() {
    sids_.push_back(Sid{this_user_sid()});
    sids_.push_back(well_known(WinLocalSystemSid));
    sids_.push_back(well_known(WinBuiltinAdministratorsSid));
    PSID installer = nullptr;
    if (ConvertStringSidToSidW(kTrustedInstaller, &installer)) {
      const auto* first = static_cast<unsigned char*>(installer);
      sids_.push_back(Sid{std::vector<unsigned char>(first, first + GetLengthSid(installer))});
      LocalFree(installer);
    }
    // The owner's stand-ins in an access list: they grant what the owner, already judged, holds.
    stand_ins_.push_back(well_known(WinCreatorOwnerSid));
    stand_ins_.push_back(well_known(WinCreatorOwnerRightsSid));
  }
  bool owner_may_be(PSID sid) { return in(sids_, sid); }
  bool may_change(PSID sid) { return in(sids_, sid) || in(stand_ins_, sid); }

 private:
  static bool in(std::vector<Sid>& list, PSID sid) {
    for (auto& s : list) {
      if (!s.bytes.empty() && EqualSid(s.get(), sid)) return true;
    }
    return false;
  }
  std::vector<Sid> sids_;
  std::vector<Sid> stand_ins_;
};

// "BUILTIN\Users (S-1-5-32-545)", or the SID alone when it names no account here.
std::string account_name(PSID sid) {
  std::string text = "an unknown account";
  wchar_t* string_sid = nullptr;
  if (ConvertSidToStringSidW(sid, &string_sid)) {
    text = utf8_of(string_sid);
    LocalFree(string_sid);
  }
  wchar_t name[256];
  wchar_t domain[256];
  DWORD name_size = 256;
  DWORD domain_size = 256;
  SID_NAME_USE use{};
  if (LookupAccountSidW(nullptr, sid, name, &name_size, domain, &domain_size, &use)) {
    const std::string account = domain_size > 0 ? utf8_of(domain) + "\\" + utf8_of(name) : utf8_of(name);
    return fmt::format("{} ({})", account, text);
  }
  return text;
}

// The rights, among those granted, that change what a path names; in words.
std::string changing_rights(ACCESS_MASK mask, bool directory) {
  std::vector<std::string> rights;
  if ((mask & (GENERIC_ALL | GENERIC_WRITE)) != 0) rights.push_back("write");
  if (!directory && (mask & (FILE_WRITE_DATA | FILE_APPEND_DATA)) != 0) rights.push_back("change its data");
  if ((mask & DELETE) != 0) rights.push_back("delete or rename it");
  if (directory && (mask & FILE_DELETE_CHILD) != 0) rights.push_back("delete what it holds");
  if ((mask & WRITE_DAC) != 0) rights.push_back("change its access list");
  if ((mask & WRITE_OWNER) != 0) rights.push_back("take ownership");
  std::string out;
  for (const auto& r : rights) out += (out.empty() ? "" : ", ") + r;
  return out;
}

}  // namespace

Status judge_security(const std::string& shown, void* descriptor, bool directory) {
  static TrustedAccounts trusted;
  PSID owner = nullptr;
  PACL dacl = nullptr;
  BOOL defaulted = FALSE, present = FALSE;
  if (!GetSecurityDescriptorOwner(descriptor, &owner, &defaulted) || !GetSecurityDescriptorDacl(descriptor, &present, &dacl, &defaulted)) {
    return Error{ErrorCode::kIo, fmt::format("{}: its security could not be read: {}", shown, windows_error_text(GetLastError()))};
  }
  if (owner == nullptr || !trusted.owner_may_be(owner)) {
    return Error{ErrorCode::kPermission, fmt::format("{} is owned by {}, not by you, SYSTEM, Administrators or TrustedInstaller", shown,
                                                     owner == nullptr ? std::string("no one") : account_name(owner))};
  }
  if (!present || dacl == nullptr) return Error{ErrorCode::kPermission, fmt::format("{} has no access list: anyone may change it", shown)};
  for (DWORD i = 0; i < dacl->AceCount; ++i) {
    void* raw = nullptr;
    if (!GetAce(dacl, i, &raw)) continue;
    const auto* header = static_cast<ACE_HEADER*>(raw);
    if (header->AceType != ACCESS_ALLOWED_ACE_TYPE) continue;  // a denial takes nothing away from what is checked here
    if ((header->AceFlags & INHERIT_ONLY_ACE) != 0) continue;  // for what is made below, judged there
    const auto* ace = static_cast<ACCESS_ALLOWED_ACE*>(raw);
    PSID grantee = const_cast<DWORD*>(&ace->SidStart);
    if (trusted.may_change(grantee)) continue;
    const std::string rights = changing_rights(ace->Mask, directory);
    if (!rights.empty()) {
      return Error{ErrorCode::kPermission, fmt::format("{} is writable by other users ({} may {})", shown, account_name(grantee), rights)};
    }
  }
  return {};
}

namespace {

struct Component {
  bool directory = false;
  bool reparse_point = false;
};

// One component, judged on a handle to itself.
Result<Component> check_component(const fs::path& path) {
  const std::string shown = path.string();
  HANDLE h = CreateFileW(path.c_str(), READ_CONTROL | FILE_READ_ATTRIBUTES, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
                         nullptr, OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT, nullptr);
  if (h == INVALID_HANDLE_VALUE) {
    const DWORD code = GetLastError();
    const bool missing = code == ERROR_FILE_NOT_FOUND || code == ERROR_PATH_NOT_FOUND;
    return Error{missing ? ErrorCode::kNotFound : ErrorCode::kIo, fmt::format("{}: {}", shown, windows_error_text(code))};
  }
  OwnedHandle file(h);
  BY_HANDLE_FILE_INFORMATION info{};
  if (!GetFileInformationByHandle(h, &info)) return Error{ErrorCode::kIo, fmt::format("{}: {}", shown, windows_error_text(GetLastError()))};
  Component c;
  c.directory = (info.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) != 0;
  c.reparse_point = (info.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT) != 0;

  PSECURITY_DESCRIPTOR descriptor = nullptr;
  const DWORD got = GetSecurityInfo(h, SE_FILE_OBJECT, OWNER_SECURITY_INFORMATION | DACL_SECURITY_INFORMATION, nullptr, nullptr, nullptr,
                                    nullptr, &descriptor);
  if (got != ERROR_SUCCESS) return Error{ErrorCode::kIo, fmt::format("{}: its security could not be read: {}", shown, windows_error_text(got))};
  const Status judged = judge_security(shown, descriptor, c.directory);
  LocalFree(descriptor);
  if (!judged) return judged.error();
  return c;
}

}  // namespace

Status check_path_trusted(const fs::path& path) {
  if (!path.is_absolute()) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("{}: not an absolute path", path.string())};
  }
  fs::path current = path.root_path();  // "C:\" or "\\server\share\"
  RUNG_RETURN_IF_ERROR(check_component(current));

  std::deque<fs::path> todo;
  auto push_front = [&todo](const fs::path& p) {
    const fs::path relative = p.relative_path();
    std::deque<fs::path> parts(relative.begin(), relative.end());
    todo.insert(todo.begin(), parts.begin(), parts.end());
  };
  push_front(path);
  int links = 0;
  while (!todo.empty()) {
    const fs::path name = todo.front();
    todo.pop_front();
    if (name.empty() || name == ".") continue;
    if (name == "..") {  // the directory above was passed through, and checked, on the way down
      current = current.parent_path();
      continue;
    }
    const fs::path next = current / name;
    auto component = check_component(next);
    if (!component) return component.error();
    if (!component->reparse_point) {
      current = next;
      continue;
    }
    if (++links > kMaxLinks) return Error{ErrorCode::kIo, fmt::format("{}: too many links", path.string())};
    std::error_code ec;
    const fs::path target = fs::read_symlink(next, ec);
    if (ec) return Error{ErrorCode::kIo, fmt::format("{}: a link whose target cannot be read: {}", next.string(), ec.message())};
    if (target.is_absolute()) {
      current = target.root_path();
      RUNG_RETURN_IF_ERROR(check_component(current));
    }
    push_front(target);
  }
  return {};
}

}  // namespace rung
