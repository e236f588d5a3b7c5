// Builds a model from a Hugging Face directory: config.json, then model.safetensors or the shards
// named by model.safetensors.index.json. Supported: LlamaForCausalLM (and Mistral's, the same
// layout), Qwen2ForCausalLM, GPT2LMHeadModel, with F32/F16/BF16 tensors used in place.
//
// Two differences from GGUF are handled here, exactly:
// - Llama's Q/K rows are in HF's rotate-half order (llama.cpp's converter permutes them to
//   adjacent pairs): the model runs with NeoX-pairing RoPE instead, which is the same function.
// - GPT-2 stores Conv1D weights as (in, out): those are transposed once at load into buffers the
//   model owns (the only weights not used in place).
#pragma once

#include <nexttok/detail/config.hpp>
#include <nexttok/error.hpp>
#include <nexttok/io/safetensors.hpp>
#include <nexttok/model/architecture.hpp>
#include <nexttok/model/load_options.hpp>
#include <nexttok/model/model.hpp>
#include <nexttok/model/tensor_check.hpp>

#include <filesystem>
#include <memory>

namespace nexttok {

// options.check_tensors: whether the weights are scanned for NaN and inf (tensor_check.hpp).
NEXTTOK_DECL std::shared_ptr<const model> load_hf_model(const std::filesystem::path& directory,
                                                        const load_options& options = {});

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/model/impl/hf_loader.ipp>
#endif
