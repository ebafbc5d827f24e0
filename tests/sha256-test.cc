// The digest on Linux (OpenSSL), held to the cases every system's is (tests/sha256_cases.h).
#include <algorithm>

#include "sha256_cases.h"
