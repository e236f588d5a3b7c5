// Builds a model from a GGUF file of a known architecture (architecture.hpp): hyper-parameters
// from the `<arch>.*` keys, weights as views into the mapping, read through the architecture's
// tensor table. Tensors follow llama.cpp's names, shared by every family (token_embd, blk.N.attn_q,
// ..., output_norm, output); optional biases are loaded when present, a fused blk.N.attn_qkv is
// split into Q, K and V views, and no `output.weight` means the classifier is tied to the token
// embedding.
#pragma once

#include <nexttok/detail/config.hpp>
#include <nexttok/error.hpp>
#include <nexttok/io/gguf.hpp>
#include <nexttok/model/architecture.hpp>
#include <nexttok/model/load_options.hpp>
#include <nexttok/model/model.hpp>
#include <nexttok/model/tensor_check.hpp>

#include <filesystem>
#include <memory>

namespace nexttok {

// Loads a GGUF model. Throws io_error, format_error (also for a NaN or inf weight, when
// options.check_tensors scans them: tensor_check.hpp) or unsupported_error.
NEXTTOK_DECL std::shared_ptr<const model> load_gguf_model(const std::filesystem::path& path,
                                                          const load_options& options = {});

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/model/impl/gguf_loader.ipp>
#endif
