// The token table of a tokenizer: for each id its text, score and type, the reverse map from text
// to id, the byte-fallback tokens and the special ids. Format-neutral: the GGUF and llama2.c
// loaders fill it, the SentencePiece-BPE and byte-level BPE encoders read it.
//
// Texts are stored as the model stores them: SentencePiece pieces spell a space as U+2581 ("▁"),
// byte-fallback tokens are "<0xNN>", byte-level BPE tokens spell each byte with GPT-2's printable
// character for it (a space is "Ġ"), added tokens are plain text. Owns its strings (copied out of
// the file mapping).
// Thread-safety: immutable after construction; concurrent reads are safe.
#pragma once

#include <nexttok/detail/config.hpp>
#include <nexttok/error.hpp>
#include <nexttok/types.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace nexttok {

// Values as in GGUF's tokenizer.ggml.token_type and llama.cpp's llama_token_type.
enum class token_type : std::uint8_t {
    normal = 1,        // an ordinary piece, produced by merges
    unknown = 2,       // <unk>
    control = 3,       // <s>, </s>: never produced from plain text, decoded as nothing
    user_defined = 4,  // always matched whole in the input, before merging
    unused = 5,        // kept in the table, never emitted
    byte = 6,          // byte fallback <0xNN>
};

inline constexpr bool is_valid_token_type(std::int64_t raw) noexcept { return raw >= 1 && raw <= 6; }

struct token_data {
    std::string text;
    float score = 0.0f;  // SentencePiece: log-probability of the piece; higher merges first
    token_type type = token_type::normal;
};

struct special_token_ids {
    token_id bos = no_token;
    token_id eos = no_token;
    token_id unk = no_token;
};

namespace detail {

// The byte of a byte-fallback token text "<0xNN>" (hex digits in either case), or nullopt.
inline std::optional<unsigned char> parse_byte_token(std::string_view text) noexcept {
    if (text.size() != 6 || text.substr(0, 3) != "<0x" || text[5] != '>') return std::nullopt;
    const auto hex = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        return -1;
    };
    const int hi = hex(text[3]), lo = hex(text[4]);
    if (hi < 0 || lo < 0) return std::nullopt;
    return static_cast<unsigned char>(hi * 16 + lo);
}

// Transparent hash so that the text -> id map is searched with a string_view, without a copy.
struct string_hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};

}  // namespace detail

class vocabulary {
public:
    // Throws invalid_argument_error when the table is inconsistent (empty, a special id out of range,
    // a byte token whose text is not <0xNN>). Loaders check the file first and report the same
    // problems as format_error with the file and offset.
    NEXTTOK_DECL vocabulary(std::vector<token_data> tokens, special_token_ids special);

    std::size_t size() const noexcept { return tokens_.size(); }
    bool contains(token_id id) const noexcept { return id >= 0 && static_cast<std::size_t>(id) < tokens_.size(); }

    // Unchecked access (the caller has validated id).
    const token_data& operator[](token_id id) const noexcept { return tokens_[static_cast<std::size_t>(id)]; }
    // Checked access: invalid_argument_error naming the id.
    const token_data& at(token_id id) const {
        check_id(id);
        return (*this)[id];
    }
    void check_id(token_id id) const {
        if (!contains(id)) [[unlikely]]
            fail_id(id);
    }

    // The id whose text is exactly `text`, of any type; no_token when there is none.
    NEXTTOK_DECL token_id find(std::string_view text) const;

    // The byte-fallback token <0xNN> of `b`, or no_token.
    token_id byte_token(unsigned char b) const noexcept { return byte_tokens_[b]; }
    // True when all 256 byte tokens exist, so that any text can be encoded without <unk>.
    bool has_byte_fallback() const noexcept { return has_byte_fallback_; }

    const special_token_ids& special() const noexcept { return special_; }
    token_id bos() const noexcept { return special_.bos; }
    token_id eos() const noexcept { return special_.eos; }
    token_id unk() const noexcept { return special_.unk; }

    // Control, user-defined and unknown tokens with a non-empty text, longest text first: the texts
    // the encoder may match whole in the input before merging.
    std::span<const token_id> special_texts() const noexcept { return special_texts_; }

private:
    NEXTTOK_DECL void check_special(const char* what, token_id id) const;
    [[noreturn]] NEXTTOK_DECL void fail_id(token_id id) const;

    std::vector<token_data> tokens_;  // (vocab_size)
    special_token_ids special_;
    std::unordered_map<std::string, token_id, detail::string_hash, std::equal_to<>> by_text_;
    std::array<token_id, 256> byte_tokens_{};
    bool has_byte_fallback_ = false;
    std::vector<token_id> special_texts_;
};

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/tokenizer/impl/vocabulary.ipp>
#endif
