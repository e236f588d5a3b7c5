// The command-line flags of nexttok::generation_options, one flag per field, named after llama.cpp's
// where llama.cpp has the setting (and after Hugging Face's generate() argument otherwise), so that a
// llama.cpp or HF sampling setup can be reproduced flag for flag:
//
//   generation_options            flag                       llama.cpp / HF
//   max_new_tokens                -n, --n-predict            -n / max_new_tokens
//   max_length                    --max-length               HF max_length
//   min_new_tokens                --min-new-tokens           HF min_new_tokens
//   ignore_eos                    --ignore-eos               --ignore-eos
//   stop                          --stop STRING (repeatable) server "stop" / HF stop_strings
//   include_stop_string           --include-stop
//   stop_token_sequences          --stop-sequence IDS        (token ids, comma separated)
//   timeout                       --timeout MS
//   n_logprobs                    --logprobs N               server n_probs / OpenAI top_logprobs
//   n_samples                     --n-samples N              HF num_return_sequences / OpenAI n
//   context_shift                 --context-shift            --context-shift (generate only)
//   keep                          --keep N                   --keep (generate only)
//   dry_sequence_breakers         --dry-sequence-breaker S   --dry-sequence-breaker ("none" clears)
//   sampling.temperature          --temp, --temperature      --temp / temperature
//   sampling.dynatemp_range       --dynatemp-range           --dynatemp-range
//   sampling.dynatemp_exponent    --dynatemp-exp             --dynatemp-exp
//   sampling.top_k / top_p / min_p  --top-k / --top-p / --min-p
//   sampling.typical_p            --typical, --typical-p     --typical / typical_p
//   sampling.top_n_sigma          --top-n-sigma              --top-n-sigma
//   sampling.epsilon_cutoff       --epsilon-cutoff           HF epsilon_cutoff
//   sampling.eta_cutoff           --eta-cutoff               HF eta_cutoff
//   sampling.xtc_probability / xtc_threshold  --xtc-probability / --xtc-threshold
//   sampling.min_keep             --min-keep                 --min-keep
//   sampling.repeat_penalty       --repeat-penalty           --repeat-penalty / repetition_penalty
//   sampling.repeat_last_n        --repeat-last-n            --repeat-last-n
//   sampling.frequency_penalty / presence_penalty  --frequency-penalty / --presence-penalty
//   sampling.penalize_prompt      --no-penalize-prompt       (HF prompt_ignore_length)
//   sampling.dry_*                --dry-multiplier --dry-base --dry-allowed-length --dry-penalty-last-n
//   sampling.no_repeat_ngram_size --no-repeat-ngram-size     HF no_repeat_ngram_size
//   sampling.logit_bias           --logit-bias ID=BIAS       --logit-bias (ID+BIAS, ID-BIAS also read)
//   sampling.banned_sequences     --ban-sequence IDS         HF bad_words_ids
//   sampling.mirostat / _eta / _tau  --mirostat N --mirostat-lr --mirostat-ent
//   sampling.seed                 -s, --seed                 --seed
//   sampling.sampler_order        --samplers "a;b;c" | llama | hf, --sampling-seq CHARS
//
// Stop strings and DRY breakers understand the escapes \n \t \r \\ \" \' (as llama.cpp's -e).
//
// Speculative decoding (generate only; batch does not speculate), named after llama.cpp's flags:
//
//   drafter / speculative_options  flag                       llama.cpp / HF
//   model_drafter                  --draft-model FILE         -md, --model-draft / HF assistant_model
//   ngram_drafter(n_max)           --lookup-ngram N           HF max_matching_ngram_size
//   draft_max / draft_min          --draft-max / --draft-min  --draft-max / --draft-min
#pragma once

#include <nexttok/generation/generation_options.hpp>
#include <nexttok/sampling/sampler_order.hpp>
#include <nexttok/speculative/speculative_options.hpp>

#include <CLI/CLI.hpp>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace flags {

// Flags whose text needs parsing after CLI11 is done.
struct generation_flags {
    std::vector<std::string> logit_bias;      // "ID=BIAS"
    std::vector<std::string> ban_sequences;   // "ID,ID,..."
    std::vector<std::string> stop_sequences;  // "ID,ID,..."
    std::vector<std::string> dry_breakers;    // replaces the defaults when given
    std::string samplers;                     // "penalties;dry;..." or llama / hf
    std::string sampling_seq;                 // "edskypmxt"
    std::int64_t timeout_ms = 0;
    bool no_penalize_prompt = false;
};

