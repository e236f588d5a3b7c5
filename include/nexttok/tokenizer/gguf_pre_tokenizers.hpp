// The names a GGUF file's tokenizer.ggml.pre can hold for byte-level BPE, as llama.cpp reads them
// (src/llama-vocab.cpp, llama_vocab::impl::load), and what each one chooses:
//   kind           the expressions (pre_tokenizer_kind.hpp)
//   ignore_merges  a pre-token that is a whole token is that token (Llama 3, Tekken, ...)
//   add_bos        the default of tokenizer.ggml.add_bos_token when the file does not set it
//   clean_spaces   llama.cpp's detokenizer default (clean_up_tokenization_spaces). Informational:
//                  nexttok's decode never removes spaces, so that decode(encode(text)) == text.
// No byte-level name changes anything else in llama.cpp: add_space_prefix and escape_whitespaces
// are off for all of them (add_space_prefix is read from the file but only SentencePiece uses it).
//
// Names llama.cpp knows that are not here, on purpose: "jina-v1-en", "jina-v2-code", "roberta-bpe"
// (BERT-style encoders that append a SEP token, which nexttok's tokenizer does not model);
// "gemma4", "granite-embed-multi-311m", "sarvam-moe" and tokenizer model "whitespace" (BPE over
// raw UTF-8 with U+2581 for spaces, not byte-level). They stay an unsupported_error.
#pragma once

