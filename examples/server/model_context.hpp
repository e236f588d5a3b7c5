// What the server serves: the model, its tokenizer and its chat template, loaded once at start, and
// the two ways a request becomes prompt tokens (completion text, chat messages).
//
// The chat template: --chat-template FILE (a Jinja file) or chatml (built in); otherwise the GGUF's
// tokenizer.chat_template, or tokenizer_config.json beside a Hugging Face model (or the tokenizer).
// A model without one serves completions; a chat request is then a 400 that names --chat-template.
// Read-only after loading: shared by every HTTP thread.
#pragma once

#include "../generate/demo_model.hpp"

#include <nexttok/nexttok.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace server {

struct model_context {
    std::shared_ptr<const nexttok::model> model;
    std::optional<nexttok::tokenizer> tok;
    std::optional<nexttok::chat_template> chat;  // none: chat requests are refused
    std::vector<nexttok::token_id> end_of_turn;  // EOS and the end-of-turn tokens the vocabulary has
    std::string name;                            // the model's id in /v1/models (--alias)
    double load_seconds = 0.0;
};

inline std::optional<nexttok::chat_template> find_chat_template(const nexttok::model& m,
                                                                const std::string& tokenizer_path,
                                                                const std::string& flag) {
    if (nexttok::chat_template::is_builtin_name(flag)) return nexttok::chat_template::builtin(flag);
    if (!flag.empty()) {
        std::ifstream in(flag, std::ios::binary);
        if (!in) throw nexttok::io_error("--chat-template " + flag + ": cannot open it (a Jinja file, or 'chatml')");
        return nexttok::chat_template(std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()),
                                      std::filesystem::path(flag).filename().string());
    }
    if (const nexttok::gguf_file* g = m.gguf()) return nexttok::load_chat_template(*g);
    for (const std::filesystem::path& dir : {std::filesystem::path(tokenizer_path), m.path()}) {
        if (dir.empty()) continue;
        const std::filesystem::path config =
            (std::filesystem::is_directory(dir) ? dir : dir.parent_path()) / "tokenizer_config.json";
        if (std::filesystem::exists(config)) return nexttok::load_chat_template_from_tokenizer_config(config);
    }
    return std::nullopt;
}

// The tokenizer's EOS and, when the vocabulary has them, the end-of-turn tokens of common templates.
inline std::vector<nexttok::token_id> end_of_turn_ids(const nexttok::tokenizer& tok) {
    std::vector<nexttok::token_id> ids;
    if (tok.eos() != nexttok::no_token) ids.push_back(tok.eos());
    for (const char* text : {"<|im_end|>", "<|eot_id|>", "<|end|>", "<end_of_turn>", "<|endoftext|>"}) {
        const nexttok::token_id id = tok.vocab().find(text);
        if (id != nexttok::no_token && std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
    }
    return ids;
}

// Loads --model (none: the built-in demo model), its tokenizer and chat template.
inline model_context load_model_context(const std::string& model_path, const std::string& tokenizer_path,
                                        const std::string& chat_flag, const std::string& alias,
                                        const nexttok::load_options& load = {}) {
    model_context c;
    const auto t0 = std::chrono::steady_clock::now();
    if (model_path.empty()) {
        c.tok.emplace(demo::make_tokenizer());
        c.model = demo::make_model(static_cast<std::int64_t>(c.tok->vocab_size()));
        std::cerr << "No --model given: serving a built-in model with random weights (seed " << demo::seed
                  << "), so the text is meaningless.\n";
    } else {
        c.model = nexttok::load_model(model_path, load);
        c.tok.emplace(nexttok::load_model_tokenizer(*c.model, tokenizer_path));
    }
    c.chat = find_chat_template(*c.model, tokenizer_path, chat_flag);
    c.end_of_turn = end_of_turn_ids(*c.tok);
    c.name = !alias.empty() ? alias : model_path.empty() ? std::string("demo") : c.model->file_name();
    c.load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return c;
}

// A completion's text prompt, encoded as generate encodes --prompt (BOS when the model asks for it).
inline std::vector<nexttok::token_id> encode_text_prompt(const model_context& c, const std::string& text) {
    return c.tok->encode(text, c.tok->default_add_bos());
}

// The chat prompt: the template rendered with add_generation_prompt, its special tokens parsed (not
// those typed in messages). BOS is prepended when the model asks for it and the template does not
// write bos_token itself. chat_template_error when the template fails.
inline std::vector<nexttok::token_id> encode_chat_prompt(const model_context& c,
                                                         const nlohmann::ordered_json& messages) {
    const nexttok::tokenizer& tok = *c.tok;
    nlohmann::ordered_json variables = nlohmann::ordered_json::object();
    variables["bos_token"] = tok.bos() != nexttok::no_token ? tok.vocab()[tok.bos()].text : std::string();
    variables["eos_token"] = tok.eos() != nexttok::no_token ? tok.vocab()[tok.eos()].text : std::string();
    const bool add_bos = tok.default_add_bos() && c.chat->source().find("bos_token") == std::string::npos;
    return nexttok::encode_chat(tok, *c.chat, messages, true, variables, add_bos);
}

}  // namespace server
