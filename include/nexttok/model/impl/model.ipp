// The definitions of model (model.hpp).
#pragma once

#include <nexttok/detail/huge_pages.hpp>
#include <nexttok/model/model.hpp>
#include <nexttok/tensor/repacked_blocks.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace nexttok {

NEXTTOK_DECL model::memory_buffer model::memory_buffer::allocate(std::size_t size, std::string name) {
    memory_buffer b;
    b.size = size;
    b.name = std::move(name);
    b.bytes = detail::allocate_buffer(size);
    return b;
}

NEXTTOK_DECL model::model(model_config config, model_weights weights, source src, bool repack)
        : config_(std::move(config)), weights_(std::move(weights)), source_(std::move(src)) {
    if (repack) repack_matrices();
}

NEXTTOK_DECL void model::repack_matrices() {
    std::vector<tensor_view*> views{&weights_.output};
    for (layer_weights& l : weights_.layers)
        for (tensor_view* t : {&l.attn_q, &l.attn_k, &l.attn_v, &l.attn_output, &l.ffn_gate, &l.ffn_up, &l.ffn_down})
            views.push_back(t);
    auto block_bytes = [](tensor_type t) -> std::uint64_t {
        return t == tensor_type::q8_0 ? sizeof(block_q8_0) : t == tensor_type::q4_0 ? sizeof(block_q4_0) : 0;
    };
    // A matrix of whole blocks, exactly its rows' bytes (the GGUF reader checks both).
    auto repackable = [&](const tensor_view& t) {
        const std::uint64_t bytes = block_bytes(t.type);
        return !t.empty() && t.n_dims == 2 && bytes != 0 && t.cols() % 32 == 0 &&
               t.n_bytes == t.rows() * (t.cols() / 32) * bytes;
    };
    const memory_buffer* own = std::get_if<memory_buffer>(&source_);
    auto in_own = [&](const tensor_view& t) {
        if (!own || !own->bytes) return false;
        const std::byte* b = own->bytes.get();
        return t.data >= b && t.data + t.n_bytes <= b + own->size;
    };
    std::size_t copied = 0;  // (an upper bound: views of the same bytes counted each)
    for (const tensor_view* t : views)
        if (repackable(*t) && !in_own(*t)) copied += (t->n_bytes + 63) / 64 * 64;
    if (copied > 0) repacked_ = memory_buffer::allocate(copied, "<repacked matrices of " + file_name() + ">");
    const bool tied = weights_.token_embd.data == weights_.output.data;
    std::size_t offset = 0;
    std::vector<std::byte> row;
    std::vector<std::pair<const std::byte*, const tensor_view*>> done;  // (bytes before, view after)
    for (tensor_view* t : views) {
        if (!repackable(*t)) continue;
        bool seen = false;  // views of the same bytes (a model built by hand): repacked once
        for (const auto& [before, after] : done)
            if (before == t->data && !seen) t->data = after->data, t->type = after->type, seen = true;
        if (seen) continue;
        done.emplace_back(t->data, t);
        const bool inside = in_own(*t);
        std::byte* dst = inside ? const_cast<std::byte*>(t->data) : repacked_.bytes.get() + offset;
        if (!inside) offset += (t->n_bytes + 63) / 64 * 64;
        const std::uint64_t row_bytes = t->row_bytes();
        const auto nb = static_cast<std::int64_t>(t->cols() / 32);
        row.resize(row_bytes);
        for (std::uint64_t r = 0; r < t->rows(); ++r) {
            std::memcpy(row.data(), t->data + r * row_bytes, row_bytes);  // (in place: from a copy)
            auto* out = reinterpret_cast<std::uint8_t*>(dst + r * row_bytes);
            if (t->type == tensor_type::q8_0)
                detail::repack_row_r16(reinterpret_cast<const block_q8_0*>(row.data()), out, nb);
            else
                detail::repack_row_r16(reinterpret_cast<const block_q4_0*>(row.data()), out, nb);
        }
        t->data = dst;
        t->type = repacked_type(t->type);
    }
    if (tied && !weights_.output.empty()) {
        weights_.token_embd.data = weights_.output.data;
        weights_.token_embd.type = weights_.output.type;
    }
}

NEXTTOK_DECL std::filesystem::path model::path() const {
    if (const gguf_file* g = gguf()) return g->file().path();
    if (const mapped_file* f = std::get_if<mapped_file>(&source_)) return f->path();
    if (const hf_files* h = std::get_if<hf_files>(&source_)) return h->dir;
    return {};
}

NEXTTOK_DECL std::string model::file_name() const {
    if (const gguf_file* g = gguf()) return g->name();
    if (const mapped_file* f = std::get_if<mapped_file>(&source_)) return f->name();
    if (const hf_files* h = std::get_if<hf_files>(&source_)) return h->dir.filename().string();
    return std::get<memory_buffer>(source_).name;
}

NEXTTOK_DECL std::uint64_t model::weight_bytes() const noexcept {
    std::uint64_t n = weights_.output_norm.n_bytes + weights_.output.n_bytes;
    for (const layer_weights& l : weights_.layers)
        for (const tensor_view* t : {&l.attn_norm, &l.attn_q, &l.attn_k, &l.attn_v, &l.attn_output, &l.ffn_norm,
                                     &l.ffn_gate, &l.ffn_up, &l.ffn_down})
            n += t->n_bytes;
    return n;
}

}  // namespace nexttok
