// SentencePiece's tokenizer.model (protobuf). Oracle: the same tokenizer in llama2.c's tok512.bin,
// which llama2.c exported from this very model: every piece, score, type and special id must be
// equal. Malformed protobuf (truncated anywhere, bad varints, wire types, lengths, piece types) must
// be a format_error naming the file, the offset and the field, never a crash.
#include <nexttok/error.hpp>
#include <nexttok/tokenizer.hpp>
#include <nexttok/tokenizer/detail/protobuf_reader.hpp>

#include "file_patch.hpp"
#include "test_data.hpp"
#include "tokenizer_test_util.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace nexttok {
namespace {

void expect_same_vocabulary(const vocabulary& a, const vocabulary& b) {
    ASSERT_EQ(a.size(), b.size());
    for (token_id id = 0; id < static_cast<token_id>(a.size()); ++id) {
        EXPECT_EQ(a[id].text, b[id].text) << "token " << id;
        EXPECT_EQ(a[id].score, b[id].score) << "token " << id;
        EXPECT_EQ(a[id].type, b[id].type) << "token " << id;
    }
    EXPECT_EQ(a.bos(), b.bos());
    EXPECT_EQ(a.eos(), b.eos());
    EXPECT_EQ(a.unk(), b.unk());
    EXPECT_EQ(a.has_byte_fallback(), b.has_byte_fallback());
}

TEST(spm_model_file, tok512_model_equals_tok512_bin) {
    NEXTTOK_REQUIRE_DATA(test::tok512_model);
    NEXTTOK_REQUIRE_DATA(test::tok512_bin);
    const tokenizer model = load_spm_tokenizer(test::data_path(test::tok512_model));
    const vocabulary& bin = test::tok512_tokenizer().vocab();
    expect_same_vocabulary(model.vocab(), bin);
    EXPECT_EQ(model.vocab().size(), 512u);
    EXPECT_EQ(model.vocab()[3].type, token_type::byte);  // <0x00>
    EXPECT_EQ(model.vocab()[1].type, token_type::control);
    EXPECT_TRUE(model.default_add_bos());
    ASSERT_NE(model.spm(), nullptr);
    EXPECT_TRUE(model.spm()->options().add_space_prefix);  // add_dummy_prefix absent: SentencePiece's default
    // llama2.c's encoding of its documented prompt.
    EXPECT_EQ(model.encode("Once upon a time", true), (std::vector<token_id>{1, 403, 407, 261, 378}));
    expect_same_vocabulary(load_spm_vocabulary(test::data_path(test::tok512_model)), bin);
}

TEST(spm_model_file, the_hugging_face_directory_carries_the_same_model) {
    NEXTTOK_REQUIRE_DATA("models/stories260K/hf/tokenizer.model");
    NEXTTOK_REQUIRE_DATA(test::tok512_bin);
    expect_same_vocabulary(load_spm_vocabulary(test::data_path("models/stories260K/hf/tokenizer.model")),
                           test::tok512_tokenizer().vocab());
}

// Every prefix of the file is either rejected with a nexttok error or, when the cut falls exactly
// between two top-level fields after the trainer_spec, a valid shorter model.
TEST(spm_model_file, every_truncation_is_rejected_cleanly) {
    NEXTTOK_REQUIRE_DATA(test::tok512_model);
    const test::bytes full = test::read_bytes(test::data_path(test::tok512_model));
    std::size_t n_format = 0, n_loaded = 0;
    for (std::size_t n = 0; n < full.size(); ++n) {
        const auto bytes = std::as_bytes(std::span(full.data(), n));
        try {
            (void)detail::parse_spm_model(bytes, "tok512.model");
            ++n_loaded;
        } catch (const format_error& e) {
            ++n_format;
            const std::string what = e.what();
            ASSERT_NE(what.find("tok512.model"), std::string::npos) << what;
            ASSERT_NE(what.find("offset 0x"), std::string::npos) << what;
        } catch (const unsupported_error&) {
            // cut after a whole piece: no trainer_spec, so SentencePiece's default model type (unigram)
        }
    }
    EXPECT_LE(n_loaded, 1u);
    EXPECT_GT(n_format, full.size() * 9 / 10);
}

TEST(spm_model_file, a_truncated_file_names_the_field_and_offset) {
    NEXTTOK_REQUIRE_DATA(test::tok512_model);
    test::bytes b = test::read_bytes(test::data_path(test::tok512_model));
    // Cut inside piece 5: each byte piece takes 12 bytes here, pieces start after 2-byte headers.
    const std::size_t cut = test::find(b, "<0x02>") + 3;
    b.resize(cut);
    const test::temp_dir dir;
    try {
        (void)load_spm_tokenizer(dir.write("cut.model", b));
        FAIL() << "no exception";
    } catch (const format_error& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("cut.model"), std::string::npos) << what;
        EXPECT_NE(what.find("piece 5"), std::string::npos) << what;
        EXPECT_NE(what.find("truncated"), std::string::npos) << what;
    }
}

