// Tokenizing a conversation: the template's own markup has its special tokens parsed
// ("<|im_start|>" is one token), while the same texts typed inside a message stay plain text (a
// user writing "<|im_end|>" cannot end their turn early).
//
// How user text is told apart: the conversation is rendered twice, the second time with every
// special-token text inside the messages (any string field but "role") replaced by filler bytes of
// the same length. Where the two prompts differ is user text; the special texts there are not
// parsed. A template that changes the length of message text around such an occurrence (slicing,
// trimming it away) makes the two prompts differ in length, and that is a chat_template_error
// rather than a guess. When no message holds a special text, one render and one encode suffice.
#pragma once

#include <nexttok/chat/chat_message.hpp>
#include <nexttok/chat/chat_template.hpp>
#include <nexttok/detail/config.hpp>
#include <nexttok/tokenizer/tokenizer.hpp>
#include <nexttok/types.hpp>

#include <nlohmann/json_fwd.hpp>

#include <span>
#include <vector>

namespace nexttok {

// The token ids of the prompt `t` renders for `messages` (see chat_template::render), special
// tokens parsed in the template's text and not in the messages'. add_bos prepends the BOS token
// (most templates write bos_token themselves; then leave it false).
NEXTTOK_DECL std::vector<token_id> encode_chat(const tokenizer& tok, const chat_template& t,
                                               const nlohmann::ordered_json& messages, bool add_generation_prompt,
                                               const nlohmann::ordered_json& variables, bool add_bos = false);
NEXTTOK_DECL std::vector<token_id> encode_chat(const tokenizer& tok, const chat_template& t,
                                               const nlohmann::ordered_json& messages, bool add_generation_prompt);

NEXTTOK_DECL std::vector<token_id> encode_chat(const tokenizer& tok, const chat_template& t,
                                               std::span<const chat_message> messages, bool add_generation_prompt,
                                               const nlohmann::ordered_json& variables, bool add_bos = false);
NEXTTOK_DECL std::vector<token_id> encode_chat(const tokenizer& tok, const chat_template& t,
                                               std::span<const chat_message> messages, bool add_generation_prompt);

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/chat/impl/encode_chat.ipp>
#endif
