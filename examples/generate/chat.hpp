// generate --chat: an interactive conversation, as llama.cpp's -cnv. Each line read is a user turn;
// the whole conversation is rendered again with the model's chat template (add_generation_prompt),
// tokenized with special tokens parsed only in the template's own text (encode_chat), and the answer
// is generated with generate_reusing on one KV cache for the whole conversation: the prefix the cache
// already holds (the previous turns, up to the last answer) is kept and only the new tokens are
// prefilled. The answer streams to the output and stops at the template's end-of-turn token; it is
// appended as the assistant's message and the next line is read.
//
// The streams: answers (one per turn, followed by a newline) go to `out`; the prompt marker "> " and
// one line of statistics per turn go to `err`, so that stdout holds only the model's text. The
// conversation ends at the end of the input or a line "/exit"; empty lines are skipped.
//
// The end of the context: when the conversation no longer fits the cache (the rendered prompt is
// longer than the context, or an answer ran into the end of it), the program says so and the
// conversation ends; nothing is dropped silently. Context shift is not offered in chat mode (the
// prefix reuse needs the cache to hold exactly what a prefill of its tokens writes).
#pragma once

#include <nexttok/nexttok.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace chat {

// The texts of the end-of-turn tokens of the common templates (ChatML, Llama 3, Phi-3, Gemma, GPT).
inline constexpr const char* end_of_turn_texts[] = {"<|im_end|>", "<|eot_id|>", "<|end|>", "<end_of_turn>",
                                                    "<|endoftext|>"};

