// Windows speaks UTF-16; rung speaks UTF-8. The conversions and the system's
// own words for an error code.
#pragma once

#include <string>
#include <vector>

namespace rung {

// "The specified module could not be found. (error 126)"
std::string windows_error_text(unsigned long code);
std::string utf8_of(const std::wstring& wide);
std::wstring wide_of(const std::string& utf8);

// wmain's arguments as UTF-8, with the argv a narrow entry point takes: rung's
// programs read the UTF-16 command line, never the ANSI code page's copy.
class Utf8Arguments {
 public:
  Utf8Arguments(int argc, wchar_t** argv);
  int argc() const { return static_cast<int>(text_.size()); }
  char** argv() { return pointers_.data(); }

 private:
  std::vector<std::string> text_;
  std::vector<char*> pointers_;
};

}  // namespace rung
