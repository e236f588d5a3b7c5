// Builds a model from a llama2.c checkpoint in the "legacy" format: a 28-byte header of seven
// int32 (dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len), then F32 weights in
// a fixed order. A negative vocab_size means the classifier is stored separately at the end
// (untied); the RoPE tables that precede it are stale and skipped (RoPE is computed).
#pragma once

#include <nexttok/detail/config.hpp>
#include <nexttok/error.hpp>
#include <nexttok/model/load_options.hpp>
#include <nexttok/model/model.hpp>
#include <nexttok/model/tensor_check.hpp>

#include <filesystem>
#include <memory>

namespace nexttok {

// options.check_tensors: whether the weights are scanned for NaN and inf (tensor_check.hpp).
NEXTTOK_DECL std::shared_ptr<const model> load_llama2c_model(const std::filesystem::path& path,
                                                             const load_options& options = {});

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/model/impl/llama2c_loader.ipp>
#endif
