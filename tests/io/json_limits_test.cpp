// Bounded JSON: parse_json_bounded refuses nesting beyond max_json_depth while parsing, and the
// quoting helpers bound what an error message can repeat of its input, whatever its size or depth.
#include <nexttok/io/json_limits.hpp>
#include <nexttok/io/safetensors.hpp>

#include "file_patch.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>

namespace nexttok {
namespace {

using json = nlohmann::json;

std::string nested_arrays(std::size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const format_error& e) {
        return e.what();
    }
    ADD_FAILURE() << "no format_error";
    return {};
}

TEST(json_limits, depth_64_is_read_and_65_is_refused_while_parsing) {
    const json ok = parse_json_bounded(nested_arrays(64), "x.json");
    const json* inner = &ok;
    int levels = 0;
    while (inner->is_array()) {
        ++levels;
        inner = inner->empty() ? nullptr : &(*inner)[0];
        if (inner == nullptr) break;
    }
    EXPECT_EQ(levels, 64);
    const std::string msg = error_of([] { (void)parse_json_bounded(nested_arrays(65), "x.json"); });
    EXPECT_EQ(msg, "x.json: JSON nested deeper than 64 levels (objects and arrays)");
    // Objects count as levels too, and a smaller limit applies as given.
    EXPECT_NO_THROW((void)parse_json_bounded(R"({"a": {"b": [1]}})", "y", 3));
    EXPECT_NE(error_of([] { (void)parse_json_bounded(R"({"a": {"b": [[1]]}})", "y", 3); }).find("deeper than 3 levels"),
              std::string::npos);
}

TEST(json_limits, a_million_levels_give_a_short_error_not_a_stack_overflow) {
    const std::string text = "{\"a\":" + nested_arrays(1'000'000) + "}";
    const std::string msg = error_of([&] { (void)parse_json_bounded(text, "deep.json"); });
    EXPECT_LT(msg.size(), 300u) << msg.substr(0, 400);
    EXPECT_NE(msg.find("deep.json"), std::string::npos) << msg;
    EXPECT_NE(msg.find("64 levels"), std::string::npos) << msg;
    // The same through ordered_json, which the chat templates use.
    EXPECT_THROW((void)parse_json_bounded<nlohmann::ordered_json>(text, "deep.json"), format_error);
}

TEST(json_limits, syntax_errors_stay_parse_errors) {
    EXPECT_THROW((void)parse_json_bounded("{\"a\": ", "x.json"), json::parse_error);
}

TEST(json_limits, quote_text_cuts_at_a_character_boundary_and_escapes_control_bytes) {
    EXPECT_EQ(quote_text("short"), "short");
    EXPECT_EQ(quote_text(std::string(100, 'a'), 10), std::string(10, 'a') + "...");
    // "é" is two bytes: a cut inside it backs off to before it.
    EXPECT_EQ(quote_text("abcdefghi\xc3\xa9xyz", 10), "abcdefghi...");
    EXPECT_EQ(quote_text("a\nb\x7f"), "a\\x0ab\\x7f");
    EXPECT_EQ(quote_text(std::string(100'000, 'z')).size(), max_quote_bytes + 3);
}

TEST(json_limits, quote_json_is_short_for_long_wide_or_deep_values) {
    EXPECT_EQ(quote_json(json{{"a", 1}, {"b", {true, nullptr, "x"}}}), R"({"a":1,"b":[true,null,"x"]})");
    EXPECT_EQ(quote_json(json(std::string(100'000, 'q'))), "\"" + std::string(79, 'q') + "...");
    const std::string wide = quote_json(json(std::vector<int>(1'000'000, 7)));
    EXPECT_EQ(wide.size(), max_quote_bytes + 3);
    EXPECT_EQ(wide.substr(0, 6), "[7,7,7");
    // A value built in memory 100 000 levels deep (no parser bounded it): quoted without recursing
    // through it (past 8 levels it writes "...").
    json deep = json::array();
    for (int i = 0; i < 100'000; ++i) {
        json outer = json::array();
        outer.push_back(std::move(deep));
        deep = std::move(outer);
    }
    EXPECT_EQ(quote_json(deep), "[[[[[[[[[...]]]]]]]]]");
    EXPECT_EQ(quote_json(json("bad \xff byte")), "\"bad \xef\xbf\xbd byte\"");  // invalid UTF-8 -> U+FFFD
}

// A safetensors file whose JSON header is `header`, followed by `data_bytes` zero bytes.
test::bytes make_safetensors(std::string header, std::size_t data_bytes) {
    while (header.size() % 8 != 0) header += ' ';
    test::bytes b(8 + header.size() + data_bytes, 0);
    const std::uint64_t n = header.size();
    std::memcpy(b.data(), &n, 8);
    std::memcpy(b.data() + 8, header.data(), header.size());
    return b;
}

TEST(json_limits, safetensors_header_nested_a_million_levels) {
    test::temp_dir dir;
    const auto path = dir.write("deep.safetensors", make_safetensors("{\"w\":" + nested_arrays(1'000'000) + "}", 0));
    const std::string msg = error_of([&] { safetensors_file f(path); });
    EXPECT_LT(msg.size(), 300u) << msg.substr(0, 400);
    EXPECT_NE(msg.find("deep.safetensors"), std::string::npos) << msg;
    EXPECT_NE(msg.find("header"), std::string::npos) << msg;
    EXPECT_NE(msg.find("deeper than 64 levels"), std::string::npos) << msg;
}

TEST(json_limits, safetensors_errors_quote_long_names_short) {
    test::temp_dir dir;
    const std::string name(100'000, 'n');
    const auto dtype = dir.write(
        "dtype.safetensors",
        make_safetensors("{\"" + name + "\":{\"dtype\":\"" + name + "\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8));
    const std::string msg = error_of([&] { safetensors_file f(dtype); });
    EXPECT_LT(msg.size(), 300u) << msg.substr(0, 400);
    EXPECT_NE(msg.find("unknown dtype 'nnnn"), std::string::npos) << msg;
    // A syntax error inside a 100 KB string literal: nlohmann's message repeats the literal read so far.
    const auto syntax = dir.write("syntax.safetensors", make_safetensors("{\"" + name + "\n\": 1}", 0));
    const std::string msg2 = error_of([&] { safetensors_file f(syntax); });
    EXPECT_LT(msg2.size(), 300u) << msg2.substr(0, 400);
    EXPECT_NE(msg2.find("syntax.safetensors: header (JSON from offset 0x8): not valid JSON at line 1, column 100003 "
                        "(byte offset 0x186a2)"),
              std::string::npos)
        << msg2;
}

}  // namespace
}  // namespace nexttok
