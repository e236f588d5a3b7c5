// The definitions of spm_model_file.hpp.
#pragma once

#include <nexttok/tokenizer/spm_model_file.hpp>
#include <nexttok/error.hpp>
#include <nexttok/io/mapped_file.hpp>
#include <nexttok/tokenizer/detail/protobuf_reader.hpp>
#include <nexttok/tokenizer/spm_tokenizer.hpp>
#include <nexttok/tokenizer/tokenizer.hpp>
#include <nexttok/tokenizer/vocabulary.hpp>
#include <nexttok/types.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace nexttok {

namespace detail {

struct spm_model_data {
    std::vector<token_data> pieces;
    std::int64_t unk_id = 0, bos_id = 1, eos_id = 2;
    std::uint64_t model_type = 1;  // UNIGRAM, SentencePiece's default
    bool add_dummy_prefix = true;
    std::size_t trainer_offset = 0;  // for the error messages about ids
};

inline token_data read_spm_piece(protobuf_reader r, std::size_t index) {
    const std::string what = "piece " + std::to_string(index);
    token_data t;
    std::optional<std::size_t> type_offset;
    std::uint64_t raw_type = 1;
    while (!r.done()) {
        const protobuf_field f = r.next_field(what);
        if (f.number == 1) {
            r.expect(f, wire_type::length_delimited, what + " text");
            t.text = std::string(r.read_string(what + " text"));
        } else if (f.number == 2) {
            r.expect(f, wire_type::fixed32, what + " score");
            t.score = r.read_float(what + " score");
        } else if (f.number == 3) {
            r.expect(f, wire_type::varint, what + " type");
            type_offset = f.offset;
            raw_type = r.read_varint(what + " type");
        } else {
            r.skip(f, what);
        }
    }
    if (raw_type < 1 || raw_type > 6)
        r.fail_at(type_offset.value_or(0), what + " type", "expected 1..6, found " + std::to_string(raw_type));
    t.type = static_cast<token_type>(raw_type);
    if (t.type == token_type::byte && !parse_byte_token(t.text))
        r.fail_at(type_offset.value_or(0), what, "a byte piece must read <0xNN>, found '" + t.text + "'");
    return t;
}

inline void read_spm_trainer_spec(protobuf_reader r, spm_model_data& m) {
    const auto as_id = [](std::uint64_t v) {
        return static_cast<std::int64_t>(v);
    };  // int32 -1 is sign-extended
    while (!r.done()) {
        const protobuf_field f = r.next_field("trainer_spec");
        const auto varint = [&](const char* what) {
            r.expect(f, wire_type::varint, what);
            return r.read_varint(what);
        };
        switch (f.number) {
            case 3:
                m.model_type = varint("trainer_spec.model_type");
                break;
            case 40:
                m.unk_id = as_id(varint("trainer_spec.unk_id"));
                break;
            case 41:
                m.bos_id = as_id(varint("trainer_spec.bos_id"));
                break;
            case 42:
                m.eos_id = as_id(varint("trainer_spec.eos_id"));
                break;
            default:
                r.skip(f, "trainer_spec");
                break;
        }
    }
}

inline void read_spm_normalizer_spec(protobuf_reader r, spm_model_data& m) {
    while (!r.done()) {
        const protobuf_field f = r.next_field("normalizer_spec");
        if (f.number == 3) {
            r.expect(f, wire_type::varint, "normalizer_spec.add_dummy_prefix");
            m.add_dummy_prefix = r.read_varint("normalizer_spec.add_dummy_prefix") != 0;
        } else {
            r.skip(f, "normalizer_spec");
        }
    }
}

inline spm_model_data read_spm_model(std::span<const std::byte> bytes, const std::string& file_name) {
    protobuf_reader r(bytes, file_name);
    spm_model_data m;
    while (!r.done()) {
        const protobuf_field f = r.next_field("ModelProto");
        if (f.number >= 1 && f.number <= 3) r.expect(f, wire_type::length_delimited, "ModelProto");
        if (f.number == 1) {
            m.pieces.push_back(
                read_spm_piece(r.read_message("piece " + std::to_string(m.pieces.size())), m.pieces.size()));
        } else if (f.number == 2) {
            m.trainer_offset = f.offset;
            read_spm_trainer_spec(r.read_message("trainer_spec"), m);
        } else if (f.number == 3) {
            read_spm_normalizer_spec(r.read_message("normalizer_spec"), m);
        } else {
            r.skip(f, "ModelProto");
        }
    }
    if (m.pieces.empty()) r.fail_at(0, "ModelProto", "no pieces (is this a SentencePiece model?)");
    if (m.pieces.size() > static_cast<std::size_t>(INT32_MAX))
        r.fail_at(0, "ModelProto", std::to_string(m.pieces.size()) + " pieces do not fit token_id");
    return m;
}

inline token_id spm_special_id(const protobuf_reader& r, const spm_model_data& m, std::int64_t id, const char* what) {
    if (id == -1) return no_token;
    if (id < 0 || static_cast<std::uint64_t>(id) >= m.pieces.size())
        r.fail_at(
            m.trainer_offset, what,
            "expected a piece id below " + std::to_string(m.pieces.size()) + " or -1, found " + std::to_string(id));
    return static_cast<token_id>(id);
}

NEXTTOK_DECL spm_model parse_spm_model(std::span<const std::byte> bytes, const std::string& file_name) {
    spm_model_data m = read_spm_model(bytes, file_name);
    const protobuf_reader r(bytes, file_name);
    if (m.model_type != 2)
        throw unsupported_error(file_name + ": trainer_spec.model_type " + std::to_string(m.model_type) +
                                (m.model_type == 1 ? " (unigram, SentencePiece's default)" : "") +
                                " is not supported (supported: 2, BPE)");
    special_token_ids special;
    special.unk = spm_special_id(r, m, m.unk_id, "trainer_spec.unk_id");
    special.bos = spm_special_id(r, m, m.bos_id, "trainer_spec.bos_id");
    special.eos = spm_special_id(r, m, m.eos_id, "trainer_spec.eos_id");
    spm_options options;  // BOS before prompts, no EOS, as llama.cpp's defaults for SentencePiece
    options.add_space_prefix = m.add_dummy_prefix;
    return {vocabulary(std::move(m.pieces), special), options};
}

inline spm_model load_spm_model(const std::filesystem::path& path) {
    const mapped_file file(path);
    return parse_spm_model(file.bytes(), file.name());
}

}  // namespace detail

NEXTTOK_DECL vocabulary load_spm_vocabulary(const std::filesystem::path& path) {
    return detail::load_spm_model(path).vocab;
}

NEXTTOK_DECL tokenizer load_spm_tokenizer(const std::filesystem::path& path) {
    detail::spm_model m = detail::load_spm_model(path);
    return tokenizer(spm_tokenizer(std::move(m.vocab), m.options));
}

}  // namespace nexttok
