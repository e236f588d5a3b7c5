// The load-time scan of weight values (llama.cpp's --check-tensors): in float tensors (f32, f16,
// bf16) every value must be finite; in quantized ones every block's float scales (d, and dmin or
// m where the type has one). Integer quants cannot be non-finite, so a block's scales are all
// there is to check. The first non-finite value is a format_error such as
//   model.gguf: tensor 'blk.0.attn_q.weight' at offset 0x1e240: element 12 of row 3 is NaN
//   model.gguf: tensor 'blk.0.ffn_up.weight' at offset 0x3c000: block 17 of row 3 has scale d = inf
// The scan reads every byte of the weights once (tested on bit patterns, no conversion); the
// loaders run it as load_options::check_tensors says.
#pragma once

#include <nexttok/detail/config.hpp>
#include <nexttok/error.hpp>
#include <nexttok/model/load_options.hpp>
#include <nexttok/model/model_weights.hpp>
#include <nexttok/tensor/tensor_type.hpp>
#include <nexttok/tensor/tensor_view.hpp>

#include <cstdint>
#include <span>
#include <string>
#include <unordered_set>
#include <vector>

namespace nexttok {

namespace detail {

// A half-precision scale inside a block: its byte offset and its name in ggml's block struct.
struct block_scale_field {
    std::uint32_t offset;
    const char* name;
};

// The float scales of a block of type t (empty for float types and types without a layout here).
NEXTTOK_DECL std::span<const block_scale_field> block_scale_fields(tensor_type t) noexcept;

}  // namespace detail

// Throws format_error naming t, its offset, the place (element and row, or block and row) and
// NaN / inf / -inf at its first non-finite value. `file` names the file in the message.
NEXTTOK_DECL void check_tensor_values(const std::string& file, const tensor_view& t);

// Every tensor of a model's weights once (a tied classifier is the embedding).
template <class F>
inline void for_each_weight(const model_weights& w, F&& f) {
    std::unordered_set<const std::byte*> seen;
    auto visit = [&](const tensor_view& t) {
        if (!t.empty() && seen.insert(t.data).second) f(t);
    };
    visit(w.token_embd);
    visit(w.position_embd);
    for (const layer_weights& l : w.layers)
        for (const tensor_view* t : {&l.attn_norm, &l.attn_q, &l.attn_k, &l.attn_v, &l.attn_output, &l.ffn_norm,
                                     &l.ffn_gate, &l.ffn_up, &l.ffn_down, &l.attn_norm_b, &l.ffn_norm_b, &l.attn_q_b,
                                     &l.attn_k_b, &l.attn_v_b, &l.attn_output_b, &l.ffn_up_b, &l.ffn_down_b})
            visit(*t);
    visit(w.output_norm);
    visit(w.output_norm_b);
    visit(w.output);
}

// Bytes of a model's weights, each tensor once.
NEXTTOK_DECL std::uint64_t total_weight_bytes(const model_weights& w);

// Scans every weight (check_tensor_values) if options say so: always, or automatic and the
// weights take at most options.check_tensors_max_bytes.
NEXTTOK_DECL void check_weights(const std::string& file, const model_weights& w, const load_options& options);

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/model/impl/tensor_check.ipp>
#endif
