// An OpenAI request body (POST /v1/completions, /v1/chat/completions) as nexttok values: the prompt
// (text, token ids or chat messages) and the generation_options of every choice. Fields the server
// does not know are ignored (clients send extras); a known field of the wrong type or out of range
// is a request_error naming it, e.g. "'max_tokens' must be an integer >= 0".
//
// Field -> generation_options (the server's flags give every default; a field overrides it):
//   max_tokens (chat: max_completion_tokens first)  max_new_tokens
//   temperature, top_p, top_k, min_p               sampling.*
//   presence_penalty, frequency_penalty            sampling.* (OpenAI's penalties)
//   repeat_penalty                                 sampling.repeat_penalty (llama.cpp)
//   logit_bias {"ID": bias}                        sampling.logit_bias (appended to the flags')
//   stop (string or list)                          stop
//   seed                                           sampling.seed (choice i: seed + i)
//   ignore_eos                                     ignore_eos (llama.cpp)
//   logprobs / top_logprobs / n_probs              n_logprobs (alternatives per token)
// Pure: no model needed (the vocabulary size bounds token ids), so it is unit-tested on its own.
#pragma once

#include <nexttok/generation/generation_options.hpp>
#include <nexttok/io/json_limits.hpp>
#include <nexttok/types.hpp>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace server {

using json = nlohmann::ordered_json;

enum class endpoint { completions, chat };

// A bad request: the message for the client and the field it is about (empty: none).
class request_error : public std::runtime_error {
public:
    request_error(const std::string& message, std::string param = {})
            : std::runtime_error(message), param_(std::move(param)) {}
    const std::string& param() const noexcept { return param_; }

private:
    std::string param_;
};

struct openai_request {
    endpoint kind = endpoint::completions;
    std::string model;                          // echoed in the answer
    std::optional<std::string> prompt_text;     // completions: a string prompt
    std::vector<nexttok::token_id> prompt_ids;  // completions: a prompt given as token ids
    json messages;                              // chat: [{"role", "content": string}, ...], content made a string
    nexttok::generation_options options;        // of choice 0; choice i has seed + i
    std::int64_t n = 1;                         // choices
    bool stream = false;
    bool include_usage = false;     // stream_options.include_usage
    bool logprobs = false;          // report the log-probability of each chosen token
    std::int64_t top_logprobs = 0;  // and this many alternatives per token
};

