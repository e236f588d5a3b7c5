// Options of the model loaders (load_model, load_gguf_model, load_llama2c_model, load_hf_model).
#pragma once

#include <cstdint>

namespace nexttok {

// Whether a loader scans the weights' values for NaN and infinities (tensor_check.hpp), as
// llama.cpp's --check-tensors: a model whose weights hold them computes NaN logits at best.
enum class tensor_check {
    automatic,  // scan when the weights take at most load_options::check_tensors_max_bytes
    always,
    never,
};

struct load_options {
    tensor_check check_tensors = tensor_check::automatic;  // scan the weights for NaN and inf (format_error on one)
    // automatic scans models up to this size (2 GiB). The scan reads every weight byte once, about
    // a second for 2 GiB on one core from the page cache: noise next to loading a small model, but
    // seconds to minutes on every start of a 7B-70B one, whose files were usually checked when
    // they were converted. The scan still runs on those with tensor_check::always (--check-tensors).
    std::uint64_t check_tensors_max_bytes = std::uint64_t{2} << 30;
    // Repack the q8_0 and q4_0 matrices for the int8 kernels (model.hpp's constructor): a copy of
    // those matrices in memory, and several tokens at once computed faster (with AVX-512 on the
    // 1.1B shape: q8_0 prefill about 1.4x, batches of 4-16 tokens 1.1-1.3x; benchmarks/README.md, "Batched
    // decode"). false keeps every view on the file's bytes and layout.
    bool repack_weights = true;
};

}  // namespace nexttok
