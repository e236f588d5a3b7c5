// The definitions of sampler_order.hpp: the orders and the parsers of their text forms.
#pragma once

#include <nexttok/sampling/sampler_order.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace nexttok {

NEXTTOK_DECL const std::vector<sampler_stage>& llama_cpp_order() {
    using s = sampler_stage;
    static const std::vector<sampler_stage> order{s::penalties, s::no_repeat_ngram, s::dry,   s::top_n_sigma, s::top_k,
                                                  s::typical_p, s::top_p,           s::min_p, s::epsilon,     s::eta,
                                                  s::xtc,       s::temperature};
    return order;
}

NEXTTOK_DECL const std::vector<sampler_stage>& hf_order() {
    using s = sampler_stage;
    static const std::vector<sampler_stage> order{
        s::penalties, s::no_repeat_ngram, s::dry,     s::temperature, s::top_k,       s::top_p,
        s::min_p,     s::typical_p,       s::epsilon, s::eta,         s::top_n_sigma, s::xtc};
    return order;
}

NEXTTOK_DECL std::vector<sampler_stage> parse_sampler_order(std::string_view text) {
    auto trim = [](std::string_view s) {
        while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
        while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
        return s;
    };
    const std::string_view whole = trim(text);
    if (whole == "llama" || whole == "llama.cpp") return llama_cpp_order();
    if (whole == "hf" || whole == "huggingface") return hf_order();
    std::vector<sampler_stage> order;
    while (true) {
        const std::size_t end = text.find_first_of(";,");
        const std::string_view name = trim(text.substr(0, end));
        if (!name.empty()) {
            bool found = false;
            for (const auto& n : detail::stage_names) {
                if (n.name != name) continue;
                for (sampler_stage s : order)
                    if (s == n.stage)
                        throw invalid_argument_error("samplers: '" + std::string(name) + "' is listed twice");
                order.push_back(n.stage);
                found = true;
                break;
            }
            if (!found)
                throw invalid_argument_error(
                    "samplers: unknown sampler '" + std::string(name) +
                    "' (expected penalties, dry, top_n_sigma, top_k, typ_p, top_p, min_p, xtc, "
                    "temperature, epsilon, eta, no_repeat_ngram, or llama / hf)");
        }
        if (end == std::string_view::npos) break;
        text.remove_prefix(end + 1);
    }
    if (order.empty()) throw invalid_argument_error("samplers: the list is empty");
    return order;
}

NEXTTOK_DECL std::vector<sampler_stage> parse_sampler_chars(std::string_view chars) {
    std::vector<sampler_stage> order;
    for (char ch : chars) {
        bool found = false;
        for (std::uint8_t i = 0; i <= static_cast<std::uint8_t>(sampler_stage::no_repeat_ngram); ++i) {
            const auto s = static_cast<sampler_stage>(i);
            if (detail::to_char(s) != ch) continue;
            for (sampler_stage seen : order)
                if (seen == s) throw invalid_argument_error(std::string("sampling-seq: '") + ch + "' is listed twice");
            order.push_back(s);
            found = true;
        }
        if (!found)
            throw invalid_argument_error(std::string("sampling-seq: unknown sampler character '") + ch +
                                         "' (expected one of edskypmxtcan)");
    }
    if (order.empty()) throw invalid_argument_error("sampling-seq: the sequence is empty");
    return order;
}

NEXTTOK_DECL std::string format_sampler_order(const std::vector<sampler_stage>& order) {
    std::string out;
    for (sampler_stage s : order) {
        if (!out.empty()) out += ';';
        out += to_string(s);
    }
    return out;
}

}  // namespace nexttok
