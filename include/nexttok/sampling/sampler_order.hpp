// The order of the configurable stages in a chain built from sampling_options, and its text forms.
//
// llama_cpp_order (the default) is llama.cpp's default sampler sequence (common_params_sampling:
// penalties, DRY, top-n-sigma, top-k, typical, top-p, min-p, XTC, temperature) with the stages
// llama.cpp lacks slotted in: no-repeat-n-gram after the penalties, epsilon and eta after min-p.
// hf_order is Hugging Face generate()'s: the processors first (repetition penalty, no-repeat-n-gram),
// then the warpers in the order _get_logits_processor adds them: temperature, top-k, top-p, min-p,
// typical, epsilon, eta (DRY, top-n-sigma and XTC, which HF lacks, are placed where they act alike).
// Temperature first means the truncation filters see the tempered distribution, which changes which
// tokens top-p, min-p, typical, epsilon and eta keep (top-k is unaffected).
//
// Text forms, as llama.cpp's --samplers (names separated by ';' or ',') and --sampling-seq (one
// character per stage). Names and characters accepted:
//   penalties (e) | dry (d) | top_n_sigma, top-n-sigma (s) | top_k, top-k (k) |
//   typ_p, typical_p, typical-p, typical, typ (y) | top_p, top-p, nucleus (p) | min_p, min-p (m) |
//   xtc (x) | temperature, temp (t) | epsilon, epsilon_cutoff (c) | eta, eta_cutoff (a) |
//   no_repeat_ngram, no-repeat-ngram (n)
// plus the whole-order names "llama" and "hf". Stages left out of an order do not run, whatever their
// parameters (as in llama.cpp). Logit bias, banned sequences and min-new-tokens are not stages of the
// order: they always run first (llama.cpp applies the logit bias before the chain too).
#pragma once

#include <nexttok/detail/config.hpp>
#include <nexttok/error.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace nexttok {

enum class sampler_stage : std::uint8_t {
    penalties,
    dry,
    top_n_sigma,
    top_k,
    typical_p,
    top_p,
    min_p,
    xtc,
    temperature,
    epsilon,
    eta,
    no_repeat_ngram,
};

NEXTTOK_DECL const std::vector<sampler_stage>& llama_cpp_order();

NEXTTOK_DECL const std::vector<sampler_stage>& hf_order();

// The canonical name ("top_k", "typ_p", ...), as llama.cpp prints it where it has the stage.
constexpr std::string_view to_string(sampler_stage s) noexcept {
    switch (s) {
        case sampler_stage::penalties:
            return "penalties";
        case sampler_stage::dry:
            return "dry";
        case sampler_stage::top_n_sigma:
            return "top_n_sigma";
        case sampler_stage::top_k:
            return "top_k";
        case sampler_stage::typical_p:
            return "typ_p";
        case sampler_stage::top_p:
            return "top_p";
        case sampler_stage::min_p:
            return "min_p";
        case sampler_stage::xtc:
            return "xtc";
        case sampler_stage::temperature:
            return "temperature";
        case sampler_stage::epsilon:
            return "epsilon";
        case sampler_stage::eta:
            return "eta";
        case sampler_stage::no_repeat_ngram:
            return "no_repeat_ngram";
    }
    return "unknown";
}

namespace detail {

struct stage_name {
    std::string_view name;
    sampler_stage stage;
};

inline constexpr std::array<stage_name, 28> stage_names{{
    {"penalties", sampler_stage::penalties},
    {"dry", sampler_stage::dry},
    {"top_n_sigma", sampler_stage::top_n_sigma},
    {"top-n-sigma", sampler_stage::top_n_sigma},
    {"top_k", sampler_stage::top_k},
    {"top-k", sampler_stage::top_k},
    {"typ_p", sampler_stage::typical_p},
    {"typical_p", sampler_stage::typical_p},
    {"typical-p", sampler_stage::typical_p},
    {"typical", sampler_stage::typical_p},
    {"typ-p", sampler_stage::typical_p},
    {"typ", sampler_stage::typical_p},
    {"top_p", sampler_stage::top_p},
    {"top-p", sampler_stage::top_p},
    {"nucleus", sampler_stage::top_p},
    {"min_p", sampler_stage::min_p},
    {"min-p", sampler_stage::min_p},
    {"xtc", sampler_stage::xtc},
    {"temperature", sampler_stage::temperature},
    {"temp", sampler_stage::temperature},
    {"epsilon", sampler_stage::epsilon},
    {"epsilon_cutoff", sampler_stage::epsilon},
    {"eta", sampler_stage::eta},
    {"eta_cutoff", sampler_stage::eta},
    {"no_repeat_ngram", sampler_stage::no_repeat_ngram},
    {"no-repeat-ngram", sampler_stage::no_repeat_ngram},
    {"repetition_penalty", sampler_stage::penalties},
    {"temp_ext", sampler_stage::temperature},
}};

constexpr char to_char(sampler_stage s) noexcept {
    switch (s) {
        case sampler_stage::penalties:
            return 'e';
        case sampler_stage::dry:
            return 'd';
        case sampler_stage::top_n_sigma:
            return 's';
        case sampler_stage::top_k:
            return 'k';
        case sampler_stage::typical_p:
            return 'y';
        case sampler_stage::top_p:
            return 'p';
        case sampler_stage::min_p:
            return 'm';
        case sampler_stage::xtc:
            return 'x';
        case sampler_stage::temperature:
            return 't';
        case sampler_stage::epsilon:
            return 'c';
        case sampler_stage::eta:
            return 'a';
        case sampler_stage::no_repeat_ngram:
            return 'n';
    }
    return '?';
}

}  // namespace detail

// Parses "penalties;dry;top_k;temperature" (';' or ',' separated, surrounding spaces ignored), or the
// whole-order names "llama" / "hf". Throws invalid_argument_error naming an unknown entry, or for an
// empty list or a stage listed twice.
NEXTTOK_DECL std::vector<sampler_stage> parse_sampler_order(std::string_view text);

// Parses llama.cpp's one-character form ("edskypmxt" is llama.cpp's default), see the table above.
NEXTTOK_DECL std::vector<sampler_stage> parse_sampler_chars(std::string_view chars);

// "penalties;dry;..." (the form parse_sampler_order reads back).
NEXTTOK_DECL std::string format_sampler_order(const std::vector<sampler_stage>& order);

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/sampling/impl/sampler_order.ipp>
#endif
