// The definitions of model (model.hpp).
#pragma once

#include <nexttok/detail/huge_pages.hpp>
#include <nexttok/model/model.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <variant>

namespace nexttok {

NEXTTOK_DECL model::memory_buffer model::memory_buffer::allocate(std::size_t size, std::string name) {
    memory_buffer b;
    b.size = size;
    b.name = std::move(name);
    b.bytes = detail::allocate_buffer(size);
    return b;
}

NEXTTOK_DECL model::model(model_config config, model_weights weights, source src)
        : config_(std::move(config)), weights_(std::move(weights)), source_(std::move(src)) {}

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
