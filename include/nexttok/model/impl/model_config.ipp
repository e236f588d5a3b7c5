// The definitions of model_config (model_config.hpp): the checks of the hyper-parameters.
#pragma once

#include <nexttok/error.hpp>
#include <nexttok/model/model_config.hpp>

#include <cstdint>
#include <string>

namespace nexttok {

NEXTTOK_DECL void model_config::validate(const std::string& file) const {
    auto fail = [&](const std::string& what) {
        throw format_error(file + ": hyper-parameters: " + what);
    };
    auto positive = [&](std::int64_t v, const char* name, std::int64_t max) {
        if (v <= 0 || v > max)
            fail(std::string(name) + " = " + std::to_string(v) + " (expected 1.." + std::to_string(max) + ")");
    };
    positive(vocab_size, "vocab_size", std::int64_t{1} << 24);
    positive(dim, "dim", std::int64_t{1} << 20);
    positive(hidden_dim, "hidden_dim", std::int64_t{1} << 22);
    positive(n_layers, "n_layers", 4096);
    positive(n_heads, "n_heads", 4096);
    positive(n_kv_heads, "n_kv_heads", 4096);
    positive(head_dim, "head_dim", 1024);
    positive(max_seq_len, "max_seq_len", std::int64_t{1} << 24);
    if (n_heads % n_kv_heads != 0)
        fail("n_heads = " + std::to_string(n_heads) +
             " is not a multiple of n_kv_heads = " + std::to_string(n_kv_heads));
    if (positions != position_kind::learned && (rope_dim <= 0 || rope_dim > head_dim || rope_dim % 2 != 0))
        fail("rope_dim = " + std::to_string(rope_dim) + " (expected an even number in 2.." + std::to_string(head_dim) +
             ")");
    if (!(rope_theta > 0.0f)) fail("rope_theta = " + std::to_string(rope_theta) + " (expected > 0)");
    if (positions != position_kind::learned) rope_scaling.validate(file, rope_dim);
    if (!(norm_eps > 0.0f) || !(norm_eps < 1.0f))
        fail("norm_eps = " + std::to_string(norm_eps) + " (expected in (0, 1))");
}

}  // namespace nexttok
