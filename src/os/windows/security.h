// Who owns what, on Windows: this process's user, and a file's owner.
#pragma once

#include <windows.h>

#include <vector>

namespace rung {

// This process's user's SID, as bytes; empty when the token cannot be read.
std::vector<unsigned char> this_user_sid();

// Whether the object behind `handle` (a file, a directory) is owned by this process's user.
bool owned_by_this_user(HANDLE handle);

}  // namespace rung
