// Windows speaks UTF-16; rung speaks UTF-8. The conversions and the system's
// own words for an error code.
#pragma once

#include <string>

namespace rung {

// "The specified module could not be found. (error 126)"
std::string windows_error_text(unsigned long code);
std::string utf8_of(const std::wstring& wide);
std::wstring wide_of(const std::string& utf8);

}  // namespace rung
