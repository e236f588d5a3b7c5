// The error a chat template raises: a syntax error, a filter or construct the renderer does not
// implement, an undefined value used where Jinja2 would fail, or the template's own
// raise_exception(msg). The message names the template and the line and column of the construct:
//   chat template 'Qwen2.5-7B-Instruct': line 3, column 9: no filter named 'wordwrap'
#pragma once

#include <nexttok/error.hpp>

#include <string>

namespace nexttok {

class chat_template_error : public error {
public:
    using error::error;
};

namespace detail {

// Where a construct starts in the template source, both 1-based (as Jinja2 counts lines).
struct source_location {
    int line = 1;
    int column = 1;
};

inline std::string chat_template_where(const std::string& template_name, source_location at) {
    return "chat template '" + template_name + "': line " + std::to_string(at.line) + ", column " +
           std::to_string(at.column) + ": ";
}

}  // namespace detail
}  // namespace nexttok
