// nexttok's scoring example: the log-probability and perplexity a model assigns to a text, without
// sampling (nexttok::score: one forward call over prompt + text, the chain rule over its tokens).
//
//   score --model stories260K.gguf --text "Once upon a time, there was a little girl named Lily."
//   score --model stories260K.bin --tokenizer tok512.bin --prompt "Once upon a time" --text ", there was"
//
// The text is scored as a continuation of the prompt (BOS alone when no prompt is given): the tokens
// are those of prompt + text, so that a word split across the boundary is tokenized as it would be in
// the whole string; the prompt's tokens are the longest common prefix of the two tokenizations.
#include <nexttok/nexttok.hpp>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>
#include <thread>

int main(int argc, char** argv) {
    std::string model_path, tokenizer_path, prompt, text;
    std::int64_t context = 0;
    int threads = 0;
    bool per_token = false;
    CLI::App app{"nexttok score: log-probability and perplexity of a text under a model"};
    app.add_option("-m,--model", model_path, "GGUF file, Hugging Face directory or llama2.c checkpoint")->required()->check(CLI::ExistingPath);
    app.add_option("--tokenizer", tokenizer_path, "tokenizer.bin, tokenizer.json, tokenizer.model, a GGUF or a directory (needed with a llama2.c checkpoint)")->check(CLI::ExistingPath);
    app.add_option("-p,--prompt", prompt, "context the text follows (not scored); BOS is prepended when the model asks for it");
    app.add_option("--text", text, "the text to score")->required();
    app.add_option("-c,--ctx-size", context, "KV-cache capacity in positions (0: the model's context length)")->capture_default_str()->check(CLI::NonNegativeNumber);
    app.add_option("-t,--threads", threads, "threads (0: one per hardware thread)")->capture_default_str()->check(CLI::Range(0, 1024));
    app.add_flag("--per-token", per_token, "print every token's log-probability");
    CLI11_PARSE(app, argc, argv);

    try {
        const auto model = nexttok::load_model(model_path);
        const nexttok::tokenizer tok_value = nexttok::load_model_tokenizer(*model, tokenizer_path);
        const nexttok::tokenizer* tok = &tok_value;
        const bool bos = tok->default_add_bos();
        const auto whole = tok->encode(prompt + text, bos);
        const auto head = tok->encode(prompt, bos);
        std::size_t n_prompt = 0;
        while (n_prompt < head.size() && n_prompt < whole.size() && head[n_prompt] == whole[n_prompt]) ++n_prompt;
        if (n_prompt == 0) {
            if (!bos || whole.empty()) throw nexttok::invalid_argument_error("the model adds no BOS: give a --prompt to condition the text on");
            n_prompt = 1;
        }
        if (n_prompt >= whole.size()) throw nexttok::invalid_argument_error("--text adds no token to the prompt");
        const std::span<const nexttok::token_id> all(whole);

        nexttok::decoder<float> dec(model, threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
        const std::int64_t capacity = context > 0 ? context : std::max<std::int64_t>(model->config().max_seq_len, static_cast<std::int64_t>(whole.size()));
        nexttok::no_cache<float> cache(model->config(), capacity);  // one pass: nothing to keep
        const auto r = nexttok::score(dec, cache, all.first(n_prompt), all.subspan(n_prompt));

        if (per_token)
            for (std::size_t i = 0; i < r.token_logprobs.size(); ++i)
                std::printf("%5d %-16s %9.4f\n", whole[n_prompt + i], ("'" + tok->token_to_piece(whole[n_prompt + i]) + "'").c_str(),
                            r.token_logprobs[i]);
        std::printf("tokens: %lld scored after %zu prompt tokens\n", static_cast<long long>(r.n_tokens()), n_prompt);
        std::printf("log-probability: %.4f nats (%.4f bits)\n", r.logprob, r.logprob / std::log(2.0));
        std::printf("perplexity: %.4f\n", r.perplexity());
    } catch (const std::exception& e) {
        std::cerr << "error: " << e.what() << '\n';
        return 1;
    }
    return 0;
}
