// Text placed in an HTML page (bench's report, conform's grid): escaped, so a
// model name or an error message never becomes markup.
#pragma once

#include <string>

namespace rung {

std::string html_escape(const std::string& text);  // & < > " ' as entities

}  // namespace rung