inline std::string process_escapes(const std::string& s) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] != '\\' || i + 1 == s.size()) {
            out += s[i];
            continue;
        }
        switch (s[++i]) {
            case 'n':
                out += '\n';
                break;
            case 't':
                out += '\t';
                break;
            case 'r':
                out += '\r';
                break;
            case '\\':
                out += '\\';
                break;
            case '"':
                out += '"';
                break;
            case '\'':
                out += '\'';
                break;
            default:
                out += '\\';
                out += s[i];
                break;
        }
    }
    return out;
}

inline nexttok::token_id parse_id(const std::string& text, const std::string& flag) {
    std::size_t used = 0;
    long long v = -1;
    try {
        v = std::stoll(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used != text.size() || text.empty() || v < 0 || v > INT32_MAX)
        throw nexttok::invalid_argument_error(flag + ": '" + text + "' is not a token id");
    return static_cast<nexttok::token_id>(v);
}

inline std::vector<nexttok::token_id> parse_ids(const std::string& text, const std::string& flag) {
    std::vector<nexttok::token_id> ids;
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t end = text.find(',', start);
        ids.push_back(parse_id(text.substr(start, end == std::string::npos ? std::string::npos : end - start), flag));
        if (end == std::string::npos) break;
        start = end + 1;
    }
    return ids;
}

