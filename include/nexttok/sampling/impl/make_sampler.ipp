// The definitions of make_sampler.hpp: the chain of every stage sampling_options enables.
#pragma once

#include <nexttok/sampling/make_sampler.hpp>

#include <cstdint>
#include <utility>
#include <vector>

namespace nexttok {
namespace detail {

// Appends the stage `s` if the options enable it. `greedy` skips the filters that keep the argmax.
inline void add_stage(std::vector<any_processor>& out, sampler_stage s, const sampling_options& o, bool greedy) {
    switch (s) {
        case sampler_stage::penalties: {
            penalties p(o.repeat_last_n, o.repeat_penalty, o.frequency_penalty, o.presence_penalty, o.penalize_prompt);
            if (p.enabled()) out.emplace_back(std::move(p));
            break;
        }
        case sampler_stage::dry: {
            dry d(o.dry_multiplier, o.dry_base, o.dry_allowed_length, o.dry_penalty_last_n, o.dry_sequence_breakers,
                  o.penalize_prompt);
            if (d.enabled()) out.emplace_back(std::move(d));
            break;
        }
        case sampler_stage::no_repeat_ngram:
            if (o.no_repeat_ngram_size > 0)
                out.emplace_back(no_repeat_ngram(o.no_repeat_ngram_size, o.penalize_prompt));
            break;
        case sampler_stage::top_n_sigma:
            if (!greedy && o.top_n_sigma > 0.0f) out.emplace_back(top_n_sigma(o.top_n_sigma));
            break;
        case sampler_stage::top_k:
            if (!greedy && o.top_k > 0) out.emplace_back(top_k(static_cast<std::int32_t>(o.top_k)));
            break;
        case sampler_stage::typical_p:
            if (o.typical_p < 1.0f) out.emplace_back(typical_p(o.typical_p, o.min_keep));
            break;
        case sampler_stage::top_p:
            if (!greedy && o.top_p < 1.0f) out.emplace_back(top_p(o.top_p, o.min_keep));
            break;
        case sampler_stage::min_p:
            if (!greedy && o.min_p > 0.0f) out.emplace_back(min_p(o.min_p, o.min_keep));
            break;
        case sampler_stage::epsilon:
            if (!greedy && o.epsilon_cutoff > 0.0f) out.emplace_back(epsilon_cutoff(o.epsilon_cutoff, o.min_keep));
            break;
        case sampler_stage::eta:
            if (!greedy && o.eta_cutoff > 0.0f) out.emplace_back(eta_cutoff(o.eta_cutoff, o.min_keep));
            break;
        case sampler_stage::xtc:
            if (o.xtc_probability > 0.0f && o.xtc_threshold <= 0.5f)
                out.emplace_back(xtc(o.xtc_probability, o.xtc_threshold, o.min_keep, xtc_seed(o.seed)));
            break;
        case sampler_stage::temperature:
            if (o.dynatemp_range > 0.0f)
                out.emplace_back(dynamic_temperature(o.temperature, o.dynatemp_range, o.dynatemp_exponent));
            else if (o.temperature != 1.0f || greedy)
                out.emplace_back(temperature(o.temperature));
            break;
    }
}

}  // namespace detail

NEXTTOK_DECL dynamic_chain make_dynamic_chain(const sampling_options& options, std::vector<any_processor> extra) {
    options.validate();
    std::vector<any_processor> processors;
    processors.reserve(options.sampler_order.size() + extra.size() + 2);
    if (!options.logit_bias.empty()) processors.emplace_back(logit_bias(options.logit_bias));
    if (!options.banned_sequences.empty()) processors.emplace_back(banned_sequences(options.banned_sequences));
    for (auto& p : extra) processors.push_back(std::move(p));

    if (options.mirostat != 0) {
        processors.emplace_back(temperature(options.temperature));
        if (options.mirostat == 1)
            return dynamic_chain(std::move(processors),
                                 mirostat(options.mirostat_tau, options.mirostat_eta, options.seed));
        return dynamic_chain(std::move(processors),
                             mirostat_v2(options.mirostat_tau, options.mirostat_eta, options.seed));
    }
    const bool greedy_draw = options.temperature == 0.0f && options.dynatemp_range == 0.0f;
    for (sampler_stage s : options.sampler_order) detail::add_stage(processors, s, options, greedy_draw);
    // Greedy: the selector takes the argmax, also when the order has no temperature stage.
    if (greedy_draw) return dynamic_chain(std::move(processors), greedy{});
    return dynamic_chain(std::move(processors), categorical(options.seed));
}

NEXTTOK_DECL any_sampler make_sampler(const sampling_options& options, std::vector<any_processor> extra) {
    return any_sampler(make_dynamic_chain(options, std::move(extra)));
}

}  // namespace nexttok
