// nexttok's scoring example: the log-probability and perplexity a model assigns to a text, without
// sampling (nexttok::score: one forward call over prompt + text, the chain rule over its tokens).
//
//   score --model stories260K.gguf --text "Once upon a time, there was a little girl named Lily."
//   score --model stories260K.bin --tokenizer tok512.bin --prompt "Once upon a time" --text ", there was"
//   score --model stories260K.gguf --text "$(cat story.txt)" --ctx-size 64 --stride 16
//
// The text is scored as a continuation of the prompt (BOS alone when no prompt is given): the tokens
// are those of prompt + text, so that a word split across the boundary is tokenized as it would be in
// the whole string; the prompt's tokens are the longest common prefix of the two tokenizations
// (nexttok::encode_continuation, for programs that score texts themselves).
//
// The context is --ctx-size positions (the model's trained context by default); nothing runs past
// it. A longer text is scored in windows of that size, as llama.cpp's perplexity tool does
// (nexttok::score_windows): each window after the first moves on by --stride tokens (half the window
// by default) and scores them with the tokens before them in the window as context, BOS first when
// the model adds BOS. stderr says so.
#include "../generate/command_line.hpp"

#include <nexttok/nexttok.hpp>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
    std::string model_path, tokenizer_path, prompt, text;
    std::int64_t context = 0, stride = 0;
    int threads = 0;
    bool per_token = false;
    bool check_tensors = false;
    CLI::App app{"nexttok score: log-probability and perplexity of a text under a model"};
    flags::add_model_flags(app, model_path, tokenizer_path, /*required=*/true);
    app.add_option("-p,--prompt", prompt,
                   "context the text follows (not scored); BOS is prepended when the model asks for it");
    app.add_option("--text", text, "the text to score")->required();
    app.add_option("-c,--ctx-size", context,
                   "positions per forward pass (0: the model's context length); a longer text is scored in windows of "
                   "this size")
        ->capture_default_str()
        ->check(CLI::NonNegativeNumber);
    app.add_option(
           "--stride", stride,
           "with windows: tokens each window moves on and scores, after the rest of it as context (0: half the window)")
        ->capture_default_str()
        ->check(CLI::NonNegativeNumber);
    app.add_option("-t,--threads", threads, "threads (0: one per hardware thread)")
        ->capture_default_str()
        ->check(CLI::Range(0, 1024));
    app.add_flag("--per-token", per_token, "print every token's log-probability");
    app.add_flag("--check-tensors", check_tensors,
                 "scan every weight for NaN and inf when loading (by default only models up to 2 GiB)");
    flags::add_version_flag(app, "score");
    if (const int status = flags::parse_command_line(app, argc, argv); status >= 0) return status;

    try {
        nexttok::load_options lo;
        if (check_tensors) lo.check_tensors = nexttok::tensor_check::always;
        const auto model = nexttok::load_model(model_path, lo);
        const nexttok::model_config& c = model->config();
        const nexttok::tokenizer tok_value = nexttok::load_model_tokenizer(*model, tokenizer_path);
        const nexttok::tokenizer* tok = &tok_value;
        const bool bos = tok->default_add_bos();
        if (prompt.empty() && !bos)
            throw nexttok::invalid_argument_error("the model adds no BOS: give a --prompt to condition the text on");
        // The text tokenized as part of prompt + text (nexttok::encode_continuation).
        const nexttok::prompt_and_continuation split = nexttok::encode_continuation(*tok, prompt, text, bos);
        std::vector<nexttok::token_id> whole = split.prompt;
        whole.insert(whole.end(), split.continuation.begin(), split.continuation.end());
        const std::size_t n_prompt = split.prompt.size();
        const std::span<const nexttok::token_id> all(whole);

        if (context > c.max_seq_len && c.rope_scaling.type == nexttok::rope_scaling_type::none)
            std::fprintf(
                stderr,
                "[%s] warning: --ctx-size %lld is more than the %lld positions the model was trained on, and it has no "
                "RoPE scaling: the scores past position %lld mean little\n",
                model->file_name().c_str(), static_cast<long long>(context), static_cast<long long>(c.max_seq_len),
                static_cast<long long>(c.max_seq_len));
        const std::int64_t window = context > 0 ? context : c.max_seq_len;
        const nexttok::score_window_options windows{
            .window = window, .stride = stride, .bos = bos ? tok->bos() : nexttok::no_token};
        const bool windowed = static_cast<std::int64_t>(whole.size()) > window;
        if (windowed) {
            if (stride >= window)
                throw nexttok::invalid_argument_error("--stride " + std::to_string(stride) +
                                                      ": expected less than the window of " + std::to_string(window) +
                                                      " positions (--ctx-size)");
            const std::int64_t s = stride > 0 ? stride : window / 2;
            std::fprintf(
                stderr,
                "[%s] the text has %zu tokens, more than the context of %lld positions: scoring it in windows of %lld "
                "tokens as llama.cpp's perplexity tool does; each window after the first moves on by %lld tokens "
                "(--stride) and scores them after the %lld before them%s\n",
                model->file_name().c_str(), whole.size(), static_cast<long long>(window),
                static_cast<long long>(window), static_cast<long long>(s), static_cast<long long>(window - s),
                bos ? " (the first of them replaced by BOS)" : "");
        }

        nexttok::decoder<float> dec(
            model, threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
        nexttok::no_cache<float> cache(c, window);  // one pass per window: nothing to keep
        const auto r = nexttok::score_windows(dec, cache, all.first(n_prompt), all.subspan(n_prompt), windows);
        if (windowed)
            std::fprintf(stderr, "[%s] scored in %lld windows of at most %lld positions\n", model->file_name().c_str(),
                         static_cast<long long>(r.n_windows), static_cast<long long>(window));

        if (per_token)
            for (std::size_t i = 0; i < r.token_logprobs.size(); ++i)
                std::printf("%5d %-16s %9.4f\n", whole[n_prompt + i],
                            ("'" + tok->token_to_piece(whole[n_prompt + i]) + "'").c_str(), r.token_logprobs[i]);
        std::printf("tokens: %lld scored after %zu prompt tokens\n", static_cast<long long>(r.n_tokens()), n_prompt);
        std::printf("log-probability: %.4f nats (%.4f bits)\n", r.logprob, r.logprob / std::log(2.0));
        std::printf("perplexity: %.4f\n", r.perplexity());
    } catch (const std::exception& e) {
        std::cerr << "error: " << e.what() << '\n';
        return 1;
    }
    return 0;
}
