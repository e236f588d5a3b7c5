// Everything a generation can be asked to do, as one value: the sampling policy (sampling_options),
// when to stop, and what to report. Each field maps to one flag of examples/generate (named after
// llama.cpp's where llama.cpp has it) and says its default; make_sampler(options, tok) and
// make_stopping(options, tok) (make_generation.hpp) turn it into the policies generate() runs, and
// generate(dec, cache, tok, prompt, options) does both.
//
// Reproducing another engine: llama.cpp's defaults are the defaults here (top-k 40, top-p 0.95, min-p
// 0.05, temperature 0.8, penalties over the last 64 tokens, the prompt included), so a llama-cli command
// line maps flag for flag. For Hugging Face's generate(): sampling.sampler_order = hf_order(), set
// top_k / top_p / temperature as in the GenerationConfig (HF's defaults are top_k 50, top_p 1,
// temperature 1), min_p = 0, repeat_penalty = HF's repetition_penalty with repeat_last_n = -1,
// no_repeat_ngram_size, banned_sequences = bad_words_ids, epsilon_cutoff / eta_cutoff, max_new_tokens
// or max_length, min_new_tokens, stop = stop_strings. Draws differ (another random generator); the
// distributions are the same.
#pragma once

#include <nexttok/detail/config.hpp>
#include <nexttok/error.hpp>
#include <nexttok/sampling/sampling_options.hpp>
#include <nexttok/types.hpp>

#include <chrono>
#include <cstdint>
#include <stop_token>
#include <string>
#include <vector>

namespace nexttok {

struct generation_options {
    // --- length ------------------------------------------------------------------------------------
    // 128: generate at most this many tokens (-n); -1: no limit (EOS, a stop condition or the cache's
    // capacity ends generation). Must be >= -1.
    std::int64_t max_new_tokens = 128;
    // 0: the sequence, prompt included, holds at most this many tokens (HF's max_length); 0: no limit.
    // Must be >= 0.
    std::int64_t max_length = 0;
    // 0: EOS cannot be drawn before this many tokens were generated (--min-new-tokens). Must be >= 0.
    std::int64_t min_new_tokens = 0;
    // false: when true, EOS never ends generation and is never drawn (llama.cpp's --ignore-eos, which
    // biases the EOS ids by -inf).
    bool ignore_eos = false;
    // {}: the end-of-sequence ids; empty: the tokenizer's EOS.
    std::vector<token_id> eos_ids;

    // --- context -----------------------------------------------------------------------------------
    // false: when the KV cache is full, keep its first `keep` prompt tokens, drop half of the rest,
    // move the later ones down (their keys re-rotated to their new positions) and go on, so that
    // generation can run longer than the cache (llama.cpp's --context-shift; see generate.hpp). Needs
    // a cache that keeps history and RoPE positions. false: generation ends with cache_full.
    bool context_shift = false;
    // 0: prompt tokens a context shift keeps (--keep, as llama.cpp's: BOS, when the prompt starts with
    // it, is kept besides them); -1 or more than the prompt: the whole prompt. Must be >= -1.
    std::int64_t keep = 0;

    // --- stop conditions ---------------------------------------------------------------------------
    // {}: stop strings, matched on the decoded text across token boundaries (--stop, repeatable). The
    // text ends before the stop string; the streaming callback never sees any part of it.
    std::vector<std::string> stop;
    // false: keep the stop string at the end of the text (--include-stop).
    bool include_stop_string = false;
    // {}: token sequences that end generation when the generated tokens end with one (finish reason
    // stop_token).
    std::vector<std::vector<token_id>> stop_token_sequences;
    // 0: wall-clock budget of one generation, from the call to generate() (--timeout, in ms); 0: none.
    std::chrono::milliseconds timeout{0};
    // {}: generation ends (finish reason cancelled) once a stop is requested on this token's source,
    // from any thread; a default token is never cancelled.
    std::stop_token cancel;

    // --- outputs -----------------------------------------------------------------------------------
    // 0: report the n most likely tokens and their log-probabilities at each step (--logprobs N).
    // Must be >= 0.
    std::int64_t n_logprobs = 0;
    // 1: independent samples of the same prompt (--n-samples); generate_n() runs them on one prefill.
    // Sample i uses seed + i. Must be >= 1.
    std::int64_t n_samples = 1;

    // --- sampling ----------------------------------------------------------------------------------
    // llama.cpp's default chain; see sampling_options.hpp for every field.
    sampling_options sampling;
    // {"\n", ":", "\"", "*"}: DRY's sequence breakers as text (--dry-sequence-breaker, repeatable),
    // llama.cpp's defaults; converted with the tokenizer and added to sampling.dry_sequence_breakers
    // when DRY is enabled.
    std::vector<std::string> dry_sequence_breakers{"\n", ":", "\"", "*"};

    // Throws invalid_argument_error naming the first bad field and its value (sampling fields too).
    NEXTTOK_DECL void validate() const;

private:
    [[noreturn]] NEXTTOK_DECL static void fail_(const char* field, const std::string& value, const char* rule);
};

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/generation/impl/generation_options.ipp>
#endif