// A minimal protobuf writer for hand-made models.
struct pb {
    std::string out;
    pb& varint(std::uint64_t v) {
        do {
            out += static_cast<char>((v & 0x7F) | (v >= 0x80 ? 0x80 : 0));
            v >>= 7;
        } while (v != 0);
        return *this;
    }
    pb& tag(std::uint32_t field, std::uint32_t type) { return varint(field << 3 | type); }
    pb& field_varint(std::uint32_t field, std::uint64_t v) { return tag(field, 0).varint(v); }
    pb& field_bytes(std::uint32_t field, const std::string& s) {
        tag(field, 2).varint(s.size());
        out += s;
        return *this;
    }
    pb& field_float(std::uint32_t field, float f) {
        tag(field, 5);
        char raw[4];
        std::memcpy(raw, &f, 4);
        out.append(raw, 4);
        return *this;
    }
};

std::string piece(const std::string& text, float score, std::uint64_t type) {
    return pb{}.field_bytes(1, text).field_float(2, score).field_varint(3, type).out;
}
// <unk> <s> </s> a b ab, model_type BPE, plus `extra` appended to the ModelProto.
std::string small_model(const std::string& extra = "", std::int64_t bos_id = 1) {
    pb m;
    m.field_bytes(1, piece("<unk>", 0, 2)).field_bytes(1, piece("<s>", 0, 3)).field_bytes(1, piece("</s>", 0, 3));
    m.field_bytes(1, piece("\xE2\x96\x81", -1, 1)).field_bytes(1, piece("a", -2, 1)).field_bytes(1, piece("b", -3, 1));
    m.field_bytes(1, piece("ab", -4, 1));
    m.field_bytes(2, pb{}.field_varint(3, 2).field_varint(41, static_cast<std::uint64_t>(bos_id)).out);
    m.field_bytes(3, pb{}.field_bytes(1, "identity").field_varint(3, 0).out);
    return m.out + extra;
}

class spm_small_model : public ::testing::Test {
protected:
    tokenizer load(const std::string& content) const {
        return load_spm_tokenizer(dir_.write("small.model", test::bytes(content.begin(), content.end())));
    }
    template <class Error>
    void expect_error(const std::string& content, const std::vector<std::string>& needles) const {
        try {
            (void)load(content);
            ADD_FAILURE() << "no exception";
        } catch (const Error& e) {
            for (const std::string& n : needles)
                EXPECT_NE(std::string(e.what()).find(n), std::string::npos) << "'" << n << "' not in: " << e.what();
        }
    }
    test::temp_dir dir_;
};

TEST_F(spm_small_model, reads_pieces_special_ids_and_the_dummy_prefix_flag) {
    const tokenizer tok = load(small_model());
    EXPECT_EQ(tok.vocab_size(), 7u);
    EXPECT_EQ(tok.vocab()[6].text, "ab");
    EXPECT_EQ(tok.vocab()[6].score, -4.0f);
    EXPECT_FALSE(tok.spm()->options().add_space_prefix);  // add_dummy_prefix: false
    EXPECT_EQ(tok.encode("ab", false), (std::vector<token_id>{6}));
    // An unknown field is skipped; bos_id -1 (sign-extended to 10 bytes) means none.
    EXPECT_EQ(load(small_model(pb{}.field_bytes(99, "future").field_float(100, 1.0f).out, -1)).bos(), no_token);
}

TEST_F(spm_small_model, malformed_protobuf_is_a_format_error) {
    expect_error<format_error>(small_model("\x0a\x05"
                                           "ab"),
                               {"small.model", "offset 0x", "runs past the end"});
    expect_error<format_error>(small_model(std::string("\x98\x06") + std::string(11, '\xFF')), {"varint"});  // field 99
    expect_error<format_error>(small_model("\x0b"), {"wire type 3", "groups"});
    expect_error<format_error>(small_model("\x0f"), {"wire type 7"});
    expect_error<format_error>(small_model(std::string("\x00\x01", 2)), {"field number 0"});
    expect_error<format_error>(small_model(pb{}.field_bytes(1, piece("c", 0, 9)).out),
                               {"piece 7 type", "1..6, found 9"});
    expect_error<format_error>(small_model(pb{}.field_bytes(1, piece("<0xZZ>", 0, 6)).out), {"piece 7", "<0xNN>"});
    expect_error<format_error>(small_model(pb{}.field_varint(1, 5).out), {"ModelProto", "wire type 0, expected 2"});
    expect_error<format_error>(small_model("", 7), {"trainer_spec.bos_id", "below 7", "found 7"});
    expect_error<format_error>("", {"small.model", "no pieces"});
}

TEST_F(spm_small_model, a_model_that_is_not_bpe_is_unsupported) {
    pb m;
    m.field_bytes(1, piece("<unk>", 0, 2));
    expect_error<unsupported_error>(m.out, {"small.model", "model_type 1", "unigram"});
}

// Random corruptions of the real file: each loads or throws a nexttok error, never crashes.
TEST(spm_model_file, random_corruptions_are_handled) {
    NEXTTOK_REQUIRE_DATA(test::tok512_model);
    const test::bytes full = test::read_bytes(test::data_path(test::tok512_model));
    std::mt19937 rng(7);
    std::size_t n_rejected = 0;
    for (int trial = 0; trial < 2000; ++trial) {
        test::bytes b = full;
        for (int k = 0; k < 3; ++k) b[rng() % b.size()] = static_cast<char>(rng());
        try {
            (void)detail::parse_spm_model(std::as_bytes(std::span(b.data(), b.size())), "fuzz.model");
        } catch (const error&) {
            ++n_rejected;
        }
    }
    EXPECT_GT(n_rejected, 0u);
}

}  // namespace
}  // namespace nexttok
