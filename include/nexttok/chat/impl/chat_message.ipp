// The definitions of chat_message.hpp.
#pragma once

#include <nexttok/chat/chat_message.hpp>

#include <nlohmann/json.hpp>

#include <span>

namespace nexttok {

NEXTTOK_DECL nlohmann::ordered_json to_json(std::span<const chat_message> messages) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const chat_message& m : messages) out.push_back({{"role", m.role}, {"content", m.content}});
    return out;
}

}  // namespace nexttok