namespace detail {

inline bool present(const json& body, const char* name) { return body.contains(name) && !body.at(name).is_null(); }

inline std::optional<std::int64_t> get_int(const json& body, const char* name, std::int64_t lo, std::int64_t hi,
                                           const std::string& rule) {
    if (!present(body, name)) return std::nullopt;
    const json& v = body.at(name);
    std::int64_t x = 0;
    if (v.is_number_unsigned()) {
        const auto u = v.get<std::uint64_t>();
        if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
            throw request_error("'" + std::string(name) + "' must be " + rule, name);
        x = static_cast<std::int64_t>(u);
    } else if (v.is_number_integer()) {
        x = v.get<std::int64_t>();
    } else if (v.is_number_float() && std::trunc(v.get<double>()) == v.get<double>() &&
               std::abs(v.get<double>()) < 9e15) {
        x = static_cast<std::int64_t>(v.get<double>());  // 40.0 from a JavaScript client
    } else {
        throw request_error("'" + std::string(name) + "' must be " + rule, name);
    }
    if (x < lo || x > hi)
        throw request_error("'" + std::string(name) + "' must be " + rule + ", got " + std::to_string(x), name);
    return x;
}

// A finite number in [lo, hi] (open at lo when lo_open).
inline std::optional<float> get_number(const json& body, const char* name, double lo, double hi, bool lo_open,
                                       const std::string& rule) {
    if (!present(body, name)) return std::nullopt;
    const json& v = body.at(name);
    if (!v.is_number()) throw request_error("'" + std::string(name) + "' must be " + rule, name);
    const double x = v.get<double>();
    if (!std::isfinite(x) || x < lo || x > hi || (lo_open && x == lo))
        throw request_error("'" + std::string(name) + "' must be " + rule + ", got " + nexttok::quote_json(v), name);
    return static_cast<float>(x);
}

inline std::optional<bool> get_bool(const json& body, const char* name) {
    if (!present(body, name)) return std::nullopt;
    if (!body.at(name).is_boolean()) throw request_error("'" + std::string(name) + "' must be a boolean", name);
    return body.at(name).get<bool>();
}

inline std::vector<std::string> get_stop(const json& body) {
    if (!present(body, "stop")) return {};
    const json& v = body.at("stop");
    const std::string rule = "'stop' must be a non-empty string or a list of non-empty strings";
    std::vector<std::string> out;
    if (v.is_string()) {
        out.push_back(v.get<std::string>());
    } else if (v.is_array()) {
        for (const json& s : v) {
            if (!s.is_string()) throw request_error(rule, "stop");
            out.push_back(s.get<std::string>());
        }
    } else {
        throw request_error(rule, "stop");
    }
    for (const auto& s : out)
        if (s.empty()) throw request_error(rule + " (got an empty string)", "stop");
    return out;
}

inline void check_token(const json& v, std::int64_t vocab_size, const char* field) {
    if (!v.is_number_integer() || v.get<std::int64_t>() < 0 || v.get<std::int64_t>() >= vocab_size)
        throw request_error("'" + std::string(field) + "': token ids must be integers in [0, " +
                                std::to_string(vocab_size) + "), got " + nexttok::quote_json(v),
                            field);
}

inline std::vector<nexttok::token_bias> get_logit_bias(const json& body, std::int64_t vocab_size) {
    if (!present(body, "logit_bias")) return {};
    const json& v = body.at("logit_bias");
    if (!v.is_object()) throw request_error("'logit_bias' must be an object {\"token id\": bias}", "logit_bias");
    std::vector<nexttok::token_bias> out;
    for (auto it = v.begin(); it != v.end(); ++it) {
        std::size_t used = 0;
        long long id = -1;
        try {
            id = std::stoll(it.key(), &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used == 0 || used != it.key().size() || id < 0 || id >= vocab_size)
            throw request_error(
                "'logit_bias': key '" + it.key() + "' is not a token id in [0, " + std::to_string(vocab_size) + ")",
                "logit_bias");
        if (!it.value().is_number() || !std::isfinite(it.value().get<double>()))
            throw request_error("'logit_bias': the bias of token " + it.key() + " must be a finite number",
                                "logit_bias");
        out.push_back({static_cast<nexttok::token_id>(id), it.value().get<float>()});
    }
    return out;
}

// Completions: "prompt" as a string, a list of one string, or a list of token ids.
inline void get_prompt(const json& body, std::int64_t vocab_size, openai_request& r) {
    if (!present(body, "prompt"))
        throw request_error("'prompt' is required (a string or a list of token ids)", "prompt");
    const json& p = body.at("prompt");
    if (p.is_string()) {
        r.prompt_text = p.get<std::string>();
        return;
    }
    if (!p.is_array() || p.empty())
        throw request_error("'prompt' must be a string or a non-empty list of token ids", "prompt");
    if (p.size() == 1 && p[0].is_string()) {
        r.prompt_text = p[0].get<std::string>();
        return;
    }
    if (p[0].is_string() || p[0].is_array())
        throw request_error(
            "'prompt': a list of several prompts is not supported (send one request per prompt, or use 'n')", "prompt");
    for (const json& id : p) check_token(id, vocab_size, "prompt");
    for (const json& id : p) r.prompt_ids.push_back(static_cast<nexttok::token_id>(id.get<std::int64_t>()));
}

// Chat: "messages", each {"role": string, "content": string, null or a list of {"type": "text", "text"}}.
inline json get_messages(const json& body) {
    if (!present(body, "messages"))
        throw request_error("'messages' is required (a list of {\"role\", \"content\"})", "messages");
    const json& m = body.at("messages");
    if (!m.is_array() || m.empty())
        throw request_error("'messages' must be a non-empty list of {\"role\", \"content\"}", "messages");
    json out = json::array();
    for (std::size_t i = 0; i < m.size(); ++i) {
        const std::string where = "'messages[" + std::to_string(i) + "]'";
        const json& msg = m[i];
        if (!msg.is_object()) throw request_error(where + " must be an object {\"role\", \"content\"}", "messages");
        if (!msg.contains("role") || !msg["role"].is_string())
            throw request_error(where + ".role must be a string", "messages");
        json copy = msg;
        const json content = msg.contains("content") ? msg["content"] : json();
        if (content.is_null()) {
            copy["content"] = "";
        } else if (content.is_array()) {  // content parts: the text parts, concatenated
            std::string text;
            for (const json& part : content) {
                if (!part.is_object() || !part.contains("type") || part["type"] != "text" || !part.contains("text") ||
                    !part["text"].is_string())
                    throw request_error(
                        where + ".content: only parts {\"type\": \"text\", \"text\": string} are supported",
                        "messages");
                text += part["text"].get<std::string>();
            }
            copy["content"] = text;
        } else if (!content.is_string()) {
            throw request_error(where + ".content must be a string, null or a list of text parts", "messages");
        }
        out.push_back(std::move(copy));
    }
    return out;
}

}  // namespace detail

// Parses `body`; request_error (status 400) for malformed JSON or a bad field. `defaults`: the
// server's flags; vocab_size bounds the token ids of "prompt" and "logit_bias".
inline openai_request parse_openai_request(const std::string& body_text, endpoint kind,
                                           const nexttok::generation_options& defaults, std::int64_t vocab_size) {
    using namespace detail;
    // Nesting is bounded while parsing, before anything recursive (a template, dump()) touches the
    // value: a request needs a handful of levels, a hostile one could hold a million.
    json body;
    try {
        body = nexttok::parse_json_text<json>(body_text, "the body");
    } catch (const nexttok::format_error& e) {  // too deep, or a syntax error with its line and column
        throw request_error(e.what());
    }
    if (!body.is_object()) throw request_error("the body must be a JSON object");

    openai_request r;
    r.kind = kind;
    r.options = defaults;
    if (present(body, "model")) {
        if (!body["model"].is_string()) throw request_error("'model' must be a string", "model");
        r.model = body["model"].get<std::string>();
    }
    if (kind == endpoint::completions)
        get_prompt(body, vocab_size, r);
    else
        r.messages = get_messages(body);

    constexpr std::int64_t max_i64 = std::numeric_limits<std::int64_t>::max();
    nexttok::generation_options& o = r.options;
    nexttok::sampling_options& s = o.sampling;
    const char* max_name =
        kind == endpoint::chat && present(body, "max_completion_tokens") ? "max_completion_tokens" : "max_tokens";
    if (auto v = get_int(body, max_name, 0, max_i64, "an integer >= 0")) o.max_new_tokens = *v;
    if (auto v = get_number(body, "temperature", 0.0, 1e6, false, "a number >= 0")) s.temperature = *v;
    if (auto v = get_number(body, "top_p", 0.0, 1.0, true, "a number in (0, 1]")) s.top_p = *v;
    if (auto v = get_int(body, "top_k", 0, std::numeric_limits<int>::max(), "an integer >= 0 (0: off)"))
        s.top_k = static_cast<int>(*v);
    if (auto v = get_number(body, "min_p", 0.0, 1.0, false, "a number in [0, 1]")) s.min_p = *v;
    if (auto v = get_number(body, "presence_penalty", -1e6, 1e6, false, "a finite number")) s.presence_penalty = *v;
    if (auto v = get_number(body, "frequency_penalty", -1e6, 1e6, false, "a finite number")) s.frequency_penalty = *v;
    if (auto v = get_number(body, "repeat_penalty", 0.0, 1e6, true, "a number > 0 (1: off)")) s.repeat_penalty = *v;
    for (const auto& b : get_logit_bias(body, vocab_size)) s.logit_bias.push_back(b);
    if (present(body, "stop")) o.stop = get_stop(body);
    if (auto v = get_int(body, "seed", std::numeric_limits<std::int64_t>::min(), max_i64, "an integer"))
        s.seed = static_cast<std::uint64_t>(*v);
    if (auto v = get_bool(body, "ignore_eos")) o.ignore_eos = *v;
    if (auto v = get_int(body, "n", 1, 128, "an integer in [1, 128]")) r.n = *v;
    if (auto v = get_bool(body, "stream")) r.stream = *v;
    if (present(body, "stream_options")) {
        const json& so = body["stream_options"];
        if (!so.is_object()) throw request_error("'stream_options' must be an object", "stream_options");
        if (so.contains("include_usage") && !so["include_usage"].is_null()) {
            if (!so["include_usage"].is_boolean())
                throw request_error("'stream_options.include_usage' must be a boolean", "stream_options");
            r.include_usage = so["include_usage"].get<bool>();
        }
    }
    if (kind == endpoint::completions) {
        // OpenAI's legacy "logprobs": the number of alternatives (0: only the chosen tokens').
        if (auto v = get_int(body, "logprobs", 0, 20, "an integer in [0, 20]")) {
            r.logprobs = true;
            r.top_logprobs = *v;
        }
    } else {
        if (auto v = get_bool(body, "logprobs")) r.logprobs = *v;
        if (auto v = get_int(body, "top_logprobs", 0, 20, "an integer in [0, 20]")) {
            if (!r.logprobs) throw request_error("'top_logprobs' needs 'logprobs': true", "top_logprobs");
            r.top_logprobs = *v;
        }
    }
    if (auto v = get_int(body, "n_probs", 0, 100, "an integer in [0, 100]")) {  // llama.cpp's name
        r.logprobs = r.logprobs || *v > 0;
        r.top_logprobs = std::max(r.top_logprobs, *v);
    }
    o.n_logprobs = r.top_logprobs;
    o.n_samples = 1;  // n choices are n requests with seeds seed, seed + 1, ...
    try {
        o.validate();
    } catch (const std::exception& e) {
        throw request_error(e.what());
    }
    return r;
}

// The options of choice i: the seed moves by i, as generate_n() does for sample i.
inline nexttok::generation_options choice_options(const openai_request& r, std::int64_t i) {
    nexttok::generation_options o = r.options;
    o.sampling.seed += static_cast<std::uint64_t>(i);
    return o;
}

}  // namespace server