// "ID=BIAS", or llama.cpp's "ID+BIAS" / "ID-BIAS"; BIAS may be "inf" after the sign ("-inf" bans).
inline nexttok::token_bias parse_logit_bias(const std::string& text) {
    const std::size_t at = text.find_first_of("=+-");
    if (at == std::string::npos || at == 0)
        throw nexttok::invalid_argument_error("--logit-bias: '" + text + "' is not ID=BIAS");
    const nexttok::token_id id = parse_id(text.substr(0, at), "--logit-bias");
    std::string value = text.substr(text[at] == '=' ? at + 1 : at);
    float bias = 0.0f;
    std::size_t used = 0;
    try {
        bias = std::stof(value, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used != value.size() || value.empty() || std::isnan(bias))
        throw nexttok::invalid_argument_error("--logit-bias: '" + text + "': the bias is not a number");
    return {id, bias};
}

inline void add_generation_flags(CLI::App& app, nexttok::generation_options& g, generation_flags& f) {
    nexttok::sampling_options& s = g.sampling;
    // Length and stop conditions.
    app.add_option("-n,--n-predict", g.max_new_tokens,
                   "tokens to generate at most (-1: until EOS or the context is full)")
        ->capture_default_str();
    app.add_option("--max-length", g.max_length, "prompt + generated tokens at most (0: no limit)")
        ->capture_default_str();
    app.add_option("--min-new-tokens", g.min_new_tokens, "EOS cannot be drawn before this many tokens")
        ->capture_default_str();
    app.add_flag("--ignore-eos", g.ignore_eos, "never draw EOS, never stop at it");
    app.add_option("--stop", g.stop, "stop string, matched on the text across tokens (repeatable)")
        ->allow_extra_args(false);
    app.add_flag("--include-stop", g.include_stop_string, "keep the stop string at the end of the text");
    app.add_option("--stop-sequence", f.stop_sequences, "token ids ID,ID,... that stop generation (repeatable)")
        ->allow_extra_args(false);
    app.add_option("--timeout", f.timeout_ms, "wall-clock budget in milliseconds (0: none)")->capture_default_str();
    // Outputs.
    app.add_option("--logprobs", g.n_logprobs, "print the N most likely tokens and log-probabilities per step")
        ->capture_default_str();
    app.add_option("--n-samples", g.n_samples, "independent samples of the prompt, on one shared prefill")
        ->capture_default_str();
    // Sampling.
    app.add_option("--temperature,--temp", s.temperature, "sampling temperature (0: greedy)")->capture_default_str();
    app.add_option("--dynatemp-range", s.dynatemp_range, "dynamic temperature range (0: off)")->capture_default_str();
    app.add_option("--dynatemp-exp", s.dynatemp_exponent, "dynamic temperature exponent")->capture_default_str();
    app.add_option("--top-k", s.top_k, "keep the k most likely tokens (0: off)")->capture_default_str();
    app.add_option("--top-p", s.top_p, "nucleus sampling threshold (1: off)")->capture_default_str();
    app.add_option("--min-p", s.min_p, "drop tokens below min-p times the top probability (0: off)")
        ->capture_default_str();
    app.add_option("--typical,--typical-p", s.typical_p, "locally typical sampling mass (1: off)")
        ->capture_default_str();
    app.add_option("--top-n-sigma", s.top_n_sigma, "keep logits within n standard deviations of the top (<= 0: off)")
        ->capture_default_str();
    app.add_option("--epsilon-cutoff", s.epsilon_cutoff, "drop tokens with probability below epsilon (0: off)")
        ->capture_default_str();
    app.add_option("--eta-cutoff", s.eta_cutoff, "eta sampling epsilon (0: off)")->capture_default_str();
    app.add_option("--xtc-probability", s.xtc_probability, "XTC: chance of excluding the top choices (0: off)")
        ->capture_default_str();
    app.add_option("--xtc-threshold", s.xtc_threshold, "XTC: probability threshold of a top choice (> 0.5: off)")
        ->capture_default_str();
    app.add_option("--min-keep", s.min_keep, "top-p, min-p, typical, XTC, epsilon, eta keep at least this many")
        ->capture_default_str();
    app.add_option("--repeat-penalty", s.repeat_penalty, "repetition penalty (1: off)")->capture_default_str();
    app.add_option("--repeat-last-n", s.repeat_last_n, "tokens the penalties look at (-1: all, 0: off)")
        ->capture_default_str();
    app.add_option("--frequency-penalty", s.frequency_penalty, "frequency penalty (0: off)")->capture_default_str();
    app.add_option("--presence-penalty", s.presence_penalty, "presence penalty (0: off)")->capture_default_str();
    app.add_flag("--no-penalize-prompt", f.no_penalize_prompt, "penalties, DRY, no-repeat-n-gram ignore the prompt");
    app.add_option("--dry-multiplier", s.dry_multiplier, "DRY multiplier (0: off)")->capture_default_str();
    app.add_option("--dry-base", s.dry_base, "DRY base")->capture_default_str();
    app.add_option("--dry-allowed-length", s.dry_allowed_length, "DRY: longest repetition not penalized")
        ->capture_default_str();
    app.add_option("--dry-penalty-last-n", s.dry_penalty_last_n, "DRY: tokens looked at (-1: all, 0: off)")
        ->capture_default_str();
    app.add_option("--dry-sequence-breaker", f.dry_breakers,
                   "DRY sequence breaker, replaces the defaults \\n : \" * (repeatable; none: no breakers)")
        ->allow_extra_args(false);
    app.add_option("--no-repeat-ngram-size", s.no_repeat_ngram_size, "n-grams of this size never repeat (0: off)")
        ->capture_default_str();
    app.add_option("--logit-bias", f.logit_bias, "ID=BIAS added to a token's logit; ID=-inf bans it (repeatable)")
        ->allow_extra_args(false);
    app.add_option("--ban-sequence", f.ban_sequences, "token ids ID,ID,... never generated in a row (repeatable)")
        ->allow_extra_args(false);
    app.add_option("--mirostat", s.mirostat, "mirostat version: 0 off, 1, 2 (replaces the other samplers)")
        ->capture_default_str()
        ->check(CLI::Range(0, 2));
    app.add_option("--mirostat-lr", s.mirostat_eta, "mirostat learning rate eta")->capture_default_str();
    app.add_option("--mirostat-ent", s.mirostat_tau, "mirostat target entropy tau")->capture_default_str();
    app.add_option("-s,--seed", s.seed, "seed of every random draw")->capture_default_str();
    app.add_option("--samplers", f.samplers,
                   "sampler order, ';'-separated (penalties;dry;top_n_sigma;top_k;typ_p;top_p;min_p;xtc;temperature), "
                   "or llama / hf");
    app.add_option("--sampling-seq", f.sampling_seq,
                   "sampler order as characters (llama.cpp's edskypmxt; c epsilon, a eta, n no-repeat-ngram)");
}

// Generation past the end of the cache (generate only: the scheduler of batch has no context shift).
inline void add_context_flags(CLI::App& app, nexttok::generation_options& g) {
    app.add_flag(
        "--context-shift", g.context_shift,
        "when the context (--ctx-size) is full, keep the first --keep prompt tokens, drop half of the rest and go on, "
        "so that generation runs past the context (llama.cpp's context shift)");
    app.add_option("--keep", g.keep, "prompt tokens a context shift keeps, besides BOS (-1: the whole prompt)")
        ->capture_default_str()
        ->check(CLI::Range(std::int64_t{-1}, INT64_MAX));
}

// Throws nexttok::invalid_argument_error for malformed flag text.
inline void finish_generation_flags(nexttok::generation_options& g, const generation_flags& f) {
    for (auto& s : g.stop) s = process_escapes(s);
    for (const auto& b : f.logit_bias) g.sampling.logit_bias.push_back(parse_logit_bias(b));
    for (const auto& b : f.ban_sequences) g.sampling.banned_sequences.push_back(parse_ids(b, "--ban-sequence"));
    for (const auto& b : f.stop_sequences) g.stop_token_sequences.push_back(parse_ids(b, "--stop-sequence"));
    if (!f.dry_breakers.empty()) {
        g.dry_sequence_breakers.clear();
        for (const auto& b : f.dry_breakers)
            if (b != "none") g.dry_sequence_breakers.push_back(process_escapes(b));
    }
    if (!f.samplers.empty() && !f.sampling_seq.empty())
        throw nexttok::invalid_argument_error("give --samplers or --sampling-seq, not both");
    if (!f.samplers.empty()) g.sampling.sampler_order = nexttok::parse_sampler_order(f.samplers);
    if (!f.sampling_seq.empty()) g.sampling.sampler_order = nexttok::parse_sampler_chars(f.sampling_seq);
    if (f.timeout_ms < 0)
        throw nexttok::invalid_argument_error("--timeout: " + std::to_string(f.timeout_ms) + " ms: must be >= 0");
    g.timeout = std::chrono::milliseconds(f.timeout_ms);
    g.sampling.penalize_prompt = !f.no_penalize_prompt;
}

// Speculative decoding: at most one drafter, and how many tokens it drafts per round.
struct speculative_flags {
    std::string draft_model;                 // model file of the drafter; empty: no model drafter
    std::int64_t lookup_ngram = 0;           // n-gram lookup with n_max = N (down to 1); 0: off
    nexttok::speculative_options options;    // draft_max, draft_min (adaptive k, the library's default)
    const CLI::Option* draft_max = nullptr;  // the flags, to tell a value given from the default
    const CLI::Option* draft_min = nullptr;

    bool enabled() const noexcept { return !draft_model.empty() || lookup_ngram != 0; }
    // The drafter's flag, for messages.
    const char* drafter_flag() const noexcept { return draft_model.empty() ? "--lookup-ngram" : "--draft-model"; }
};

inline void add_speculative_flags(CLI::App& app, speculative_flags& f) {
    app.add_option("--draft-model,--model-draft", f.draft_model,
                   "speculative decoding with a draft model of --model's vocabulary (the same file works): the same "
                   "text when greedy, the same distribution when sampling")
        ->check(CLI::ExistingPath);
    app.add_option("--lookup-ngram", f.lookup_ngram,
                   "speculative decoding by prompt lookup: draft what followed the last N tokens (or N-1, ..., 1) "
                   "where they occurred before (0: off)")
        ->capture_default_str();
    f.draft_max = app.add_option("--draft-max", f.options.draft_max,
                                 "tokens drafted per round at most (k adapts between --draft-min and this)")
                      ->capture_default_str();
    f.draft_min = app.add_option("--draft-min", f.options.draft_min,
                                 "fewest tokens drafted per round when k shrinks after a rejection")
                      ->capture_default_str();
}

// Throws nexttok::invalid_argument_error for flags that contradict each other or a bad value.
inline void finish_speculative_flags(const speculative_flags& f, const nexttok::generation_options& g) {
    if (!f.draft_model.empty() && f.lookup_ngram != 0)
        throw nexttok::invalid_argument_error("give --draft-model or --lookup-ngram, not both (one drafter)");
    if (f.lookup_ngram < 0)
        throw nexttok::invalid_argument_error("--lookup-ngram " + std::to_string(f.lookup_ngram) +
                                              ": must be >= 1 (0: off)");
    if (!f.enabled()) {
        if (f.draft_max->count() > 0 || f.draft_min->count() > 0)
            throw nexttok::invalid_argument_error(
                "--draft-max and --draft-min need a drafter: give --draft-model or --lookup-ngram");
        return;
    }
    f.options.validate();
    if (g.n_samples != 1)
        throw nexttok::invalid_argument_error("--n-samples " + std::to_string(g.n_samples) +
                                              ": speculative decoding (" + f.drafter_flag() + ") generates one sample");
}

}  // namespace flags