// The ids that end an answer: the tokenizer's EOS plus each end-of-turn token the vocabulary has.
inline std::vector<nexttok::token_id> end_of_turn_ids(const nexttok::tokenizer& tok) {
    std::vector<nexttok::token_id> ids;
    if (tok.eos() != nexttok::no_token) ids.push_back(tok.eos());
    for (const char* text : end_of_turn_texts) {
        const nexttok::token_id id = tok.vocab().find(text);
        if (id != nexttok::no_token && std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
    }
    return ids;
}

// The template's bos_token and eos_token variables, from the tokenizer (absent when it has none).
inline nlohmann::ordered_json template_variables(const nexttok::tokenizer& tok) {
    nlohmann::ordered_json v = nlohmann::ordered_json::object();
    if (tok.bos() != nexttok::no_token) v["bos_token"] = tok.vocab()[tok.bos()].text;
    if (tok.eos() != nexttok::no_token) v["eos_token"] = tok.vocab()[tok.eos()].text;
    return v;
}

// The chat template to use. `flag` (--chat-template): empty for the model's own (GGUF metadata, or a
// Hugging Face directory's tokenizer_config.json), "chatml" for the built-in ChatML, else a Jinja
// file. Throws invalid_argument_error when the model carries none, naming the way out.
inline nexttok::chat_template choose_template(const nexttok::model& m, const std::string& flag) {
    if (!flag.empty()) {
        if (nexttok::chat_template::is_builtin_name(flag)) return nexttok::chat_template::builtin(flag);
        std::ifstream in(flag, std::ios::binary);
        if (!in)
            throw nexttok::invalid_argument_error(
                "--chat-template " + flag + ": no such file, and not the name of a built-in template (known: chatml)");
        const std::string source((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        return nexttok::chat_template(source, std::filesystem::path(flag).filename().string());
    }
    std::optional<nexttok::chat_template> t;
    if (const nexttok::gguf_file* g = m.gguf())
        t = nexttok::load_chat_template(*g);
    else if (m.format() == nexttok::model_file_format::hf_directory &&
             std::filesystem::exists(m.path() / "tokenizer_config.json"))
        t = nexttok::load_chat_template_from_tokenizer_config(m.path() / "tokenizer_config.json");
    if (!t)
        throw nexttok::invalid_argument_error(
            m.file_name() +
            ": the model carries no chat template (tokenizer.chat_template in GGUF, "
            "chat_template in tokenizer_config.json): give one with --chat-template FILE, or use "
            "--chat-template chatml for the built-in ChatML");
    return std::move(*t);
}

struct chat_options {
    std::string system;               // --system: a system message before the first turn (empty: none)
    nexttok::generation_options gen;  // per answer; end_of_turn_ids() are added to gen.eos_ids
    std::string model_name;           // in messages: "[model.gguf] ..."
    std::string room_hint;            // how to get a longer context, for the message when it is full
};

// A conversation on one decoder and one cache: the messages so far and what the cache holds.
// Non-owning: the decoder, the cache and the tokenizer outlive it. Not thread-safe.
template <class Decoder, class Cache>
requires nexttok::prefix_reusing_decoder<Decoder, Cache>
class conversation {
public:
    conversation(Decoder& dec, Cache& cache, const nexttok::tokenizer& tok, nexttok::chat_template tmpl, chat_options o)
            : dec_(&dec),
              cache_(&cache),
              tok_(&tok),
              tmpl_(std::move(tmpl)),
              o_(std::move(o)),
              variables_(template_variables(tok)) {
        for (const nexttok::token_id id : end_of_turn_ids(tok))
            if (std::find(o_.gen.eos_ids.begin(), o_.gen.eos_ids.end(), id) == o_.gen.eos_ids.end())
                o_.gen.eos_ids.push_back(id);
        if (!o_.system.empty()) messages_.push_back({{"role", "system"}, {"content", o_.system}});
    }

    // The prompt of the conversation with `user` appended, ready for the assistant's answer. BOS is
    // prepended when the tokenizer wants one and the template did not write it.
    std::vector<nexttok::token_id> prompt_with(const std::string& user) const {
        nlohmann::ordered_json m = messages_;
        m.push_back({{"role", "user"}, {"content", user}});
        return encode(m);
    }

    // One turn: renders the conversation with `user` appended and, when it fits the cache, generates
    // the answer (streamed through on_token), then records both messages. nullopt when the prompt is
    // longer than the context (nothing is recorded).
    std::optional<nexttok::generation_result> reply(const std::string& user, const nexttok::token_callback& on_token) {
        const std::vector<nexttok::token_id> prompt = prompt_with(user);
        last_prompt_size_ = static_cast<std::int64_t>(prompt.size());
        if (last_prompt_size_ > cache_->capacity()) return std::nullopt;
        nexttok::generation_result r =
            nexttok::generate_reusing(*dec_, *cache_, held_, *tok_, prompt, o_.gen, on_token);
        messages_.push_back({{"role", "user"}, {"content", user}});
        messages_.push_back({{"role", "assistant"}, {"content", r.text}});
        ++n_turns_;
        return r;
    }

    const nlohmann::ordered_json& messages() const noexcept { return messages_; }
    const nexttok::cached_tokens& held() const noexcept { return held_; }
    const nexttok::chat_template& chat_template() const noexcept { return tmpl_; }
    const nlohmann::ordered_json& variables() const noexcept { return variables_; }
    const chat_options& options() const noexcept { return o_; }
    std::int64_t n_turns() const noexcept { return n_turns_; }
    std::int64_t last_prompt_size() const noexcept { return last_prompt_size_; }
    std::int64_t capacity() const { return cache_->capacity(); }

private:
    std::vector<nexttok::token_id> encode(const nlohmann::ordered_json& messages) const {
        std::vector<nexttok::token_id> ids = nexttok::encode_chat(*tok_, tmpl_, messages, true, variables_);
        if (tok_->default_add_bos() && tok_->bos() != nexttok::no_token && (ids.empty() || ids.front() != tok_->bos()))
            ids.insert(ids.begin(), tok_->bos());
        return ids;
    }

    Decoder* dec_;
    Cache* cache_;
    const nexttok::tokenizer* tok_;
    nexttok::chat_template tmpl_;
    chat_options o_;
    nlohmann::ordered_json variables_;
    nlohmann::ordered_json messages_ = nlohmann::ordered_json::array();
    nexttok::cached_tokens held_;  // what *cache_ holds
    std::int64_t n_turns_ = 0;
    std::int64_t last_prompt_size_ = 0;
};

// The statistics line of a turn, e.g.
// "[m.gguf] turn 2: prompt: 57 tokens (41 reused, 16 new), 812.3 tokens/s | generated: 30 tokens, 95.1 tokens/s | finish: eos"
inline std::string turn_statistics(const std::string& model_name, std::int64_t turn,
                                   const nexttok::generation_result& r) {
    const nexttok::generation_timings& t = r.timings;
    char line[512];
    std::snprintf(line, sizeof line,
                  "[%s] turn %lld: prompt: %lld tokens (%lld reused, %lld new), %.1f tokens/s | generated: %zu tokens, "
                  "%.1f tokens/s | finish: %s",
                  model_name.c_str(), static_cast<long long>(turn),
                  static_cast<long long>(t.n_reused_prompt_tokens + t.n_prompt_tokens),
                  static_cast<long long>(t.n_reused_prompt_tokens), static_cast<long long>(t.n_prompt_tokens),
                  t.prefill_tokens_per_second(), r.tokens.size(), t.decode_tokens_per_second(),
                  std::string(nexttok::to_string(r.reason)).c_str());
    return line;
}

// Why run() returned.
enum class chat_end { input_ended, exit_command, context_full };

// The loop: `first` (--prompt; empty: none) is the first user turn, then one turn per line of `in`.
// Answers stream to `out`; the marker, the statistics and the end-of-context message go to `err`.
template <class Decoder, class Cache>
chat_end run(conversation<Decoder, Cache>& c, const std::string& first, std::istream& in, std::ostream& out,
             std::ostream& err) {
    const chat_options& o = c.options();
    auto stream = [&out](const nexttok::token_event& e) {
        out << e.text << std::flush;
        return true;
    };
    auto context_full = [&](const std::string& what) {
        err << "[" << o.model_name << "] the context is full at " << c.capacity() << " positions: " << what
            << ": the conversation ends here. For more room: " << o.room_hint << "\n";
        return chat_end::context_full;
    };
    bool use_first = !first.empty();
    for (;;) {
        std::string line;
        if (use_first) {
            line = first;
            use_first = false;
        } else {
            err << "> " << std::flush;
            if (!std::getline(in, line)) {
                err << "\n";
                return chat_end::input_ended;
            }
            if (!line.empty() && line.back() == '\r') line.pop_back();
            if (line == "/exit") return chat_end::exit_command;
            if (line.empty()) continue;
        }
        const std::optional<nexttok::generation_result> r = c.reply(line, stream);
        if (!r)
            return context_full("turn " + std::to_string(c.n_turns() + 1) + " needs " +
                                std::to_string(c.last_prompt_size()) + " positions for its prompt");
        out << "\n" << std::flush;
        err << turn_statistics(o.model_name, c.n_turns(), *r) << "\n" << std::flush;
        if (r->reason == nexttok::finish_reason::cache_full)
            return context_full("the answer of turn " + std::to_string(c.n_turns()) + " was cut");
    }
}

}  // namespace chat
