// GPT-2's reversible map between the 256 byte values and 256 printable Unicode characters
// (bytes_to_unicode() in OpenAI's encoder.py, HF's ByteLevel pre-tokenizer and decoder). Byte-level
// BPE vocabularies spell every token with these characters: a space is "Ġ" (U+0120), a newline "Ċ"
// (U+010A), and the bytes of "é" are "Ã©". So any byte string, valid UTF-8 or not, has a spelling.
//
// Bytes that are printable and not a space in Latin-1 ('!'..'~', '¡'..'¬', '®'..'ÿ') stand for
// themselves; the other 68, in increasing order, become U+0100 + n. Every character of the table
// is 2 UTF-8 bytes or fewer, and all of them lie below U+0144.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace nexttok::detail {

class byte_level_table {
public:
    static const byte_level_table& get() {
        static const byte_level_table table;
        return table;
    }

    // The UTF-8 spelling of byte b (1 or 2 bytes).
    std::string_view symbol(unsigned char b) const noexcept { return {symbols_[b].data(), lengths_[b]}; }

    // Appends the byte-level spelling of `bytes` to out.
    void append_encoded(std::string_view bytes, std::string& out) const {
        for (const char c : bytes) out.append(symbol(static_cast<unsigned char>(c)));
    }

    // Appends the bytes that a byte-level spelling stands for. A character outside the table (a
    // token written in plain text, such as an added token) is copied as its own UTF-8 bytes, and so
    // is a byte that does not start a well-formed character: nothing is lost.
    void append_decoded(std::string_view text, std::string& out) const {
        for (std::size_t i = 0; i < text.size();) {
            const auto b0 = static_cast<unsigned char>(text[i]);
            if (b0 < 0x80) {
                out += text[i];  // ASCII: the table maps printable ASCII to itself, the rest is not in it
                i += 1;
                continue;
            }
            if (b0 >= 0xC2 && b0 <= 0xDF && i + 1 < text.size()) {
                const auto b1 = static_cast<unsigned char>(text[i + 1]);
                if ((b1 & 0xC0) == 0x80) {
                    const unsigned cp = (static_cast<unsigned>(b0 & 0x1F) << 6) | (b1 & 0x3F);
                    if (cp < byte_of_.size() && byte_of_[cp] >= 0) {
                        out += static_cast<char>(byte_of_[cp]);
                    } else {
                        out.append(text.substr(i, 2));
                    }
                    i += 2;
                    continue;
                }
            }
            out += text[i];  // a longer character or a stray byte: kept byte by byte
            i += 1;
        }
    }

    std::string decode(std::string_view text) const {
        std::string out;
        out.reserve(text.size());
        append_decoded(text, out);
        return out;
    }

private:
    static constexpr bool stands_for_itself(unsigned b) noexcept {
        return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    }

    byte_level_table() {
        byte_of_.fill(-1);
        unsigned n_shifted = 0;
        for (unsigned b = 0; b < 256; ++b) {
            const unsigned cp = stands_for_itself(b) ? b : 0x100 + n_shifted++;
            byte_of_[cp] = static_cast<std::int16_t>(b);
            if (cp < 0x80) {
                symbols_[b][0] = static_cast<char>(cp);
                lengths_[b] = 1;
            } else {
                symbols_[b][0] = static_cast<char>(0xC0 | (cp >> 6));
                symbols_[b][1] = static_cast<char>(0x80 | (cp & 0x3F));
                lengths_[b] = 2;
            }
        }
    }

    std::array<std::array<char, 2>, 256> symbols_{};
    std::array<std::uint8_t, 256> lengths_{};
    std::array<std::int16_t, 0x144> byte_of_{};  // code point -> byte, -1 when the character is not in the table
};

}  // namespace nexttok::detail
