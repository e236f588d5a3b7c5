// One turn of a conversation, as chat templates read it: messages[i].role and messages[i].content.
// Messages with more fields (tool_calls, tool_call_id, structured content) go to
// chat_template::render as JSON instead.
#pragma once

#include <nexttok/detail/config.hpp>

#include <nlohmann/json_fwd.hpp>

#include <span>
#include <string>

namespace nexttok {

struct chat_message {
    std::string role;     // "system", "user", "assistant", "tool", ...
    std::string content;  // the text of the turn, plain (special-token texts in it are not special)
};

// The JSON array a template iterates: [{"role": ..., "content": ...}, ...], keys in that order.
NEXTTOK_DECL nlohmann::ordered_json to_json(std::span<const chat_message> messages);

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/chat/impl/chat_message.ipp>
#endif
