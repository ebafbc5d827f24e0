// The rule path trust applies to each component on Windows (os/windows/path_trust.cpp),
// on a security descriptor alone, so that it can be held to access lists a file
// system under test cannot store (wine keeps only what Unix modes say).
#pragma once

#include <string>

#include "rung/result.h"

namespace rung {

// Ok, or kPermission naming `shown` and why: an owner other than this user,
// SYSTEM, Administrators or TrustedInstaller; no access list; or a right granted
// to anyone else that changes what the path names (for a directory, adding
// names alone does not). `descriptor` is a SECURITY_DESCRIPTOR.
Status judge_security(const std::string& shown, void* descriptor, bool directory);

}  // namespace rung
