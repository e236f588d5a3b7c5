// The decoder of every supported family (Llama, Qwen2, GPT-2; see architecture.hpp):
// forward(tokens, positions, cache) -> logits, for one sequence or for a ragged batch of sequences,
// each at its own positions in its own cache. Templated on Scalar, the type in which the KV cache
// (unless it holds q8_0 blocks) and the inputs of every weight product are stored (float,
// Eigen::half, Eigen::bfloat16). Everything that accumulates (dot products, the residual stream,
// norms, softmax) is float. One forward call takes whole prompts (prefill: each weight row serves a
// tile of tokens), single tokens (decode), or any mix of the two: every weight product runs once
// over all the rows of the call, and attention runs per sequence over that sequence's cache. A
// token's numbers do not depend on what else is in the call: prefill, decode, any chunking of a
// prompt and any batch give bitwise the same logits for it.
//
// Ownership: shares the immutable model; owns its thread pool and scratch buffers, so one decoder
// serves one caller at a time (not thread-safe). Scratch grows in reserve(), never in the loop.
#pragma once

#include <nexttok/cache/kv_storage.hpp>
#include <nexttok/decoder/logits_for.hpp>
#include <nexttok/detail/aligned_buffer.hpp>
#include <nexttok/detail/memory_limit.hpp>
#include <nexttok/error.hpp>
#include <nexttok/kernels/attention.hpp>
#include <nexttok/kernels/dot.hpp>
#include <nexttok/kernels/matmul.hpp>
#include <nexttok/kernels/ops.hpp>
#include <nexttok/kernels/q8_0_rows.hpp>
#include <nexttok/kernels/thread_pool.hpp>
#include <nexttok/model/model.hpp>
#include <nexttok/tensor/quant_blocks.hpp>
#include <nexttok/types.hpp>

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <tuple>
#include <vector>

namespace nexttok {

// One sequence's part of a ragged batch: tokens[i] runs at position pos0 + i, its keys and values go
// into *cache, and it attends to the cache's positions [0, pos0 + i]. Non-owning. A sequence (a
// cache) appears at most once in a batch.
template <class Cache>
struct batch_sequence {
    std::span<const token_id> tokens;
    std::int64_t pos0 = 0;
    Cache* cache = nullptr;
    logits_for which = logits_for::last;  // rows of logits it gets: 1, tokens.size() or 0
};

template <class Scalar>
class decoder {
public:
    using scalar_type = Scalar;

    explicit decoder(std::shared_ptr<const model> m, int n_threads = 1) : model_(std::move(m)), pool_(n_threads) {
        if (!model_) throw invalid_argument_error("decoder: null model");
        const model_config& c = model_->config();
        const model_weights& w = model_->weights();
        // Norm weights and biases are tiny: converted to float once here (empty when absent);
        // matrices stay in the file's format.
        auto to_floats = [&](const tensor_view& t) {
            std::vector<float> v(static_cast<std::size_t>(t.empty() ? 0 : t.cols()));
            if (!t.empty()) read_row(t, 0, v.data());
            return v;
        };
        for (const layer_weights& l : w.layers) {
            layer_vectors& v = vectors_.emplace_back();
            v.attn_norm = to_floats(l.attn_norm);
            v.attn_norm_b = to_floats(l.attn_norm_b);
            v.ffn_norm = to_floats(l.ffn_norm);
            v.ffn_norm_b = to_floats(l.ffn_norm_b);
            v.q_b = to_floats(l.attn_q_b);
            v.k_b = to_floats(l.attn_k_b);
            v.v_b = to_floats(l.attn_v_b);
            v.o_b = to_floats(l.attn_output_b);
            v.up_b = to_floats(l.ffn_up_b);
            v.down_b = to_floats(l.ffn_down_b);
        }
        output_norm_ = to_floats(w.output_norm);
        output_norm_b_ = to_floats(w.output_norm_b);
        attn_shape_ = {c.n_heads, c.n_kv_heads, c.head_dim, 1.0f / std::sqrt(static_cast<float>(c.head_dim))};
        if (c.positions != position_kind::learned) {
            rope_freqs_ = rope_pair_frequencies(c.rope_scaling, c.rope_dim, c.rope_theta);
            rope_magnitude_ = rope_magnitude(c.rope_scaling);
        }
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
        const std::int64_t tokens = std::max(reserved_tokens_, n_tokens),
                           positions = std::max(reserved_positions_, max_positions);
        check_scratch_(tokens, positions);
        reserved_tokens_ = tokens;
        reserved_positions_ = positions;
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
        row_sequence_.resize(n);
        row_position_.resize(n);
        out_rows_.resize(n);
        attn_work_.reserve(attn_shape_, pool_.size(), reserved_positions_);
        work_.reserve(reserved_tokens_, std::max({c.dim, c.q_dim(), c.hidden_dim}));
    }

