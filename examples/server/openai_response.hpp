// OpenAI's answer shapes, built from plain values (no model, no HTTP), so that they are unit-tested:
//   completions  {"id": "cmpl-..", "object": "text_completion", "created", "model",
//                 "choices": [{"index", "text", "logprobs", "finish_reason"}], "usage"}
//   chat         {"id": "chatcmpl-..", "object": "chat.completion", ...,
//                 "choices": [{"index", "message": {"role": "assistant", "content"}, "logprobs", "finish_reason"}], "usage"}
//   chunks       "text_completion" / "chat.completion.chunk" with "text" / "delta"
//   errors       {"error": {"message", "type", "param", "code"}}
// Text may hold bytes that are not UTF-8 (a token piece that is half a character): dump() replaces
// them with U+FFFD instead of throwing.
#pragma once

#include "openai_request.hpp"

#include <nexttok/stopping/finish_reason.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace server {

// One generated token for the logprobs fields: its text, log-probability and the alternatives.
struct token_logprob_entry {
    std::string piece;
    float logprob = 0.0f;
    std::vector<std::pair<std::string, float>> top;  // most likely first
    std::size_t text_offset = 0;                     // where the token's text starts in the choice's text
};

struct choice_output {
    std::int64_t index = 0;
    std::string text;
    std::string finish_reason;                  // "stop", "length" or "error"
    std::string error;                          // with "error": the message
    std::vector<token_logprob_entry> logprobs;  // with logprobs requested
    std::int64_t n_tokens = 0;                  // generated tokens (usage)
};

struct usage_counts {
    std::int64_t prompt_tokens = 0;
    std::int64_t completion_tokens = 0;
};

struct response_meta {
    endpoint kind = endpoint::completions;
    std::string id;            // "cmpl-..." / "chatcmpl-..."
    std::int64_t created = 0;  // Unix seconds
    std::string model;
    bool logprobs = false;
};

// OpenAI's finish reasons: "stop" when the model or a stop condition ended the text, "length" when
// a limit cut it (max_tokens, the context, a deadline) or the request was cancelled (a client gone,
// the server stopping): the text is then incomplete, as with a limit. "error" (not one of OpenAI's)
// when generation failed (the model computed non-finite logits): the answer also carries an OpenAI
// error object with the message, since its status line has already gone out.
inline std::string openai_finish_reason(nexttok::finish_reason r) {
    switch (r) {
        case nexttok::finish_reason::error:
            return "error";
        case nexttok::finish_reason::eos:
        case nexttok::finish_reason::stop_token:
        case nexttok::finish_reason::stop_string:
        case nexttok::finish_reason::callback:
        case nexttok::finish_reason::predicate:
            return "stop";
        default:
            return "length";
    }
}

inline std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

inline std::string sse(const json& j) { return "data: " + dump(j) + "\n\n"; }

inline json error_body(const std::string& message, const std::string& type, const std::string& param = {},
                       const std::string& code = {}) {
    return {{"error",
             {{"message", message},
              {"type", type},
              {"param", param.empty() ? json() : json(param)},
              {"code", code.empty() ? json() : json(code)}}}};
}

// The error of a choice whose generation failed (finish_reason "error"), as a stream event or the
// "error" member of a whole answer.
inline json generation_error_json(const std::string& message) { return error_body(message, "server_error"); }

inline json bytes_of(const std::string& s) {
    json b = json::array();
    for (unsigned char c : s) b.push_back(static_cast<int>(c));
    return b;
}

