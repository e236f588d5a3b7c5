// The Llama-family decoder: forward(tokens, positions, cache) -> logits. Templated on Scalar, the
// type in which the KV cache and the inputs of every weight product are stored (float,
// Eigen::half, Eigen::bfloat16). Everything that accumulates (dot products, the residual stream,
// norms, softmax) is float. One forward call takes the whole prompt (prefill: each weight row
// serves a tile of tokens) or one token (decode); both give bitwise the same numbers for a token.
//
// Ownership: shares the immutable model; owns its thread pool and scratch buffers, so one decoder
// serves one caller at a time (not thread-safe). Scratch grows in reserve(), never in the loop.
#pragma once

#include <nexttok/cache/kv_storage.hpp>
#include <nexttok/error.hpp>
#include <nexttok/kernels/dot.hpp>
#include <nexttok/kernels/matmul.hpp>
#include <nexttok/kernels/ops.hpp>
#include <nexttok/kernels/thread_pool.hpp>
#include <nexttok/model/model.hpp>
#include <nexttok/types.hpp>

#include <Eigen/Core>

#include <cmath>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace nexttok {

// Which positions of a forward call produce logits.
enum class logits_for { last, all };

template <class Scalar>
class decoder {
public:
    using scalar_type = Scalar;

    explicit decoder(std::shared_ptr<const model> m, int n_threads = 1)
        : model_(std::move(m)), pool_(n_threads) {
        if (!model_) throw invalid_argument_error("decoder: null model");
        const model_config& c = model_->config();
        const model_weights& w = model_->weights();
        // Norm weights are tiny: converted to float once here; matrices stay in the file's format.
        auto to_floats = [&](const tensor_view& t) {
            std::vector<float> v(static_cast<std::size_t>(t.cols()));
            read_row(t, 0, v.data());
            return v;
        };
        for (const layer_weights& l : w.layers) {
            attn_norm_.push_back(to_floats(l.attn_norm));
            ffn_norm_.push_back(to_floats(l.ffn_norm));
        }
        output_norm_ = to_floats(w.output_norm);
        attn_scale_ = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
        reserve(1);
    }

    decoder(const decoder&) = delete;
    decoder& operator=(const decoder&) = delete;

    const model_config& config() const noexcept { return model_->config(); }
    const std::shared_ptr<const model>& get_model() const noexcept { return model_; }
    int n_threads() const noexcept { return pool_.size(); }

    // Sizes the scratch buffers for forward calls of up to n_tokens tokens attending to up to
    // max_positions positions. forward() calls it when needed; call it up front to keep
    // allocation out of a generation loop.
    void reserve(std::int64_t n_tokens, std::int64_t max_positions = 0) {
        const model_config& c = config();
        if (max_positions < n_tokens) max_positions = n_tokens;
        if (n_tokens <= reserved_tokens_ && max_positions <= reserved_positions_) return;
        reserved_tokens_ = std::max(reserved_tokens_, n_tokens);
        reserved_positions_ = std::max(reserved_positions_, max_positions);
        const auto n = static_cast<std::size_t>(reserved_tokens_);
        x_.resize(n * c.dim);
        xb_.resize(n * c.dim);
        q_.resize(n * c.q_dim());
        k_.resize(n * c.kv_dim());
        v_.resize(n * c.kv_dim());
        att_.resize(n * c.q_dim());
        proj_.resize(n * c.dim);
        gate_.resize(n * c.hidden_dim);
        up_.resize(n * c.hidden_dim);
        hb_.resize(n * c.hidden_dim);
        rope_.resize(n * c.rope_dim);
        scores_.resize(static_cast<std::size_t>(pool_.size()) * reserved_positions_);
    }

