// The definitions of random_model.hpp: the layout of the weights in one buffer and their random values.
#pragma once

#include <nexttok/detail/splitmix64.hpp>
#include <nexttok/error.hpp>
#include <nexttok/model/model.hpp>
#include <nexttok/model/random_model.hpp>
#include <nexttok/tensor/quant_blocks.hpp>
#include <nexttok/tensor/weight_types.hpp>

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

namespace nexttok {

namespace detail {

// Writes n_bytes of random bytes at dst.
NEXTTOK_DECL void random_bytes(std::uint64_t& state, std::byte* dst, std::uint64_t n_bytes) noexcept {
    for (std::uint64_t i = 0; i < n_bytes; i += 8) {
        const std::uint64_t r = splitmix64_next(state);
        std::memcpy(dst + i, &r, std::min<std::uint64_t>(8, n_bytes - i));
    }
}

// Random quantized blocks: random quants and scales, then the block's float scale(s) set so that
// values stay within about +-`scale`, as trained weights of a row of this length would.
template <class Block>
void random_blocks(std::uint64_t& state, std::byte* dst, std::uint64_t n_blocks, float scale) noexcept {
    random_bytes(state, dst, n_blocks * sizeof(Block));
    for (std::uint64_t b = 0; b < n_blocks; ++b) {
        Block& block = *reinterpret_cast<Block*>(dst + b * sizeof(Block));
        if constexpr (std::is_same_v<Block, block_q8_0>) block.d = packed_half::from_float(scale / 127.0f);
        if constexpr (std::is_same_v<Block, block_q4_0>) block.d = packed_half::from_float(scale / 8.0f);
        if constexpr (std::is_same_v<Block, block_q4_k> || std::is_same_v<Block, block_q5_k>) {
            constexpr float q_mid = std::is_same_v<Block, block_q4_k> ? 7.5f : 15.5f;  // quants 0..15 or 0..31
            const float d = scale / (63.0f * q_mid);
            block.d = packed_half::from_float(d);
            block.dmin = packed_half::from_float(d * q_mid);  // centers d * sc * q - dmin * m near 0
        }
        if constexpr (std::is_same_v<Block, block_q6_k>) block.d = packed_half::from_float(scale / (64.0f * 32.0f));
        if constexpr (std::is_same_v<Block, block_q4_1> || std::is_same_v<Block, block_q5_1>) {
            constexpr float q_mid = std::is_same_v<Block, block_q4_1> ? 7.5f : 15.5f;  // quants 0..15 or 0..31
            block.d = packed_half::from_float(scale / q_mid);
            block.m = packed_half::from_float(-scale);  // centers d * q + m near 0
        }
        if constexpr (std::is_same_v<Block, block_q5_0>) block.d = packed_half::from_float(scale / 16.0f);
        if constexpr (std::is_same_v<Block, block_iq4_nl>) block.d = packed_half::from_float(scale / 127.0f);
        if constexpr (std::is_same_v<Block, block_q2_k>) {  // d * sc * q - dmin * m: sc, m 0..15, q 0..3
            const float d = scale / (15.0f * 1.5f);
            block.d = packed_half::from_float(d);
            block.dmin = packed_half::from_float(d * 1.5f);  // centers it near 0
        }
        if constexpr (std::is_same_v<Block, block_q3_k>) block.d = packed_half::from_float(scale / (32.0f * 4.0f));
        if constexpr (std::is_same_v<Block, block_iq4_xs>) block.d = packed_half::from_float(scale / (32.0f * 127.0f));
    }
}

// Tensor t named `name`, of (rows, cols) elements of type tt (rows 0: a vector), placed at byte
// `total` of the buffer to come; total moves past it, to the next multiple of 64.
NEXTTOK_DECL void plan_random_tensor(tensor_view& t, std::string name, std::int64_t rows, std::int64_t cols,
                                     tensor_type tt, std::size_t& total) {
    t.name = std::move(name);
    t.type = tt;
    t.n_dims = rows == 0 ? 1 : 2;
    t.ne = {static_cast<std::uint64_t>(cols), static_cast<std::uint64_t>(rows == 0 ? 1 : rows), 1, 1};
    const auto tr = *find_tensor_type_traits(static_cast<std::uint32_t>(tt));
    if (t.ne[0] % tr.block_size != 0)
        throw invalid_argument_error("<random model>: tensor '" + t.name + "': rows of " + std::to_string(cols) +
                                     " are not a multiple of the " + std::string(tr.name) + " block size " +
                                     std::to_string(tr.block_size));
    t.n_bytes = t.n_elements() / tr.block_size * tr.block_bytes;
    t.file_offset = total;
    total += (t.n_bytes + 63) / 64 * 64;
}

// t's bytes (at t.data, writable): ones, or random values of magnitude 1/sqrt(cols): dense
// elements uniform in +-1/sqrt(cols) (one draw each), quantized blocks by random_blocks.
NEXTTOK_DECL void fill_random_tensor(const tensor_view& t, std::uint64_t& state, bool ones) {
    std::byte* dst = const_cast<std::byte*>(t.data);
    const float scale = 1.0f / std::sqrt(static_cast<float>(t.cols()));
    visit_weight_type(t, "<random model>", [&]<class W>(std::type_identity<W>) {
        if constexpr (quant_block<W>) {
            random_blocks<W>(state, dst, t.n_bytes / sizeof(W), scale);
        } else {
            for (std::uint64_t i = 0; i < t.n_elements(); ++i) {
                const double u = static_cast<double>(splitmix64_next(state) >> 11) * 0x1.0p-53;  // [0, 1)
                const W v(ones ? 1.0f : static_cast<float>((2.0 * u - 1.0) * scale));
                std::memcpy(dst + sizeof(W) * i, &v, sizeof(W));
            }
        }
    });
}

}  // namespace detail

NEXTTOK_DECL std::shared_ptr<const model> make_random_model(model_config c, std::uint64_t seed, tensor_type type,
                                                            bool repack) {
    if (c.head_dim == 0 && c.n_heads > 0) c.head_dim = c.dim / c.n_heads;
    if (c.rope_dim == 0) c.rope_dim = c.head_dim;
    c.validate("<random model>");
    if (c.norm != norm_kind::rms || c.positions == position_kind::learned || c.mlp != mlp_kind::swiglu)
        throw unsupported_error("<random model>: only the llama layout (RMSNorm, RoPE, SwiGLU) is generated");
    if (!supports_weight_type(type))
        throw unsupported_error("<random model>: weight type " + to_string(type) + " is not supported");

    // Plan the layout: every tensor 64-byte aligned in one buffer.
    model_weights w;
    w.layers.resize(static_cast<std::size_t>(c.n_layers));
    std::size_t total = 0;
    const auto plan = [&](tensor_view& t, std::string name, std::int64_t rows, std::int64_t cols, tensor_type tt) {
        detail::plan_random_tensor(t, std::move(name), rows, cols, tt, total);
    };
    plan(w.token_embd, "token_embd.weight", c.vocab_size, c.dim, type);
    for (std::int64_t i = 0; i < c.n_layers; ++i) {
        layer_weights& l = w.layers[static_cast<std::size_t>(i)];
        const std::string p = "blk." + std::to_string(i) + ".";
        plan(l.attn_norm, p + "attn_norm.weight", 0, c.dim, tensor_type::f32);
        plan(l.attn_q, p + "attn_q.weight", c.q_dim(), c.dim, type);
        plan(l.attn_k, p + "attn_k.weight", c.kv_dim(), c.dim, type);
        plan(l.attn_v, p + "attn_v.weight", c.kv_dim(), c.dim, type);
        plan(l.attn_output, p + "attn_output.weight", c.dim, c.q_dim(), type);
        plan(l.ffn_norm, p + "ffn_norm.weight", 0, c.dim, tensor_type::f32);
        plan(l.ffn_gate, p + "ffn_gate.weight", c.hidden_dim, c.dim, type);
        plan(l.ffn_up, p + "ffn_up.weight", c.hidden_dim, c.dim, type);
        plan(l.ffn_down, p + "ffn_down.weight", c.dim, c.hidden_dim, type);
    }
    plan(w.output_norm, "output_norm.weight", 0, c.dim, tensor_type::f32);
    if (!c.tied_output) plan(w.output, "output.weight", c.vocab_size, c.dim, type);

    // Fill it, tensor by tensor in the order above, from one random stream.
    model::memory_buffer buf = model::memory_buffer::allocate(total, "<random model>");
    std::uint64_t state = seed;
    const auto fill = [&](tensor_view& t, bool ones) {
        t.data = buf.bytes.get() + t.file_offset;
        detail::fill_random_tensor(t, state, ones);
    };
    fill(w.token_embd, false);
    for (layer_weights& l : w.layers) {
        fill(l.attn_norm, true);
        for (tensor_view* t : {&l.attn_q, &l.attn_k, &l.attn_v, &l.attn_output}) fill(*t, false);
        fill(l.ffn_norm, true);
        for (tensor_view* t : {&l.ffn_gate, &l.ffn_up, &l.ffn_down}) fill(*t, false);
    }
    fill(w.output_norm, true);
    if (c.tied_output)
        w.output = w.token_embd;
    else
        fill(w.output, false);
    return std::make_shared<const model>(c, std::move(w), model::source(std::move(buf)), repack);
}

}  // namespace nexttok