// The "logprobs" value of a choice (or of a chunk) for these tokens.
inline json logprobs_json(endpoint kind, const std::vector<token_logprob_entry>& tokens) {
    if (kind == endpoint::chat) {
        json content = json::array();
        for (const auto& t : tokens) {
            json top = json::array();
            for (const auto& [piece, lp] : t.top)
                top.push_back({{"token", piece}, {"logprob", lp}, {"bytes", bytes_of(piece)}});
            content.push_back({{"token", t.piece},
                               {"logprob", t.logprob},
                               {"bytes", bytes_of(t.piece)},
                               {"top_logprobs", std::move(top)}});
        }
        return {{"content", std::move(content)}};
    }
    json pieces = json::array(), lps = json::array(), tops = json::array(), offsets = json::array();
    for (const auto& t : tokens) {
        pieces.push_back(t.piece);
        lps.push_back(t.logprob);
        json top = json::object();
        for (const auto& [piece, lp] : t.top)
            if (!top.contains(piece)) top[piece] = lp;  // two ids with the same text: the likelier one
        tops.push_back(std::move(top));
        offsets.push_back(t.text_offset);
    }
    return {{"tokens", std::move(pieces)},
            {"token_logprobs", std::move(lps)},
            {"top_logprobs", std::move(tops)},
            {"text_offset", std::move(offsets)}};
}

inline json usage_json(const usage_counts& u) {
    return {{"prompt_tokens", u.prompt_tokens},
            {"completion_tokens", u.completion_tokens},
            {"total_tokens", u.prompt_tokens + u.completion_tokens}};
}

inline json response_head(const response_meta& m, bool chunk) {
    const char* object =
        m.kind == endpoint::chat ? (chunk ? "chat.completion.chunk" : "chat.completion") : "text_completion";
    return {{"id", m.id}, {"object", object}, {"created", m.created}, {"model", m.model}};
}

// The whole answer of a non-streamed request.
inline json completion_body(const response_meta& m, const std::vector<choice_output>& choices,
                            const usage_counts& usage) {
    json out = response_head(m, false);
    json list = json::array();
    for (const auto& c : choices) {
        json choice = {{"index", c.index}};
        if (m.kind == endpoint::chat)
            choice["message"] = {{"role", "assistant"}, {"content", c.text}};
        else
            choice["text"] = c.text;
        choice["logprobs"] = m.logprobs ? logprobs_json(m.kind, c.logprobs) : json();
        choice["finish_reason"] = c.finish_reason;
        list.push_back(std::move(choice));
        if (!c.error.empty() && !out.contains("error")) out["error"] = generation_error_json(c.error)["error"];
    }
    out["choices"] = std::move(list);
    out["usage"] = usage_json(usage);
    return out;
}

// A streamed chunk of choice `index`: new text (chat: delta.content; role_only: the first chunk of
// a chat choice, delta {"role": "assistant", "content": ""}), or its end (finish_reason, empty
// text / delta {}). with_usage_field: "usage": null, as OpenAI sends with include_usage.
struct chunk_part {
    std::int64_t index = 0;
    std::string text;
    bool role_only = false;
    std::optional<std::string> finish_reason;
    std::vector<token_logprob_entry> logprobs;
};

inline json chunk_json(const response_meta& m, const chunk_part& p, bool with_usage_field) {
    json out = response_head(m, true);
    json choice = {{"index", p.index}};
    if (m.kind == endpoint::chat) {
        if (p.role_only)
            choice["delta"] = {{"role", "assistant"}, {"content", ""}};
        else if (p.finish_reason && p.text.empty())
            choice["delta"] = json::object();
        else
            choice["delta"] = {{"content", p.text}};
    } else {
        choice["text"] = p.text;
    }
    choice["logprobs"] = m.logprobs && !p.logprobs.empty() ? logprobs_json(m.kind, p.logprobs) : json();
    choice["finish_reason"] = p.finish_reason ? json(*p.finish_reason) : json();
    out["choices"] = json::array({std::move(choice)});
    if (with_usage_field) out["usage"] = json();
    return out;
}

// The last chunk with stream_options.include_usage: no choices, the usage.
inline json usage_chunk_json(const response_meta& m, const usage_counts& usage) {
    json out = response_head(m, true);
    out["choices"] = json::array();
    out["usage"] = usage_json(usage);
    return out;
}

}  // namespace server
