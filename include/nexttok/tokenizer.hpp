// Module header: text <-> token ids. tokenizer is the type the rest of nexttok uses; build it with
// load_tokenizer(gguf_file), load_llama2c_tokenizer(path), load_spm_tokenizer(tokenizer.model),
// load_hf_tokenizer(tokenizer.json) or load_gpt2_tokenizer(encoder.json, vocab.bpe, kind), and
// stream its output through a detokenizer so that no half UTF-8 character is ever shown.
#pragma once

#include <nexttok/tokenizer/bpe_merge.hpp>
#include <nexttok/tokenizer/bpe_tokenizer.hpp>
#include <nexttok/tokenizer/decode_state.hpp>
#include <nexttok/tokenizer/detokenizer.hpp>
#include <nexttok/tokenizer/encode_continuation.hpp>
#include <nexttok/tokenizer/gguf_pre_tokenizers.hpp>
#include <nexttok/tokenizer/gguf_vocab.hpp>
#include <nexttok/tokenizer/gpt2_tokenizer_files.hpp>
#include <nexttok/tokenizer/hf_tokenizer_file.hpp>
#include <nexttok/tokenizer/llama2c_tokenizer_file.hpp>
#include <nexttok/tokenizer/load_tokenizer_file.hpp>
#include <nexttok/tokenizer/model_tokenizer.hpp>
#include <nexttok/tokenizer/pre_tokenizer.hpp>
#include <nexttok/tokenizer/pre_tokenizer_kind.hpp>
#include <nexttok/tokenizer/spm_model_file.hpp>
#include <nexttok/tokenizer/spm_tokenizer.hpp>
#include <nexttok/tokenizer/tokenizer.hpp>
#include <nexttok/tokenizer/vocabulary.hpp>
