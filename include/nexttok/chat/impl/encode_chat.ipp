// The definitions of encode_chat.hpp.
#pragma once

#include <nexttok/chat/encode_chat.hpp>
#include <nexttok/chat/chat_template.hpp>
#include <nexttok/chat/chat_template_error.hpp>
#include <nexttok/tokenizer/tokenizer.hpp>
#include <nexttok/tokenizer/vocabulary.hpp>
#include <nexttok/types.hpp>

#include <nlohmann/json.hpp>

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace nexttok {
namespace detail {

// The special texts the tokenizer parses only on request (control and unknown tokens), longest
// first; user-defined tokens are matched in plain text too, so they are not "special" here.
inline std::vector<token_id> parsed_special_texts(const vocabulary& vocab) {
    std::vector<token_id> ids;
    for (const token_id id : vocab.special_texts())
        if (vocab[id].type != token_type::user_defined && !vocab[id].text.empty()) ids.push_back(id);
    return ids;
}

// Replaces the special texts in every string of `j` except "role" values; true if any was found.
inline bool mask_special_texts(nlohmann::ordered_json& j, const vocabulary& vocab,
                               const std::vector<token_id>& specials) {
    bool found = false;
    if (j.is_string()) {
        std::string& s = j.get_ref<std::string&>();
        for (const token_id id : specials) {
            const std::string& text = vocab[id].text;
            for (std::size_t p = s.find(text); p != std::string::npos; p = s.find(text, p + text.size())) {
                s.replace(p, text.size(), std::string(text.size(), '\x01'));
                found = true;
            }
        }
    } else if (j.is_array()) {
        for (auto& item : j) found = mask_special_texts(item, vocab, specials) || found;
    } else if (j.is_object()) {
        for (auto it = j.begin(); it != j.end(); ++it)
            if (it.key() != "role") found = mask_special_texts(it.value(), vocab, specials) || found;
    }
    return found;
}

// Encodes `text` with its special texts parsed, except occurrences that overlap a byte where
// `user` differs from `text` (user text). Same fragments, hence same ids, as tokenizer::encode
// with parse_special when `user` equals `text`.
inline std::vector<token_id> encode_marked(const tokenizer& tok, std::string_view text, std::string_view user,
                                           bool add_bos) {
    const vocabulary& vocab = tok.vocab();
    struct fragment {
        std::size_t begin, length;
        token_id id;
    };
    std::vector<fragment> fragments{{0, text.size(), no_token}}, next;
    const auto is_user = [&](std::size_t begin, std::size_t length) {
        return text.substr(begin, length) != user.substr(begin, length);
    };
    for (const token_id special : vocab.special_texts()) {
        const std::string& s = vocab[special].text;
        if (s.empty()) continue;
        next.clear();
        for (const fragment& f : fragments) {
            if (f.id != no_token) {
                next.push_back(f);
                continue;
            }
            std::size_t pos = f.begin;  // the start of the raw text not yet emitted
            const std::size_t end = f.begin + f.length;
            const std::string_view window = text.substr(0, end);  // finds stay inside the fragment
            for (std::size_t hit = window.find(s, f.begin); hit != std::string_view::npos;
                 hit = window.find(s, hit + 1)) {
                if (hit < pos) continue;
                if (vocab[special].type != token_type::user_defined && is_user(hit, s.size())) continue;
                if (hit > pos) next.push_back({pos, hit - pos, no_token});
                next.push_back({hit, s.size(), special});
                pos = hit + s.size();
            }
            if (pos < end) next.push_back({pos, end - pos, no_token});
        }
        fragments.swap(next);
    }
    std::vector<token_id> ids;
    if (add_bos) ids = tok.encode("", true);
    for (const fragment& f : fragments) {
        if (f.id != no_token) {
            ids.push_back(f.id);
            continue;
        }
        const std::vector<token_id> piece = tok.encode(text.substr(f.begin, f.length), false, /*parse_special=*/false);
        ids.insert(ids.end(), piece.begin(), piece.end());
    }
    return ids;
}

}  // namespace detail

NEXTTOK_DECL std::vector<token_id> encode_chat(const tokenizer& tok, const chat_template& t,
                                               const nlohmann::ordered_json& messages, bool add_generation_prompt,
                                               const nlohmann::ordered_json& variables, bool add_bos) {
    const std::string prompt = t.render(messages, add_generation_prompt, variables);
    const std::vector<token_id> specials = detail::parsed_special_texts(tok.vocab());
    nlohmann::ordered_json masked = messages;
    if (!detail::mask_special_texts(masked, tok.vocab(), specials))
        return detail::encode_marked(tok, prompt, prompt, add_bos);
    const std::string masked_prompt = t.render(masked, add_generation_prompt, variables);
    if (masked_prompt.size() != prompt.size())
        throw chat_template_error("chat template '" + t.name() +
                                  "': a message contains special-token text and the template changes the length of "
                                  "message text, so user text cannot be told from template text");
    return detail::encode_marked(tok, prompt, masked_prompt, add_bos);
}

NEXTTOK_DECL std::vector<token_id> encode_chat(const tokenizer& tok, const chat_template& t,
                                               const nlohmann::ordered_json& messages, bool add_generation_prompt) {
    return encode_chat(tok, t, messages, add_generation_prompt, nlohmann::ordered_json::object(), false);
}

NEXTTOK_DECL std::vector<token_id> encode_chat(const tokenizer& tok, const chat_template& t,
                                               std::span<const chat_message> messages, bool add_generation_prompt,
                                               const nlohmann::ordered_json& variables, bool add_bos) {
    return encode_chat(tok, t, to_json(messages), add_generation_prompt, variables, add_bos);
}

NEXTTOK_DECL std::vector<token_id> encode_chat(const tokenizer& tok, const chat_template& t,
                                               std::span<const chat_message> messages, bool add_generation_prompt) {
    return encode_chat(tok, t, to_json(messages), add_generation_prompt, nlohmann::ordered_json::object(), false);
}

}  // namespace nexttok
