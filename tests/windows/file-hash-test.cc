// File identities and the file-hash cache on Windows (os/windows/file_identity.cpp,
// os/file_hash.cpp over CNG's digest), under wine, held to the cases every
// system's are (tests/file_hash_cases.h).
#include "file_hash_cases.h"
