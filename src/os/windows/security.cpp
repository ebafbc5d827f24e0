#include "os/windows/security.h"

#include <aclapi.h>

#include "os/windows/handle.h"

namespace rung {

std::vector<unsigned char> this_user_sid() {
  std::vector<unsigned char> sid;
  HANDLE token = nullptr;
  if (!OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &token)) return sid;
  OwnedHandle held(token);
  alignas(TOKEN_USER) unsigned char buffer[256];
  DWORD size = 0;
  if (GetTokenInformation(token, TokenUser, buffer, sizeof buffer, &size)) {
    PSID user = reinterpret_cast<TOKEN_USER*>(buffer)->User.Sid;
    const auto* first = static_cast<unsigned char*>(user);
    sid.assign(first, first + GetLengthSid(user));
  }
  return sid;
}

bool owned_by_this_user(HANDLE handle) {
  PSID owner = nullptr;
  PSECURITY_DESCRIPTOR descriptor = nullptr;
  if (GetSecurityInfo(handle, SE_FILE_OBJECT, OWNER_SECURITY_INFORMATION, &owner, nullptr, nullptr, nullptr, &descriptor) != ERROR_SUCCESS) {
    return false;
  }
  std::vector<unsigned char> me = this_user_sid();
  const bool same = !me.empty() && EqualSid(owner, me.data()) != 0;
  LocalFree(descriptor);
  return same;
}

}  // namespace rung
