// A loaded model: its hyper-parameters, typed views of its weights, and the mapped file that holds
// them. Weights are used in place from the mapping (zero copy), but for the q8_0 and q4_0 matrices
// that the model repacks for the kernels (see the constructor). Immutable and thread-safe after
// loading; share it with std::shared_ptr<const model> between decoders.
#pragma once

#include <nexttok/detail/config.hpp>
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

        NEXTTOK_DECL static memory_buffer allocate(std::size_t size, std::string name);
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

    // Builds the model and, unless `repack` is false, repacks its q8_0 and q4_0 matrices (the
    // layers' projections and the classifier; token_embd when it is the classifier too) one lane
    // per block for the int8 kernels (tensor/repacked_blocks.hpp): their views then have type
    // q8_0_r16 or q4_0_r16, the same bytes per row, read_row reads them as before, and the kernels
    // run faster on several tokens at once. Weights in a memory_buffer source are repacked in
    // place; those of a file into a buffer the model owns (about the size of those matrices).
    NEXTTOK_DECL model(model_config config, model_weights weights, source src, bool repack = true);

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
    NEXTTOK_DECL std::filesystem::path path() const;

    // The file name used in messages ("<memory>" for a model built in memory).
    NEXTTOK_DECL std::string file_name() const;

    // Bytes of weights one decode step reads (the classifier once, even when tied).
    NEXTTOK_DECL std::uint64_t weight_bytes() const noexcept;

private:
    model_config config_;
    model_weights weights_;
    source source_;
    memory_buffer repacked_;  // the repacked matrices of a file's weights

    void repack_matrices();
};

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/model/impl/model.ipp>
#endif