    // Runs tokens[i] at position pos0 + i, writing their keys and values into `cache` and reading
    // the cached positions [0, pos0) too. Writes logits (vocab_size floats per row) for the last
    // token, or for every token (`which == all`, tokens.size() rows), into `logits`.
    template <kv_storage<Scalar> Cache>
    void forward(std::span<const token_id> tokens, std::int64_t pos0, Cache& cache, std::span<float> logits,
                 logits_for which = logits_for::last) {
        const model_config& c = config();
        const auto n = static_cast<std::int64_t>(tokens.size());
        if (n == 0) throw invalid_argument_error("decoder::forward: no tokens");
        if (pos0 < 0) throw invalid_argument_error("decoder::forward: negative position " + std::to_string(pos0));
        const std::int64_t n_out = which == logits_for::all ? n : 1;
        if (static_cast<std::int64_t>(logits.size()) < n_out * c.vocab_size)
            throw invalid_argument_error("decoder::forward: logits buffer holds " + std::to_string(logits.size()) + " floats, needs " + std::to_string(n_out * c.vocab_size));
        for (token_id t : tokens)
            if (t < 0 || t >= c.vocab_size)
                throw invalid_argument_error("decoder::forward: token id " + std::to_string(t) + " is outside the vocabulary [0, " + std::to_string(c.vocab_size) + ")");
        cache.reserve(pos0 + n);  // throws cache_full_error before anything is written
        reserve(n, pos0 + n);

        const model_weights& w = model_->weights();
        for (std::int64_t i = 0; i < n; ++i) {
            read_row(w.token_embd, tokens[static_cast<std::size_t>(i)], x_.data() + i * c.dim);
            rope_table(pos0 + i, c.rope_dim, c.rope_theta, rope_.data() + i * c.rope_dim);
        }
        for (std::int64_t l = 0; l < c.n_layers; ++l) layer(l, n, pos0, cache);

        // Final norm and classifier, for the rows asked for.
        const std::int64_t first = n - n_out;
        for (std::int64_t i = first; i < n; ++i)
            rms_norm(x_.data() + i * c.dim, output_norm_.data(), c.dim, c.norm_eps, xb_.data() + i * c.dim);
        matmul(w.output, xb_.data() + first * c.dim, c.dim, n_out, logits.data(), c.vocab_size, pool_);
    }

private:
    // One transformer block over n tokens, in data-flow order (as llama2.c's run.c).
    template <class Cache>
    void layer(std::int64_t l, std::int64_t n, std::int64_t pos0, Cache& cache) {
        const model_config& c = config();
        const layer_weights& w = model_->weights().layers[static_cast<std::size_t>(l)];
        const std::int64_t dim = c.dim, q_dim = c.q_dim(), kv_dim = c.kv_dim(), hd = c.head_dim;

        // Attention: xb = rmsnorm(x); q, k, v = xb Wq^T, xb Wk^T, xb Wv^T    // xb (n, dim) in Scalar
        for (std::int64_t i = 0; i < n; ++i)
            rms_norm(x_.data() + i * dim, attn_norm_[l].data(), dim, c.norm_eps, xb_.data() + i * dim);
        matmul(w.attn_q, xb_.data(), dim, n, q_.data(), q_dim, pool_);  // q (n, n_heads * head_dim)
        matmul(w.attn_k, xb_.data(), dim, n, k_.data(), kv_dim, pool_);  // k (n, n_kv_heads * head_dim)
        matmul(w.attn_v, xb_.data(), dim, n, v_.data(), kv_dim, pool_);  // v (n, n_kv_heads * head_dim)

        // RoPE on q and k, then k and v go into the cache rows of their positions.
        const std::int64_t n_pairs = c.rope_dim / 2;
        for (std::int64_t i = 0; i < n; ++i) {
            const float* cs = rope_.data() + i * c.rope_dim;
            for (std::int64_t h = 0; h < c.n_heads; ++h) rope_adjacent(q_.data() + i * q_dim + h * hd, cs, n_pairs);
            for (std::int64_t h = 0; h < c.n_kv_heads; ++h) rope_adjacent(k_.data() + i * kv_dim + h * hd, cs, n_pairs);
            Scalar* kc = cache.key(l, pos0 + i);
            Scalar* vc = cache.value(l, pos0 + i);
            for (std::int64_t j = 0; j < kv_dim; ++j) {
                kc[j] = static_cast<Scalar>(k_[i * kv_dim + j]);
                vc[j] = static_cast<Scalar>(v_[i * kv_dim + j]);
            }
        }

        // Causal grouped-query attention: token i (position pos0 + i) attends to positions
        // [0, pos0 + i]; query head h reads key/value head h / (n_heads / n_kv_heads).
        const std::int64_t group = c.n_heads / c.n_kv_heads;
        pool_.parallel_for(n * c.n_heads, [&](std::int64_t task, int thread) {
            const std::int64_t i = task / c.n_heads, h = task % c.n_heads;
            const std::int64_t n_pos = pos0 + i + 1;
            const std::int64_t kv_off = (h / group) * hd;
            const float* q = q_.data() + i * q_dim + h * hd;
            float* scores = scores_.data() + static_cast<std::size_t>(thread) * reserved_positions_;
            for (std::int64_t t = 0; t < n_pos; ++t) scores[t] = dot(cache.key(l, t) + kv_off, q, hd) * attn_scale_;
            softmax(scores, n_pos);
            float out[max_head_dim];
            for (std::int64_t j = 0; j < hd; ++j) out[j] = 0.0f;
            for (std::int64_t t = 0; t < n_pos; ++t) axpy(scores[t], cache.value(l, t) + kv_off, out, hd);
            Scalar* dst = att_.data() + i * q_dim + h * hd;
            for (std::int64_t j = 0; j < hd; ++j) dst[j] = static_cast<Scalar>(out[j]);
        });

        // x += att Wo^T
        matmul(w.attn_output, att_.data(), q_dim, n, proj_.data(), dim, pool_);
        for (std::int64_t j = 0; j < n * dim; ++j) x_[j] += proj_[j];

        // Feed-forward (SwiGLU): x += (silu(xb W1^T) * (xb W3^T)) W2^T, xb = rmsnorm(x)
        for (std::int64_t i = 0; i < n; ++i)
            rms_norm(x_.data() + i * dim, ffn_norm_[l].data(), dim, c.norm_eps, xb_.data() + i * dim);
        matmul(w.ffn_gate, xb_.data(), dim, n, gate_.data(), c.hidden_dim, pool_);  // (n, hidden_dim)
        matmul(w.ffn_up, xb_.data(), dim, n, up_.data(), c.hidden_dim, pool_);      // (n, hidden_dim)
        swiglu(gate_.data(), up_.data(), n * c.hidden_dim, hb_.data());
        matmul(w.ffn_down, hb_.data(), c.hidden_dim, n, proj_.data(), dim, pool_);
        for (std::int64_t j = 0; j < n * dim; ++j) x_[j] += proj_[j];
    }

    static constexpr std::int64_t max_head_dim = 1024;

    std::shared_ptr<const model> model_;
    thread_pool pool_;
    std::vector<std::vector<float>> attn_norm_, ffn_norm_;  // (n_layers, dim)
    std::vector<float> output_norm_;                         // (dim)
    float attn_scale_ = 1.0f;

    std::int64_t reserved_tokens_ = 0;
    std::int64_t reserved_positions_ = 0;
    std::vector<float> x_;      // (n, dim) residual stream
    std::vector<Scalar> xb_;    // (n, dim) normalized input of a weight product
    std::vector<float> q_;      // (n, n_heads * head_dim)
    std::vector<float> k_, v_;  // (n, n_kv_heads * head_dim), before they enter the cache
    std::vector<Scalar> att_;   // (n, n_heads * head_dim) attention output
    std::vector<float> proj_;   // (n, dim) output of Wo or W2
    std::vector<float> gate_, up_;  // (n, hidden_dim)
    std::vector<Scalar> hb_;    // (n, hidden_dim) SwiGLU output
    std::vector<float> rope_;   // (n, rope_dim) cos/sin pairs per token
    std::vector<float> scores_; // (n_threads, max positions) attention weights
};

}  // namespace nexttok
