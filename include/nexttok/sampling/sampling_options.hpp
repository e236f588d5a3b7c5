// The runtime description of a sampling policy, with llama.cpp's defaults (common_params_sampling),
// so that a llama.cpp command line maps onto it field for field; make_sampler() (make_sampler.hpp)
// turns it into a chain. Every field says its default and what disables it. Hugging Face's generate()
// settings map too: choose sampler_order = hf_order() and set the fields HF has.
//
// Stages that need the tokenizer or the model's EOS ids (DRY breakers given as strings, min-new-tokens,
// ignore-eos) are in generation_options, which builds on this struct.
#pragma once

#include <nexttok/detail/config.hpp>
#include <nexttok/error.hpp>
#include <nexttok/sampling/logit_bias.hpp>
#include <nexttok/sampling/sampler_order.hpp>
#include <nexttok/types.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace nexttok {

struct sampling_options {
    // --- temperature ---------------------------------------------------------------------------
    // 0.8: logits are divided by it before the draw; 0 means greedy (exactly the argmax token). Must be
    // finite and >= 0 (llama.cpp also treats < 0 as greedy; we reject it as a likely mistake).
    float temperature = 0.8f;
    // 0: dynamic temperature range; > 0 makes the temperature vary in [temperature - range, temperature
    // + range] with the entropy (llama.cpp's --dynatemp-range, temp_ext). Must be finite and >= 0.
    float dynatemp_range = 0.0f;
    // 1: exponent of the entropy in the dynamic temperature (--dynatemp-exp). Must be finite.
    float dynatemp_exponent = 1.0f;

    // --- truncation ----------------------------------------------------------------------------
    // 40: keep the 40 most likely tokens; 0 disables the filter. Must be >= 0.
    int top_k = 40;
    // 0.95: keep the smallest set of most likely tokens whose probability sums to >= 0.95; 1 disables.
    // Must be in (0, 1].
    float top_p = 0.95f;
    // 0.05: drop tokens less likely than 0.05 times the most likely one; 0 disables. Must be in [0, 1].
    float min_p = 0.05f;
    // 1: locally typical sampling mass (--typical); 1 disables. Must be in (0, 1].
    float typical_p = 1.0f;
    // -1: top-n-sigma, keep logits >= max - n * sigma (--top-n-sigma); <= 0 disables. Must be finite.
    float top_n_sigma = -1.0f;
    // 0: epsilon cutoff (HF's epsilon_cutoff): drop tokens with probability < epsilon; 0 disables.
    // Must be in [0, 1).
    float epsilon_cutoff = 0.0f;
    // 0: eta cutoff (HF's eta_cutoff); 0 disables. Must be in [0, 1).
    float eta_cutoff = 0.0f;
    // 0: XTC probability of excluding the top choices at each draw (--xtc-probability); 0 disables.
    // Must be in [0, 1].
    float xtc_probability = 0.0f;
    // 0.1: XTC threshold (--xtc-threshold); > 0.5 disables. Must be in [0, 1].
    float xtc_threshold = 0.1f;
    // 1: top-p, min-p, typical, XTC, epsilon and eta keep at least this many tokens. llama.cpp's default
    // is 0, which these filters treat exactly as 1 (they always keep the most likely token).
    std::size_t min_keep = 1;

    // --- repetition ----------------------------------------------------------------------------
    // 1: CTRL repetition penalty (--repeat-penalty); 1 disables. Must be finite and > 0.
    float repeat_penalty = 1.0f;
    // 0: OpenAI frequency penalty, times the count in the window (--frequency-penalty). Finite.
    float frequency_penalty = 0.0f;
    // 0: OpenAI presence penalty, once per token seen in the window (--presence-penalty). Finite.
    float presence_penalty = 0.0f;
    // 64: the penalties look at the last 64 tokens (--repeat-last-n); -1 = the whole sequence, 0
    // disables the penalties. Must be >= -1.
    std::int32_t repeat_last_n = 64;
    // true: prompt tokens count for the penalties, DRY and no-repeat-n-gram (llama.cpp and HF do by
    // default); false: only generated tokens do.
    bool penalize_prompt = true;
    // 0: DRY multiplier (--dry-multiplier); 0 disables DRY. Must be finite.
    float dry_multiplier = 0.0f;
    // 1.75: DRY base (--dry-base); < 1 disables DRY. Must be finite.
    float dry_base = 1.75f;
    // 2: repetitions longer than this are penalized by DRY (--dry-allowed-length). Must be >= 1.
    std::int32_t dry_allowed_length = 2;
    // -1: DRY looks at the last N tokens; -1 = the whole sequence, 0 disables DRY. Must be >= -1.
    std::int32_t dry_penalty_last_n = -1;
    // {}: DRY sequence breakers as token sequences (head first). generation_options adds llama.cpp's
    // string breakers ("\n", ":", "\"", "*") converted with the tokenizer.
    std::vector<std::vector<token_id>> dry_sequence_breakers;
    // 0: no-repeat-n-gram size (HF's no_repeat_ngram_size); 0 disables. Must be >= 0.
    std::int32_t no_repeat_ngram_size = 0;

    // --- constraints (always applied first, in this order) --------------------------------------
    // {}: bias added to the logits of given tokens (--logit-bias ID=BIAS); -inf bans a token.
    std::vector<token_bias> logit_bias;
    // {}: token sequences that may never be generated (HF's bad_words_ids).
    std::vector<std::vector<token_id>> banned_sequences;

    // --- selector ------------------------------------------------------------------------------
    // 0: 1 = mirostat v1, 2 = mirostat v2 (--mirostat). With mirostat the chain is, as in llama.cpp,
    // the constraints, temperature and the mirostat selector: the other stages do not run.
    int mirostat = 0;
    // 5: mirostat target surprise tau (--mirostat-ent). Must be finite.
    float mirostat_tau = 5.0f;
    // 0.1: mirostat learning rate eta (--mirostat-lr). Must be finite.
    float mirostat_eta = 0.1f;
    // 0: the seed of every random draw (categorical, XTC, mirostat). Same options and seed -> same
    // tokens. llama.cpp's default (0xFFFFFFFF) means "a random seed"; ours is fixed on purpose
    // (determinism): pass your own, e.g. from std::random_device, for varied output.
    std::uint64_t seed = 0;

    // llama_cpp_order(): the order of the configurable stages (--samplers); see sampler_order.hpp. An
    // empty order runs only the constraints and the draw (at temperature 1).
    std::vector<sampler_stage> sampler_order = llama_cpp_order();

    // Throws invalid_argument_error naming the first bad field and its value.
    NEXTTOK_DECL void validate() const;

private:
    [[noreturn]] NEXTTOK_DECL static void fail_(const char* field, const std::string& value, const char* rule);
};

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/sampling/impl/sampling_options.ipp>
#endif
