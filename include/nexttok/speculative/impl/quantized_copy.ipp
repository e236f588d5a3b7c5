// The definitions of quantized_copy.hpp.
#pragma once

#include <nexttok/speculative/quantized_copy.hpp>
#include <nexttok/error.hpp>
#include <nexttok/kernels/dequantize.hpp>
#include <nexttok/tensor/quantize.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace nexttok {

NEXTTOK_DECL std::shared_ptr<const model> quantized_copy(const model& m, tensor_type type) {
    if (type != tensor_type::q8_0 && type != tensor_type::q4_0)
        throw invalid_argument_error("quantized_copy: type " + to_string(type) + " (expected q8_0 or q4_0)");
    model_weights w = m.weights();
    std::vector<tensor_view*> views{&w.token_embd, &w.output_norm, &w.output};
    for (layer_weights& l : w.layers)
        for (tensor_view* t : {&l.attn_norm, &l.attn_q, &l.attn_k, &l.attn_v, &l.attn_output, &l.ffn_norm, &l.ffn_gate,
                               &l.ffn_up, &l.ffn_down})
            views.push_back(t);
    const bool tied = w.output.data == w.token_embd.data;
    if (tied) views.erase(views.begin() + 2);

    const std::size_t block_bytes = type == tensor_type::q8_0 ? sizeof(block_q8_0) : sizeof(block_q4_0);
    auto quantized = [](const tensor_view& t) {
        return t.n_dims == 2 && t.cols() % 32 == 0;
    };
    auto new_bytes = [&](const tensor_view& t) {
        return quantized(t) ? t.rows() * (t.cols() / 32) * block_bytes : t.n_bytes;
    };
    std::size_t total = 0;
    for (const tensor_view* t : views) total += (new_bytes(*t) + 63) / 64 * 64;
    model::memory_buffer buf =
        model::memory_buffer::allocate(total, "<" + to_string(type) + " copy of " + m.file_name() + ">");

    std::size_t offset = 0;
    std::vector<float> row;
    for (tensor_view* t : views) {
        std::byte* dst = buf.bytes.get() + offset;
        const std::size_t n = new_bytes(*t);
        if (quantized(*t)) {
            row.resize(t->cols());
            const auto cols = static_cast<std::int64_t>(t->cols());
            for (std::uint64_t r = 0; r < t->rows(); ++r) {
                read_row(*t, static_cast<std::int64_t>(r), row.data());
                std::byte* out = dst + r * (t->cols() / 32) * block_bytes;
                if (type == tensor_type::q8_0)
                    quantize_row_q8_0(row.data(), reinterpret_cast<block_q8_0*>(out), cols);
                else
                    quantize_row_q4_0(row.data(), reinterpret_cast<block_q4_0*>(out), cols);
            }
            t->type = type;
        } else {
            std::memcpy(dst, t->data, n);
        }
        t->data = dst;
        t->n_bytes = n;
        offset += (n + 63) / 64 * 64;
    }
    if (tied) w.output = w.token_embd;
    return std::make_shared<const model>(m.config(), std::move(w), std::move(buf));
}

}  // namespace nexttok
