// The definitions of buffers.hpp: sizing the kernels' scratch (outside the token loop).
#pragma once

#include <nexttok/kernels/buffers.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace nexttok {

NEXTTOK_DECL void q8_activations::resize(std::int64_t n_tokens, std::int64_t n) {
    n_ = n;
    const std::int64_t full = lines(n), quarter = lines(n / 8), quads = lines((n + 127) / 128 * 128);
    const std::int64_t octets = lines((n + 255) / 256 * 256);
    const std::int64_t groups = (n + 511) / 512, r16_qs = lines(512 * groups), r16_blocks = lines(64 * groups);
    row_lines_ = 4 * full + quarter + lines(n / 64) + lines(n / 16) + lines(n / 8) + 2 * quads + octets +
                 2 * lines(octets * 64 / 4) + r16_qs + 3 * r16_blocks;
    const auto size = static_cast<std::size_t>(n_tokens * row_lines_);
    if (store_.size() < size) store_.resize(size);
    rows_.resize(static_cast<std::size_t>(n_tokens));
    for (std::int64_t t = 0; t < n_tokens; ++t) {
        // (By pointer, not store_[]: rows of no columns have no lines, and store_ may be empty.)
        auto* at = reinterpret_cast<std::byte*>(store_.data() + t * row_lines_);
        auto take = [&at](std::int64_t n_lines) {
            std::byte* p = at;
            at += 64 * n_lines;
            return p;
        };
        q8_act_row& r = rows_[static_cast<std::size_t>(t)];
        r.qs = reinterpret_cast<std::int8_t*>(take(full));
        r.minus8_sums = reinterpret_cast<std::int32_t*>(take(full));
        r.lane_scales = reinterpret_cast<float*>(take(full));
        r.dsum = reinterpret_cast<float*>(take(quarter));
        r.quad_qs = reinterpret_cast<std::int8_t*>(take(quads));
        r.quad_minus128_sums = reinterpret_cast<std::int32_t*>(take(quads));
        r.quad_lane_scales = reinterpret_cast<float*>(r.quad_minus128_sums + (quads * 64) / 8);
        r.q8k_qs = reinterpret_cast<std::int8_t*>(take(full));
        r.q8k_scales = reinterpret_cast<float*>(take(lines(n / 64)));
        r.q8k_block_sums = reinterpret_cast<std::int16_t*>(take(lines(n / 16)));
        r.q8k_sums16 = reinterpret_cast<std::int16_t*>(take(lines(n / 8)));
        r.octet_qs = reinterpret_cast<std::int8_t*>(take(octets));
        r.octet_minus8_sums = reinterpret_cast<std::int32_t*>(take(lines(octets * 64 / 4)));
        r.octet_lane_scales = reinterpret_cast<float*>(take(lines(octets * 64 / 4)));
        r.r16_qs = reinterpret_cast<std::int8_t*>(take(r16_qs));
        r.r16_minus128_sums = reinterpret_cast<std::int32_t*>(take(r16_blocks));
        r.r16_minus8_sums = reinterpret_cast<std::int32_t*>(take(r16_blocks));
        r.r16_scales = reinterpret_cast<float*>(take(r16_blocks));
    }
}

NEXTTOK_DECL void matmul_workspace::reserve(std::int64_t n_tokens, std::int64_t cols) {
    if (n_tokens > reserved_tokens_ || cols > reserved_cols_) {
        reserved_tokens_ = std::max(n_tokens, reserved_tokens_);
        reserved_cols_ = std::max(cols, reserved_cols_);
        act_.resize(reserved_tokens_, reserved_cols_);
        if (reserved_tokens_ > 1) grow(packed_tokens_, reserved_tokens_ * reserved_cols_);
    }
}

NEXTTOK_DECL q8_activations& matmul_workspace::activations(std::int64_t n_tokens, std::int64_t cols) {
    reserve(n_tokens, cols);
    act_.resize(n_tokens, cols);  // within the reserved storage: no allocation
    return act_;
}

NEXTTOK_DECL float* matmul_workspace::packed_tokens(std::int64_t n_tokens, std::int64_t cols) {
    reserve(n_tokens, cols);
    grow(packed_tokens_, n_tokens * cols);
    return packed_tokens_.data();
}

NEXTTOK_DECL bf16_act* matmul_workspace::rounded_tokens(std::int64_t n_tokens, std::int64_t cols) {
    grow(rounded_, n_tokens * cols);
    return rounded_.data();
}

NEXTTOK_DECL float* matmul_workspace::packed_rows(int thread, int n_threads, std::int64_t floats) {
    const auto threads = static_cast<std::size_t>(n_threads);
    if (packed_rows_.size() < threads) packed_rows_.resize(threads);
    auto& rows = packed_rows_[static_cast<std::size_t>(thread)];
    grow(rows, floats);
    return rows.data();
}

NEXTTOK_DECL void attention_workspace::reserve(const attention_shape& s, int n_threads, std::int64_t max_positions) {
    group_ = s.n_heads / s.n_kv_heads;
    positions_ = max_positions;
    scores_.resize(static_cast<std::size_t>(n_threads * group_ * max_positions));
    outputs_.resize(static_cast<std::size_t>(n_threads * group_ * s.head_dim));
    head_dim_ = s.head_dim;
}

}  // namespace nexttok