    // Runs tokens[i] at position pos0 + i, writing their keys and values into `cache` and reading
    // the cached positions [0, pos0) too. Writes logits (vocab_size floats per row) for the last
    // token, for every token (`which == all`, tokens.size() rows) or for none, into `logits`.
    template <kv_storage<Scalar> Cache>
    void forward(std::span<const token_id> tokens, std::int64_t pos0, Cache& cache, std::span<float> logits,
                 logits_for which = logits_for::last) {
        const batch_sequence<Cache> one{tokens, pos0, &cache, which};
        forward(std::span<const batch_sequence<Cache>>(&one, 1), logits);
    }

    // One step over a ragged batch: every sequence's tokens at its own positions in its own cache
    // (prefill chunks and single decode tokens mixed). Logits rows follow the batch's order: for each
    // sequence, 1, tokens.size() or 0 rows as its `which` asks. Each sequence's rows are bitwise what
    // forward() on that sequence alone gives. Throws invalid_argument_error for a bad sequence (named
    // by its index) and cache_full_error when a cache cannot hold its positions, before any key or
    // value is written (caches before that sequence may have grown their size).
    template <kv_storage<Scalar> Cache>
    void forward(std::span<const batch_sequence<Cache>> batch, std::span<float> logits) {
        const model_config& c = config();
        if (batch.empty()) throw invalid_argument_error("decoder::forward: empty batch");
        std::int64_t n = 0, n_out = 0, max_positions = 0;
        for (std::size_t s = 0; s < batch.size(); ++s) {
            check_sequence(batch[s], s, batch.size());
            const auto n_s = static_cast<std::int64_t>(batch[s].tokens.size());
            n += n_s;
            n_out += batch[s].which == logits_for::all ? n_s : batch[s].which == logits_for::last ? 1 : 0;
            max_positions = std::max(max_positions, batch[s].pos0 + n_s);
        }
        if (static_cast<std::int64_t>(logits.size()) < n_out * c.vocab_size)
            throw invalid_argument_error("decoder::forward: logits buffer holds " + std::to_string(logits.size()) +
                                         " floats, needs " + std::to_string(n_out * c.vocab_size));
        for (const batch_sequence<Cache>& b : batch)
            b.cache->reserve(b.pos0 + static_cast<std::int64_t>(
                                          b.tokens.size()));  // throws cache_full_error before anything is written
        reserve(n, max_positions);

        // Row i of the call: its sequence, its position, and whether it produces logits.
        std::int64_t i = 0, k = 0;
        for (std::size_t s = 0; s < batch.size(); ++s) {
            const auto n_s = static_cast<std::int64_t>(batch[s].tokens.size());
            for (std::int64_t t = 0; t < n_s; ++t, ++i) {
                row_sequence_[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(s);
                row_position_[static_cast<std::size_t>(i)] = batch[s].pos0 + t;
                if (batch[s].which == logits_for::all || (batch[s].which == logits_for::last && t == n_s - 1))
                    out_rows_[static_cast<std::size_t>(k++)] = i;
            }
        }

        // x = token embedding (+ learned position embedding); or RoPE tables for the positions.
        const model_weights& w = model_->weights();
        for (i = 0; i < n; ++i) {
            const batch_sequence<Cache>& b =
                batch[static_cast<std::size_t>(row_sequence_[static_cast<std::size_t>(i)])];
            const std::int64_t pos = row_position_[static_cast<std::size_t>(i)];
            float* x = x_.data() + i * c.dim;
            read_row(w.token_embd, b.tokens[static_cast<std::size_t>(pos - b.pos0)], x);
            if (c.positions == position_kind::learned) {
                read_row(w.position_embd, pos, proj_.data());
                for (std::int64_t j = 0; j < c.dim; ++j) x[j] += proj_[j];
            } else {
                rope_table(pos, rope_freqs_.data(), c.rope_dim / 2, rope_magnitude_, rope_.data() + i * c.rope_dim);
            }
        }
        for (std::int64_t l = 0; l < c.n_layers; ++l) layer(l, n, batch);
        if (n_out == 0) return;

        // Final norm and classifier, for the rows asked for, gathered into rows [0, n_out) of xb.
        for (k = 0; k < n_out; ++k)
            norm(x_.data() + out_rows_[static_cast<std::size_t>(k)] * c.dim, output_norm_, output_norm_b_,
                 xb_.data() + k * c.dim);
        matmul(w.output, xb_.data(), c.dim, n_out, logits.data(), c.vocab_size, pool_, work_);
    }

    // llama.cpp's context shift, for generation past the end of the cache: forgets the cached
    // positions [keep, keep + n_discard) and moves every later one down by n_discard, its key
    // re-rotated by -n_discard positions (RoPE angles are linear in the position: the rotation by
    // the delta, per-pair frequencies as in forward() and magnitude 1, since the key already
    // carries YaRN's). Values only move. Afterwards cache.size() is n_discard smaller and the next
    // token goes at position cache.size(). In the first layer the cache then holds what a fresh
    // prefill of the kept tokens would write, up to the rounding of the re-rotated keys (one more
    // conversion to the cache's type: Scalar, or q8_0 dequantized, rotated and quantized again, as
    // llama.cpp does for a quantized K); deeper layers keep what the moved tokens computed while
    // they still saw the dropped ones, as in llama.cpp: an approximation of the shorter context.
    // Throws invalid_argument_error unless 0 <= keep, 0 <= n_discard, keep + n_discard <= size(),
    // and unsupported_error for a model with learned positions (GPT-2), whose cached entries
    // cannot move. Allocates one row of scratch; const: forward()'s buffers are not touched.
    template <kv_storage<Scalar> Cache>
    requires(Cache::retains_history&& requires(Cache& c, std::int64_t n) {
        c.discard(n, n);
    }) void shift_context(Cache& cache, std::int64_t keep, std::int64_t n_discard) const {
        const model_config& c = config();
        if (c.positions == position_kind::learned)
            throw unsupported_error("decoder::shift_context: " + model_->file_name() + " (" + c.architecture +
                                    ") learns its positions: context shift needs RoPE");
        if (keep < 0 || n_discard < 0 || keep > cache.size() || n_discard > cache.size() - keep)
            throw invalid_argument_error(
                "decoder::shift_context: keep = " + std::to_string(keep) +
                ", n_discard = " + std::to_string(n_discard) + " with " + std::to_string(cache.size()) +
                " cached positions (expected 0 <= keep, 0 <= n_discard, keep + n_discard <= size)");
        if (n_discard == 0) return;
        cache.discard(keep, n_discard);
        const std::int64_t kv_dim = c.kv_dim(), n_pairs = c.rope_dim / 2;
        std::vector<float> cos_sin(static_cast<std::size_t>(2 * n_pairs)), row(static_cast<std::size_t>(kv_dim));
        rope_table(-n_discard, rope_freqs_.data(), n_pairs, 1.0, cos_sin.data());
        for (std::int64_t l = 0; l < c.n_layers; ++l)
            for (std::int64_t pos = keep; pos < cache.size(); ++pos) {
                auto* key = cache.key(l, pos);
                load_kv_row(key, row.data(), kv_dim);
                rotate(row.data(), c.n_kv_heads, cos_sin.data());
                store_kv_row(row.data(), key, kv_dim);
            }
    }

private:
    // The scratch for `tokens` rows attending to `positions` positions, checked against the
    // physical memory before reserve() allocates it: the attention weights grow with the positions
    // times the query heads per key head, so a crafted shape (thousands of query heads on one key
    // head) or context could otherwise ask for more than the machine has. (n_threads, group,
    // positions) attention weights, and per token the activations of every stage.
    void check_scratch_(std::int64_t tokens, std::int64_t positions) const {
        const model_config& c = config();
        using detail::saturating_mul;
        const auto group = static_cast<std::size_t>(c.n_heads / c.n_kv_heads);
        const std::size_t scores = saturating_mul(
            saturating_mul(static_cast<std::size_t>(pool_.size()) * group, static_cast<std::size_t>(positions)),
            sizeof(float));
        const auto per_token =
            static_cast<std::size_t>(4 * c.dim + 2 * c.q_dim() + 2 * c.kv_dim() + 3 * c.hidden_dim + c.rope_dim) *
            sizeof(float);
        const std::size_t rows = saturating_mul(per_token, static_cast<std::size_t>(tokens));
        const std::size_t need = scores > SIZE_MAX - rows ? SIZE_MAX : scores + rows;
        detail::check_memory_limit("decoder: scratch for " + std::to_string(tokens) + " tokens attending to " +
                                       std::to_string(positions) + " positions (" + std::to_string(pool_.size()) +
                                       " threads x " + std::to_string(group) + " query heads per KV head)",
                                   need, 0, "lower the context size (--ctx-size) or the tokens per forward call");
    }

    // A cache row as n floats: converted from Scalar, or dequantized from q8_0 blocks.
    static void load_kv_row(const Scalar* row, float* x, std::int64_t n) noexcept {
        for (std::int64_t j = 0; j < n; ++j) x[j] = static_cast<float>(row[j]);
    }
    static void load_kv_row(const block_q8_0* row, float* x, std::int64_t n) noexcept { dequantize_row(row, x, n); }

    // Throws invalid_argument_error unless sequence `index` of a batch can run.
    template <class Cache>
    void check_sequence(const batch_sequence<Cache>& b, std::size_t index, std::size_t n_sequences) const {
        const model_config& c = config();
        const auto where = [&] {
            return n_sequences == 1 ? std::string("decoder::forward: ")
                                    : "decoder::forward: sequence " + std::to_string(index) + " of the batch: ";
        };
        if (b.tokens.empty()) throw invalid_argument_error(where() + "no tokens");
        if (b.cache == nullptr) throw invalid_argument_error(where() + "no cache");
        if (b.pos0 < 0) throw invalid_argument_error(where() + "negative position " + std::to_string(b.pos0));
        for (token_id t : b.tokens)
            if (t < 0 || t >= c.vocab_size)
                throw invalid_argument_error(where() + "token id " + std::to_string(t) +
                                             " is outside the vocabulary [0, " + std::to_string(c.vocab_size) + ")");
        const model_weights& w = model_->weights();
        const std::int64_t end = b.pos0 + static_cast<std::int64_t>(b.tokens.size());
        if (c.positions == position_kind::learned && end > static_cast<std::int64_t>(w.position_embd.rows()))
            throw invalid_argument_error(where() + "position " + std::to_string(end - 1) + " is beyond the " +
                                         std::to_string(w.position_embd.rows()) + " positions " + model_->file_name() +
                                         " has learned");
    }

    // The norm of the architecture: RMSNorm, or LayerNorm with its shift.
    void norm(const float* x, const std::vector<float>& weight, const std::vector<float>& bias, Scalar* out) const {
        const model_config& c = config();
        if (c.norm == norm_kind::layer)
            layer_norm(x, weight.data(), bias.empty() ? nullptr : bias.data(), c.dim, c.norm_eps, out);
        else
            rms_norm(x, weight.data(), c.dim, c.norm_eps, out);
    }

    // y[t * cols + j] += bias[j] for t < n, when the layer has that bias.
    static void add_bias(float* y, std::int64_t n, const std::vector<float>& bias) noexcept {
        const auto cols = static_cast<std::int64_t>(bias.size());
        for (std::int64_t t = 0; t < n; ++t)
            for (std::int64_t j = 0; j < cols; ++j) y[t * cols + j] += bias[static_cast<std::size_t>(j)];
    }

    // f(i) for the n tokens of a forward call: on the pool when there are several (each token's
    // row is computed alone, so the split changes no result), inline for one (decode).
    template <class F>
    void per_token(std::int64_t n, F&& f) {
        if (n == 1)
            f(0);
        else
            pool_.parallel_for(n, [&](std::int64_t i, int) { f(i); });
    }

    // RoPE on each head of one token's q or k, in the pairing of the architecture.
    void rotate(float* x, std::int64_t n_heads, const float* cos_sin) const noexcept {
        const model_config& c = config();
        const std::int64_t n_pairs = c.rope_dim / 2;
        for (std::int64_t h = 0; h < n_heads; ++h) {
            if (c.positions == position_kind::rope_neox)
                rope_neox(x + h * c.head_dim, cos_sin, n_pairs);
            else
                rope_adjacent(x + h * c.head_dim, cos_sin, n_pairs);
        }
    }

    // The cached rows each row of the batch attends to in layer l: a table of key and value row
    // pointers per sequence (positions [0, pos0 + tokens.size()), read from its cache once per
    // layer), which that sequence's rows share, each up to its own position.
    template <class Cache>
    const attention_rows<kv_element_t<Cache>>* attention_rows_of(std::int64_t l,
                                                                 std::span<const batch_sequence<Cache>> batch) {
        using Row = kv_element_t<Cache>;
        row_table<Row>& table = std::get<row_table<Row>>(row_tables_);
        std::size_t positions = 0, rows = 0;
        for (const batch_sequence<Cache>& b : batch) {
            positions += static_cast<std::size_t>(b.pos0) + b.tokens.size();
            rows += b.tokens.size();
        }
        table.keys.resize(positions);
        table.values.resize(positions);
        table.rows.resize(rows);
        std::size_t first = 0, i = 0;
        for (const batch_sequence<Cache>& b : batch) {
            const Cache& cache = *b.cache;
            const std::int64_t end = b.pos0 + static_cast<std::int64_t>(b.tokens.size());
            for (std::int64_t t = 0; t < end; ++t) {
                table.keys[first + static_cast<std::size_t>(t)] = cache.key(l, t);
                table.values[first + static_cast<std::size_t>(t)] = cache.value(l, t);
            }
            for (std::int64_t pos = b.pos0; pos < end; ++pos)
                table.rows[i++] = {table.keys.data() + first, table.values.data() + first, pos + 1};
            first += static_cast<std::size_t>(end);
        }
        return table.rows.data();
    }

    // One transformer block over the n rows of a batch, in data-flow order (as llama2.c's run.c).
    // Row i belongs to sequence row_sequence_[i] of `batch` and sits at position row_position_[i].
    template <class Cache>
    void layer(std::int64_t l, std::int64_t n, std::span<const batch_sequence<Cache>> batch) {
        const model_config& c = config();
        const layer_weights& w = model_->weights().layers[static_cast<std::size_t>(l)];
        const layer_vectors& lv = vectors_[static_cast<std::size_t>(l)];
        const std::int64_t dim = c.dim, q_dim = c.q_dim(), kv_dim = c.kv_dim();

        // Attention: xb = norm(x); q, k, v = xb Wq^T + bq, xb Wk^T + bk, xb Wv^T + bv   // xb (n, dim) in Scalar
        per_token(
            n, [&](std::int64_t i) { norm(x_.data() + i * dim, lv.attn_norm, lv.attn_norm_b, xb_.data() + i * dim); });
        // q (n, n_heads * head_dim), k and v (n, n_kv_heads * head_dim): one parallel_for for the three.
        const matmul_target qkv[] = {
            {&w.attn_q, q_.data(), q_dim}, {&w.attn_k, k_.data(), kv_dim}, {&w.attn_v, v_.data(), kv_dim}};
        matmul_group(std::span<const matmul_target>(qkv), xb_.data(), dim, n, pool_, work_);
        add_bias(q_.data(), n, lv.q_b);
        add_bias(k_.data(), n, lv.k_b);
        add_bias(v_.data(), n, lv.v_b);

        // RoPE on q and k (unless positions are learned), then k and v go into the cache rows.
        per_token(n, [&](std::int64_t i) {
            if (c.positions != position_kind::learned) {
                const float* cs = rope_.data() + i * c.rope_dim;
                rotate(q_.data() + i * q_dim, c.n_heads, cs);
                rotate(k_.data() + i * kv_dim, c.n_kv_heads, cs);
            }
            // In the cache's element type (Scalar or q8_0); rows of whole blocks, so this never throws.
            Cache& cache = *batch[static_cast<std::size_t>(row_sequence_[static_cast<std::size_t>(i)])].cache;
            const std::int64_t pos = row_position_[static_cast<std::size_t>(i)];
            store_kv_row(k_.data() + i * kv_dim, cache.key(l, pos), kv_dim);
            store_kv_row(v_.data() + i * kv_dim, cache.value(l, pos), kv_dim);
        });

        // Causal grouped-query attention (attention.hpp): row i attends to its own sequence's
        // positions [0, pos], in the cache's element type (Scalar, or q8_0 blocks read in place).
        causal_attention(attn_shape_, n, q_.data(), attention_rows_of(l, batch), att_.data(), attn_work_, pool_);

        // x += att Wo^T + bo
        matmul(w.attn_output, att_.data(), q_dim, n, proj_.data(), dim, pool_, work_);
        add_bias(proj_.data(), n, lv.o_b);
        for (std::int64_t j = 0; j < n * dim; ++j) x_[j] += proj_[j];

        // Feed-forward, xb = norm(x):
        //   SwiGLU: x += (silu(xb W1^T) * (xb W3^T)) W2^T
        //   GELU:   x += gelu(xb Wup^T + bup) Wdown^T + bdown
        per_token(n,
                  [&](std::int64_t i) { norm(x_.data() + i * dim, lv.ffn_norm, lv.ffn_norm_b, xb_.data() + i * dim); });
        // up and gate (n, hidden_dim): one parallel_for for both.
        const matmul_target up_gate[] = {{&w.ffn_up, up_.data(), c.hidden_dim},
                                         {&w.ffn_gate, gate_.data(), c.hidden_dim}};
        const bool swiglu_mlp = c.mlp == mlp_kind::swiglu;
        matmul_group(std::span<const matmul_target>(up_gate, swiglu_mlp ? 2 : 1), xb_.data(), dim, n, pool_, work_);
        add_bias(up_.data(), n, lv.up_b);
        const std::int64_t hidden = c.hidden_dim;
        per_token(n, [&](std::int64_t i) {
            if (swiglu_mlp)
                swiglu(gate_.data() + i * hidden, up_.data() + i * hidden, hidden, hb_.data() + i * hidden);
            else
                gelu_tanh(up_.data() + i * hidden, hidden, hb_.data() + i * hidden);
        });
        matmul(w.ffn_down, hb_.data(), c.hidden_dim, n, proj_.data(), dim, pool_, work_);
        add_bias(proj_.data(), n, lv.down_b);
        for (std::int64_t j = 0; j < n * dim; ++j) x_[j] += proj_[j];
    }

    std::shared_ptr<const model> model_;
    thread_pool pool_;
    matmul_workspace work_;  // quantized activations of the current weight product
    // Per-layer norm weights and biases in float; empty vectors where the family has none.
    struct layer_vectors {
        std::vector<float> attn_norm, attn_norm_b, ffn_norm, ffn_norm_b;  // (dim)
        std::vector<float> q_b, k_b, v_b, o_b;                            // (q_dim), (kv_dim), (kv_dim), (dim)
        std::vector<float> up_b, down_b;                                  // (hidden_dim), (dim)
    };
    std::vector<layer_vectors> vectors_;              // (n_layers)
    std::vector<float> output_norm_, output_norm_b_;  // (dim)
    attention_shape attn_shape_;                      // heads, key/value heads, head_dim, 1 / sqrt(head_dim)
    std::vector<double> rope_freqs_;  // (rope_dim / 2) angular frequency of each rotated pair, scaling applied
    double rope_magnitude_ = 1.0;     // YaRN's factor on cos and sin (1 otherwise)

    std::int64_t reserved_tokens_ = 0;
    std::int64_t reserved_positions_ = 0;
    detail::aligned_vector<float> x_;          // (n, dim) residual stream
    detail::aligned_vector<Scalar> xb_;        // (n, dim) normalized input of a weight product
    detail::aligned_vector<float> q_;          // (n, n_heads * head_dim)
    detail::aligned_vector<float> k_, v_;      // (n, n_kv_heads * head_dim), before they enter the cache
    detail::aligned_vector<Scalar> att_;       // (n, n_heads * head_dim) attention output
    detail::aligned_vector<float> proj_;       // (n, dim) output of Wo or W2; a position embedding before the layers
    detail::aligned_vector<float> gate_, up_;  // (n, hidden_dim)
    detail::aligned_vector<Scalar> hb_;        // (n, hidden_dim) SwiGLU output
    detail::aligned_vector<float> rope_;       // (n, rope_dim) cos/sin pairs per token
    std::vector<std::int32_t> row_sequence_;   // (n) the batch sequence of each row
    std::vector<std::int64_t> row_position_;   // (n) the position of each row
    std::vector<std::int64_t> out_rows_;       // (rows that produce logits) their row indices, ascending
    attention_workspace attn_work_;            // per thread: the scores and outputs of one task's query heads
    // attention_rows_of's tables, for caches of Scalar and of q8_0 blocks (grown, never shrunk).
    template <class Row>
    struct row_table {
        std::vector<const Row*> keys, values;   // (positions of every sequence)
        std::vector<attention_rows<Row>> rows;  // (n)
    };
    std::tuple<row_table<Scalar>, row_table<block_q8_0>> row_tables_;
};

}  // namespace nexttok
