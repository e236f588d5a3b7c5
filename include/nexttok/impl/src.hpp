// The compiled part of nexttok, for programs built with NEXTTOK_SEPARATE_COMPILATION (see
// detail/config.hpp): one source file of the program, compiled with that macro like the rest, holds
//
//   #include <nexttok/impl/src.hpp>
//
// and nothing else. The CMake target nexttok::compiled is that file, built as a static library.
#pragma once

#if !defined(NEXTTOK_SEPARATE_COMPILATION)
#error \
    "<nexttok/impl/src.hpp> is for builds that define NEXTTOK_SEPARATE_COMPILATION (header-only builds need no source file)"
#endif

// Every kernel set here (kernels/detail/passes.hpp), for the entry points of kernels/impl/passes.ipp.
#define NEXTTOK_DETAIL_COMPILING_LIBRARY 1
#include <nexttok/nexttok.hpp>

// chat
#include <nexttok/chat/impl/chat_message.ipp>
#include <nexttok/chat/impl/chat_template.ipp>
#include <nexttok/chat/impl/encode_chat.ipp>
#include <nexttok/chat/impl/load_chat_template.ipp>

// tokenizer
#include <nexttok/tokenizer/impl/bpe_tokenizer.ipp>
#include <nexttok/tokenizer/impl/detokenizer.ipp>
#include <nexttok/tokenizer/impl/encode_continuation.ipp>
#include <nexttok/tokenizer/impl/gguf_pre_tokenizers.ipp>
#include <nexttok/tokenizer/impl/gguf_vocab.ipp>
#include <nexttok/tokenizer/impl/gpt2_tokenizer_files.ipp>
#include <nexttok/tokenizer/impl/hf_tokenizer_file.ipp>
#include <nexttok/tokenizer/impl/llama2c_tokenizer_file.ipp>
#include <nexttok/tokenizer/impl/load_tokenizer_file.ipp>
#include <nexttok/tokenizer/impl/model_tokenizer.ipp>
#include <nexttok/tokenizer/impl/pre_tokenizer.ipp>
#include <nexttok/tokenizer/impl/spm_model_file.ipp>
#include <nexttok/tokenizer/impl/spm_tokenizer.ipp>
#include <nexttok/tokenizer/impl/tokenizer.ipp>
#include <nexttok/tokenizer/impl/vocabulary.ipp>

// io, model, tensor
#include <nexttok/io/impl/byte_reader.ipp>
#include <nexttok/io/impl/gguf.ipp>
#include <nexttok/io/impl/gguf_writer.ipp>
#include <nexttok/io/impl/json_file.ipp>
#include <nexttok/io/impl/json_limits.ipp>
#include <nexttok/io/impl/mapped_file.ipp>
#include <nexttok/io/impl/safetensors.ipp>
#include <nexttok/model/impl/architecture.ipp>
#include <nexttok/model/impl/gguf_loader.ipp>
#include <nexttok/model/impl/hf_loader.ipp>
#include <nexttok/model/impl/llama2c_loader.ipp>
#include <nexttok/model/impl/load_model.ipp>
#include <nexttok/model/impl/model.ipp>
#include <nexttok/model/impl/model_config.ipp>
#include <nexttok/model/impl/random_model.ipp>
#include <nexttok/model/impl/rope_scaling.ipp>
#include <nexttok/model/impl/tensor_check.ipp>

// kernels, cache, decoder, detail
#include <nexttok/kernels/impl/buffers.ipp>
#include <nexttok/kernels/impl/kernel_isa.ipp>
#include <nexttok/kernels/impl/passes.ipp>
#include <nexttok/kernels/impl/thread_pool.ipp>

// sampling, stopping, generation, batching, speculative
#include <nexttok/batching/impl/request_registry.ipp>
#include <nexttok/batching/impl/scheduled_request.ipp>
#include <nexttok/batching/impl/scheduler_options.ipp>
#include <nexttok/generation/impl/generation_options.ipp>
#include <nexttok/generation/impl/logprobs.ipp>
#include <nexttok/generation/impl/make_generation.ipp>
#include <nexttok/sampling/impl/banned_sequences.ipp>
#include <nexttok/sampling/impl/candidates.ipp>
#include <nexttok/sampling/impl/categorical.ipp>
#include <nexttok/sampling/impl/dry.ipp>
#include <nexttok/sampling/impl/dynamic_chain.ipp>
#include <nexttok/sampling/impl/dynamic_temperature.ipp>
#include <nexttok/sampling/impl/epsilon_cutoff.ipp>
#include <nexttok/sampling/impl/eta_cutoff.ipp>
#include <nexttok/sampling/impl/logit_bias.ipp>
#include <nexttok/sampling/impl/make_sampler.ipp>
#include <nexttok/sampling/impl/min_new_tokens.ipp>
#include <nexttok/sampling/impl/min_p.ipp>
#include <nexttok/sampling/impl/mirostat.ipp>
#include <nexttok/sampling/impl/mirostat_v2.ipp>
#include <nexttok/sampling/impl/no_repeat_ngram.ipp>
#include <nexttok/sampling/impl/penalties.ipp>
#include <nexttok/sampling/impl/sampler_order.ipp>
#include <nexttok/sampling/impl/sampling_error.ipp>
#include <nexttok/sampling/impl/sampling_options.ipp>
#include <nexttok/sampling/impl/temperature.ipp>
#include <nexttok/sampling/impl/top_n_sigma.ipp>
#include <nexttok/sampling/impl/top_p.ipp>
#include <nexttok/sampling/impl/typical_p.ipp>
#include <nexttok/sampling/impl/validate.ipp>
#include <nexttok/sampling/impl/xtc.ipp>
#include <nexttok/speculative/impl/generate_speculative.ipp>
#include <nexttok/speculative/impl/quantized_copy.ipp>
#include <nexttok/speculative/impl/rejection_sampler.ipp>
#include <nexttok/stopping/impl/max_length.ipp>
#include <nexttok/stopping/impl/max_new_tokens.ipp>
#include <nexttok/stopping/impl/stop_strings.ipp>
#include <nexttok/stopping/impl/stop_token_sequences.ipp>
#include <nexttok/stopping/impl/stop_when.ipp>
#include <nexttok/stopping/impl/token_set.ipp>
