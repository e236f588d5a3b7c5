// A loaded model: its hyper-parameters, typed views of its weights, and the mapped file that holds
// them. Weights are used in place from the mapping (zero copy). Immutable and thread-safe after
// loading; share it with std::shared_ptr<const model> between decoders.
#pragma once

#include <nexttok/detail/huge_pages.hpp>
#include <nexttok/io/gguf.hpp>
#include <nexttok/io/mapped_file.hpp>
#include <nexttok/io/safetensors.hpp>
#include <nexttok/model/model_config.hpp>
#include <nexttok/model/model_weights.hpp>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace nexttok {

enum class model_file_format { gguf, llama2c, hf_directory, memory };

class model {
public:
    // Weights built in memory (random_model.hpp): a buffer the model owns, 64-byte aligned (2 MiB
    // aligned and in huge pages where possible when large).
    struct memory_buffer {
        std::shared_ptr<std::byte[]> bytes;
        std::size_t size = 0;
        std::string name = "<memory>";

        static memory_buffer allocate(std::size_t size, std::string name) {
            memory_buffer b;
            b.size = size;
            b.name = std::move(name);
            b.bytes = detail::allocate_buffer(size);
            return b;
        }
    };
    // A Hugging Face directory: its safetensors shards (mapped), plus the tensors the loader had
    // to convert (transposed GPT-2 Conv1D weights), owned here.
    struct hf_files {
        std::filesystem::path dir;
        std::vector<safetensors_file> shards;
        std::vector<memory_buffer> converted;
    };
    // What holds the weights; the views in `weights` point into it.
    using source = std::variant<gguf_file, mapped_file, hf_files, memory_buffer>;

    model(model_config config, model_weights weights, source src)
            : config_(std::move(config)), weights_(std::move(weights)), source_(std::move(src)) {}

    model(const model&) = delete;
    model& operator=(const model&) = delete;

    const model_config& config() const noexcept { return config_; }
    const model_weights& weights() const noexcept { return weights_; }
    model_file_format format() const noexcept {
        if (std::holds_alternative<gguf_file>(source_)) return model_file_format::gguf;
        if (std::holds_alternative<mapped_file>(source_)) return model_file_format::llama2c;
        return std::holds_alternative<hf_files>(source_) ? model_file_format::hf_directory : model_file_format::memory;
    }
    // The GGUF metadata (for the tokenizer, say), or nullptr for a llama2.c checkpoint.
    const gguf_file* gguf() const noexcept { return std::get_if<gguf_file>(&source_); }
    // The file or directory the model was loaded from (empty for a model built in memory).
    std::filesystem::path path() const {
        if (const gguf_file* g = gguf()) return g->file().path();
        if (const mapped_file* f = std::get_if<mapped_file>(&source_)) return f->path();
        if (const hf_files* h = std::get_if<hf_files>(&source_)) return h->dir;
        return {};
    }

    // The file name used in messages ("<memory>" for a model built in memory).
    std::string file_name() const {
        if (const gguf_file* g = gguf()) return g->name();
        if (const mapped_file* f = std::get_if<mapped_file>(&source_)) return f->name();
        if (const hf_files* h = std::get_if<hf_files>(&source_)) return h->dir.filename().string();
        return std::get<memory_buffer>(source_).name;
    }

    // Bytes of weights one decode step reads (the classifier once, even when tied).
    std::uint64_t weight_bytes() const noexcept {
        std::uint64_t n = weights_.output_norm.n_bytes + weights_.output.n_bytes;
        for (const layer_weights& l : weights_.layers)
            for (const tensor_view* t : {&l.attn_norm, &l.attn_q, &l.attn_k, &l.attn_v, &l.attn_output, &l.ffn_norm,
                                         &l.ffn_gate, &l.ffn_up, &l.ffn_down})
                n += t->n_bytes;
        return n;
    }

private:
    model_config config_;
    model_weights weights_;
    source source_;
};

}  // namespace nexttok