#include <nexttok/detail/config.hpp>
#include <nexttok/tokenizer/pre_tokenizer_kind.hpp>

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace nexttok {

struct gguf_pre_tokenizer {
    std::string_view name;  // the value of tokenizer.ggml.pre
    pre_tokenizer_kind kind;
    bool ignore_merges = false;
    bool add_bos = false;
    bool clean_spaces = true;
};

namespace detail::gguf_pre {

using pk = pre_tokenizer_kind;
inline constexpr bool merges = false, no_merges = true;  // ignore_merges
inline constexpr bool no_bos = false, bos = true;        // add_bos
inline constexpr bool clean = true, keep = false;        // clean_spaces

// In llama.cpp's order. "default" (also an absent key) is llama.cpp's fallback list, not GPT-2's.
inline constexpr gguf_pre_tokenizer table[] = {
    {"default", pk::llama_cpp_default, merges, no_bos, clean},
    {"minicpm5", pk::minicpm5, no_merges, no_bos, clean},
    {"llama3", pk::llama3, no_merges, bos, clean},
    {"llama-v3", pk::llama3, no_merges, bos, clean},
    {"llama-bpe", pk::llama3, no_merges, bos, clean},
    {"falcon3", pk::llama3, no_merges, bos, clean},
    {"falcon-h1", pk::llama3, no_merges, bos, clean},
    {"pixtral", pk::llama3, no_merges, bos, clean},
    {"midm-2.0", pk::llama3, no_merges, bos, clean},
    {"lfm2", pk::llama3, no_merges, bos, clean},
    {"jina-v5-nano", pk::llama3, no_merges, bos, clean},
    {"deepseek-llm", pk::deepseek_llm, merges, no_bos, keep},
    {"deepseek-coder", pk::deepseek_coder, merges, no_bos, keep},
    {"deepseek-v3", pk::deepseek_v3, merges, no_bos, keep},
    {"spark2_5", pk::spark2_5, merges, no_bos, keep},
    {"youtu", pk::youtu, no_merges, no_bos, keep},
    {"falcon", pk::falcon, merges, no_bos, clean},
    {"mpt", pk::gpt2, merges, no_bos, clean},
    {"starcoder", pk::starcoder, merges, no_bos, clean},
    {"gpt-2", pk::gpt2, merges, no_bos, clean},
    {"phi-2", pk::gpt2, merges, no_bos, clean},
    {"jina-es", pk::gpt2, merges, no_bos, clean},
    {"jina-de", pk::gpt2, merges, no_bos, clean},
    {"gigachat", pk::gpt2, merges, no_bos, clean},
    {"jina-v2-es", pk::gpt2, merges, no_bos, clean},
    {"jina-v2-de", pk::gpt2, merges, no_bos, clean},
    {"a.x-4.0", pk::gpt2, merges, no_bos, clean},
    {"mellum", pk::gpt2, merges, no_bos, clean},
    {"modern-bert", pk::gpt2, merges, no_bos, clean},
    {"jais-2", pk::jais2, merges, no_bos, clean},
    {"refact", pk::starcoder, merges, no_bos, clean},
    {"command-r", pk::starcoder, merges, no_bos, keep},
    {"qwen2", pk::qwen2, merges, no_bos, keep},
    {"deepseek-r1-qwen", pk::qwen2, merges, no_bos, keep},
    {"kormo", pk::qwen2, merges, no_bos, keep},
    {"f2llmv2", pk::qwen2, merges, no_bos, keep},
    {"qwen35", pk::qwen35, merges, no_bos, keep},
    {"stablelm2", pk::qwen2, merges, no_bos, clean},
    {"olmo", pk::gpt2, merges, no_bos, clean},
    {"dbrx", pk::llama3, merges, no_bos, clean},
    {"smaug-bpe", pk::llama3, merges, no_bos, clean},
    {"poro-chat", pk::bloom, merges, no_bos, keep},
    {"glm4", pk::llama3, merges, no_bos, clean},
    {"chatglm-bpe", pk::llama3, merges, no_bos, clean},
    {"viking", pk::viking, merges, no_bos, keep},
    {"jais", pk::gpt2, merges, no_bos, clean},
    {"tekken", pk::tekken, no_merges, bos, keep},
    {"smollm", pk::starcoder, merges, no_bos, keep},
    {"codeshell", pk::starcoder, merges, no_bos, clean},
    {"bloom", pk::bloom, merges, no_bos, clean},
    {"gpt3-finnish", pk::bloom, merges, no_bos, clean},
    {"exaone", pk::starcoder, merges, no_bos, clean},
    {"exaone4", pk::gpt2, merges, no_bos, clean},
    {"exaone-moe", pk::exaone_moe, merges, no_bos, clean},
    {"chameleon", pk::chameleon, merges, bos, keep},
    {"minerva-7b", pk::starcoder, merges, no_bos, clean},
    {"megrez", pk::qwen2, merges, no_bos, clean},
    {"gpt-4o", pk::gpt4o, merges, no_bos, keep},
    {"llama4", pk::gpt4o, merges, no_bos, keep},
    {"kanana2", pk::gpt4o, merges, no_bos, keep},
    {"talkie", pk::gpt4o, merges, no_bos, keep},
    // llama.cpp writes GPT-4o's expression with \p{M} in its lookaheads for this one; that is what
    // the original expression (which we use) says already.
    {"granite-embed-multi-97m", pk::gpt4o, no_merges, no_bos, keep},
    {"tiny_aya", pk::tiny_aya, merges, no_bos, keep},
    {"cohere2moe", pk::tiny_aya, merges, no_bos, keep},
    {"superbpe", pk::superbpe, merges, no_bos, keep},
    {"trillion", pk::gpt2, merges, no_bos, keep},
    {"granite-docling", pk::gpt2, merges, no_bos, keep},
    {"bailingmoe", pk::bailingmoe, merges, no_bos, keep},
    {"bailingmoe2", pk::bailingmoe, merges, no_bos, keep},
    {"llada-moe", pk::bailingmoe, merges, no_bos, keep},
    {"seed-coder", pk::seed_coder, merges, no_bos, keep},
    {"hunyuan", pk::qwen2, merges, no_bos, keep},
    {"hunyuan-dense", pk::deepseek_v3, merges, no_bos, keep},
    {"hy_v4", pk::deepseek_v3, merges, no_bos, keep},
    {"joyai-llm", pk::deepseek_v3, merges, no_bos, keep},
    {"kimi-k2", pk::kimi_k2, merges, no_bos, keep},
    {"ufakzeka", pk::ufakzeka, merges, no_bos, keep},
    {"grok-2", pk::qwen2, merges, no_bos, keep},
    {"afmoe", pk::afmoe, merges, no_bos, keep},
    {"laguna", pk::laguna, merges, no_bos, keep},
    {"minimax-m2", pk::gpt4o, merges, no_bos, keep},
    {"solar-open", pk::qwen2, merges, no_bos, keep},
    {"mellum2", pk::starcoder, merges, no_bos, clean},
};

}  // namespace detail::gguf_pre

// Every name, in llama.cpp's order.
inline constexpr std::span<const gguf_pre_tokenizer> gguf_pre_tokenizers() noexcept { return detail::gguf_pre::table; }

// The entry of a tokenizer.ggml.pre value, or nullptr when llama.cpp has no byte-level BPE
// pre-tokenizer of that name. An absent key means "default" (llama.cpp warns and uses its fallback).
NEXTTOK_DECL const gguf_pre_tokenizer* find_gguf_pre_tokenizer(std::string_view name) noexcept;

NEXTTOK_DECL std::optional<pre_tokenizer_kind> pre_tokenizer_kind_from_gguf(std::string_view name) noexcept;

// "'default', 'minicpm5', ..." for error messages.
NEXTTOK_DECL std::string gguf_pre_tokenizer_names();

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/tokenizer/impl/gguf_pre_tokenizers.ipp>
#endif
