// Arbitrary bytes through real vocabularies loaded once at start-up from the shared data: byte 0
// picks the vocabulary, byte 1 the mode and flags; the rest is text to encode, or token ids to
// decode (little-endian int16, so negative and out-of-range ids come often).
// Properties checked (each documented by the tokenizer headers):
//   - every id encode() returns is in the vocabulary;
//   - decode(encode(text)) == text for valid UTF-8 text without special-token parsing and without
//     BOS, on the vocabularies that can spell every byte (byte fallback or byte-level) and do no
//     clean-up (for SentencePiece: text without U+2581, its space symbol);
//   - decode() of ids throws invalid_argument_error iff some id is outside the vocabulary;
//   - the streaming detokenizer's push()es and flush() concatenate to decode() whenever decode()
//     is valid UTF-8, and every push() is valid UTF-8.
#include <nexttok/detail/utf8.hpp>
#include <nexttok/io/gguf.hpp>
#include <nexttok/tokenizer/detokenizer.hpp>
#include <nexttok/tokenizer/gguf_vocab.hpp>
#include <nexttok/tokenizer/gpt2_tokenizer_files.hpp>
#include <nexttok/tokenizer/spm_model_file.hpp>

#include "fuzz_support.hpp"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

struct vocab_entry {
    const char* name;
    nexttok::tokenizer tok;
    bool round_trips;  // decode(encode(text)) == text holds for every text
};

std::vector<vocab_entry> load_all() {
    const auto d = nexttok::fuzz::data_dir();
    std::vector<vocab_entry> out;
    const auto add = [&](const char* name, bool round_trips, const std::function<nexttok::tokenizer()>& load) {
        try {
            out.push_back({name, load(), round_trips});
        } catch (const std::exception& e) {
            std::fprintf(stderr, "encode_decode: skipping %s: %s\n", name, e.what());
        }
    };
    const auto gguf = [&](const char* relative) {
        return [path = d / relative] {
            return nexttok::load_tokenizer(nexttok::gguf_file(path));
        };
    };
    add("stories260K tok512.model (SentencePiece, byte fallback)", true,
        [&] { return nexttok::load_spm_tokenizer(d / "models/stories260K/tok512.model"); });
    add("GPT-2 encoder.json + vocab.bpe", true, [&] {
        return nexttok::load_gpt2_tokenizer(d / "tokenizers/gpt2/encoder.json", d / "tokenizers/gpt2/vocab.bpe");
    });
    add("Llama-3 encoder.json + vocab.bpe", true, [&] {
        return nexttok::load_gpt2_tokenizer(d / "tokenizers/llama3/encoder.json", d / "tokenizers/llama3/vocab.bpe",
                                            nexttok::pre_tokenizer_kind::llama3);
    });
    add("Qwen2 (tiny-qwen2-f32.gguf)", true, gguf("models/random/tiny-qwen2-f32.gguf"));
    add("Llama-2 SentencePiece (ggml-vocab-llama-spm.gguf)", true,
        gguf("tokenizers/llama.cpp-vectors/ggml-vocab-llama-spm.gguf"));
    add("deepseek-llm (ggml-vocab-deepseek-llm.gguf)", false,
        gguf("tokenizers/llama.cpp-vectors/ggml-vocab-deepseek-llm.gguf"));
    add("starcoder (ggml-vocab-starcoder.gguf)", false, gguf("tokenizers/llama.cpp-vectors/ggml-vocab-starcoder.gguf"));
    if (out.empty()) {
        std::fprintf(stderr, "encode_decode: no vocabulary found under %s (set NEXTTOK_DATA)\n", d.c_str());
        std::abort();
    }
    return out;
}

const std::vector<vocab_entry>& vocabularies() {
    static const std::vector<vocab_entry> all = load_all();
    return all;
}

// decode() and the streaming detokenizer on ids that are all in the vocabulary.
void check_streaming(const nexttok::tokenizer& tok, const std::vector<nexttok::token_id>& ids,
                     const std::string& whole) {
    nexttok::detokenizer stream(tok);
    std::string streamed;
    for (const nexttok::token_id id : ids) {
        const std::string piece = stream.push(id);
        if (!nexttok::detail::is_valid_utf8(piece)) __builtin_trap();
        streamed += piece;
    }
    streamed += stream.flush();
    if (nexttok::detail::is_valid_utf8(whole) && streamed != whole) __builtin_trap();
}

void encode_text(const vocab_entry& v, std::string_view text, bool add_bos, bool parse_special) {
    const std::vector<nexttok::token_id> ids = v.tok.encode(text, add_bos, parse_special);
    for (const nexttok::token_id id : ids)
        if (id < 0 || static_cast<std::size_t>(id) >= v.tok.vocab_size()) __builtin_trap();
    const std::string decoded = v.tok.decode(ids);
    // SentencePiece spells spaces as U+2581 and decodes every U+2581 as a space, so a text that
    // holds one comes back changed (as with the reference implementation).
    const bool spm_space = v.tok.spm() != nullptr && text.find("\xe2\x96\x81") != std::string_view::npos;
    if (v.round_trips && !add_bos && !parse_special && !spm_space && nexttok::detail::is_valid_utf8(text) &&
        decoded != text)
        __builtin_trap();
    check_streaming(v.tok, ids, decoded);
}

void decode_ids(const vocab_entry& v, const std::uint8_t* data, std::size_t size) {
    std::vector<nexttok::token_id> ids;
    bool all_valid = true;
    for (std::size_t i = 0; i + 1 < size; i += 2) {
        std::int16_t raw;
        std::memcpy(&raw, data + i, 2);
        // Ids spread over the whole vocabulary, with a few past its end and negative ones.
        const std::int64_t id = raw < 0 ? raw : raw * static_cast<std::int64_t>(v.tok.vocab_size() + 64) / 32768;
        ids.push_back(static_cast<nexttok::token_id>(id));
        all_valid = all_valid && id >= 0 && id < static_cast<std::int64_t>(v.tok.vocab_size());
    }
    std::string whole;
    try {
        whole = v.tok.decode(ids);
    } catch (const nexttok::invalid_argument_error&) {
        if (all_valid) __builtin_trap();
        return;
    }
    if (!all_valid) __builtin_trap();
    check_streaming(v.tok, ids, whole);
}

}  // namespace

// Loading takes several seconds under the sanitizers: done before libFuzzer's per-input timer runs.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
    for (const vocab_entry& v : vocabularies())
        std::fprintf(stderr, "encode_decode: %zu tokens: %s\n", v.tok.vocab_size(), v.name);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 2) return 0;
    const auto& all = vocabularies();
    const vocab_entry& v = all[data[0] % all.size()];
    const std::uint8_t flags = data[1];
    if ((flags & 1) == 0) {
        encode_text(v, nexttok::fuzz::as_chars(data + 2, size - 2), (flags & 2) != 0, (flags & 4) != 0);
    } else {
        decode_ids(v, data + 2, size - 2);
    }
    return 0;
}
