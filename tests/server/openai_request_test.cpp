// The server's request parsing (examples/server/openai_request.hpp): every OpenAI field lands in its
// generation_options field, the flags' defaults stay where a field is absent, unknown fields are
// ignored, and every bad field is a request_error that names it.
#include "../../examples/server/openai_request.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

using server::endpoint;
using server::openai_request;
using server::parse_openai_request;
using server::request_error;

constexpr std::int64_t vocab = 512;

openai_request completion(const std::string& body, const nexttok::generation_options& defaults = {}) {
    return parse_openai_request(body, endpoint::completions, defaults, vocab);
}
openai_request chat(const std::string& body) { return parse_openai_request(body, endpoint::chat, {}, vocab); }

// The request_error of `body`: its param and whether its message names `field`.
void expect_error(const std::string& body, endpoint kind, const std::string& field) {
    try {
        parse_openai_request(body, kind, {}, vocab);
        ADD_FAILURE() << "no error for " << body;
    } catch (const request_error& e) {
        EXPECT_EQ(e.param(), field) << body << ": " << e.what();
        EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << body << ": " << e.what();
    }
}

TEST(openai_request, fields_map_onto_generation_options) {
    const openai_request r =
        completion(R"({"model": "m", "prompt": "Once", "max_tokens": 7, "temperature": 0.5, "top_p": 0.9,
        "top_k": 20, "min_p": 0.1, "presence_penalty": 0.25, "frequency_penalty": -0.5, "repeat_penalty": 1.3,
        "logit_bias": {"426": -100, "3": 2.5}, "stop": ["a", "bc"], "seed": 42, "ignore_eos": true, "n": 3,
        "stream": true, "stream_options": {"include_usage": true}, "logprobs": 2, "unknown_field": {"x": 1}, "user": "u"})");
    EXPECT_EQ(r.model, "m");
    EXPECT_EQ(r.prompt_text, "Once");
    EXPECT_EQ(r.options.max_new_tokens, 7);
    EXPECT_FLOAT_EQ(r.options.sampling.temperature, 0.5f);
    EXPECT_FLOAT_EQ(r.options.sampling.top_p, 0.9f);
    EXPECT_EQ(r.options.sampling.top_k, 20);
    EXPECT_FLOAT_EQ(r.options.sampling.min_p, 0.1f);
    EXPECT_FLOAT_EQ(r.options.sampling.presence_penalty, 0.25f);
    EXPECT_FLOAT_EQ(r.options.sampling.frequency_penalty, -0.5f);
    EXPECT_FLOAT_EQ(r.options.sampling.repeat_penalty, 1.3f);
    ASSERT_EQ(r.options.sampling.logit_bias.size(), 2u);
    EXPECT_EQ(r.options.sampling.logit_bias[0].id, 426);
    EXPECT_FLOAT_EQ(r.options.sampling.logit_bias[0].bias, -100.0f);
    EXPECT_EQ(r.options.sampling.logit_bias[1].id, 3);
    EXPECT_EQ(r.options.stop, (std::vector<std::string>{"a", "bc"}));
    EXPECT_EQ(r.options.sampling.seed, 42u);
    EXPECT_TRUE(r.options.ignore_eos);
    EXPECT_EQ(r.n, 3);
    EXPECT_TRUE(r.stream);
    EXPECT_TRUE(r.include_usage);
    EXPECT_TRUE(r.logprobs);
    EXPECT_EQ(r.top_logprobs, 2);
    EXPECT_EQ(r.options.n_logprobs, 2);
    EXPECT_EQ(r.options.n_samples, 1);
    // Choice i: seed + i, as generate_n's sample i.
    EXPECT_EQ(server::choice_options(r, 2).sampling.seed, 44u);
}

TEST(openai_request, absent_fields_keep_the_flag_defaults) {
    nexttok::generation_options defaults;
    defaults.max_new_tokens = 33;
    defaults.sampling.temperature = 0.0f;
    defaults.stop = {"END"};
    defaults.sampling.seed = 9;
    const openai_request r = completion(R"({"prompt": [1, 2, 3], "temperature": null})", defaults);
    EXPECT_EQ(r.prompt_ids, (std::vector<nexttok::token_id>{1, 2, 3}));
    EXPECT_FALSE(r.prompt_text);
    EXPECT_EQ(r.options.max_new_tokens, 33);
    EXPECT_EQ(r.options.sampling.temperature, 0.0f);
    EXPECT_EQ(r.options.stop, (std::vector<std::string>{"END"}));
    EXPECT_EQ(r.options.sampling.seed, 9u);
    EXPECT_EQ(r.n, 1);
    EXPECT_FALSE(r.stream);
    EXPECT_FALSE(r.logprobs);
    EXPECT_EQ(completion(R"({"prompt": "x", "stop": "s"})").options.stop, (std::vector<std::string>{"s"}));
    EXPECT_EQ(completion(R"({"prompt": ["one string"], "max_tokens": 40.0})").prompt_text, "one string");
    EXPECT_EQ(completion(R"({"prompt": "x", "max_tokens": 40.0})").options.max_new_tokens, 40);
}

TEST(openai_request, chat_messages_and_logprobs) {
    const openai_request r = chat(R"({"messages": [{"role": "system", "content": "Be brief."},
        {"role": "user", "content": [{"type": "text", "text": "Hi "}, {"type": "text", "text": "there"}]},
        {"role": "assistant", "content": null}], "max_tokens": 5, "max_completion_tokens": 9, "logprobs": true, "top_logprobs": 3})");
    ASSERT_EQ(r.messages.size(), 3u);
    EXPECT_EQ(r.messages[1]["content"], "Hi there");
    EXPECT_EQ(r.messages[2]["content"], "");
    EXPECT_EQ(r.options.max_new_tokens, 9);  // max_completion_tokens wins
    EXPECT_TRUE(r.logprobs);
    EXPECT_EQ(r.options.n_logprobs, 3);
    const openai_request p = chat(R"({"messages": [{"role": "user", "content": "x"}], "n_probs": 4})");
    EXPECT_TRUE(p.logprobs);
    EXPECT_EQ(p.options.n_logprobs, 4);
}

TEST(openai_request, errors_name_the_field) {
    const auto c = endpoint::completions;
    expect_error(R"({"prompt": "x", "max_tokens": -1})", c, "max_tokens");
    expect_error(R"({"prompt": "x", "max_tokens": "40"})", c, "max_tokens");
    expect_error(R"({"prompt": "x", "max_tokens": 1.5})", c, "max_tokens");
    expect_error(R"({"prompt": "x", "temperature": "hot"})", c, "temperature");
    expect_error(R"({"prompt": "x", "temperature": -0.1})", c, "temperature");
    expect_error(R"({"prompt": "x", "top_p": 0})", c, "top_p");
    expect_error(R"({"prompt": "x", "top_k": -1})", c, "top_k");
    expect_error(R"({"prompt": "x", "min_p": 2})", c, "min_p");
    expect_error(R"({"prompt": "x", "repeat_penalty": 0})", c, "repeat_penalty");
    expect_error(R"({"prompt": "x", "stop": 5})", c, "stop");
    expect_error(R"({"prompt": "x", "stop": ["ok", ""]})", c, "stop");
    expect_error(R"({"prompt": "x", "n": 0})", c, "n");
    expect_error(R"({"prompt": "x", "seed": "s"})", c, "seed");
    expect_error(R"({"prompt": "x", "stream": "yes"})", c, "stream");
    expect_error(R"({"prompt": "x", "stream_options": 1})", c, "stream_options");
    expect_error(R"({"prompt": "x", "logit_bias": {"abc": 1}})", c, "logit_bias");
    expect_error(R"({"prompt": "x", "logit_bias": {"512": 1}})", c, "logit_bias");
    expect_error(R"({"prompt": "x", "logit_bias": {"5": "1"}})", c, "logit_bias");
    expect_error(R"({"prompt": "x", "logprobs": true})", c, "logprobs");
    expect_error(R"({"prompt": "x", "ignore_eos": 1})", c, "ignore_eos");
    expect_error(R"({"prompt": "x", "model": 3})", c, "model");
    expect_error(R"({"max_tokens": 3})", c, "prompt");
    expect_error(R"({"prompt": ["a", "b"]})", c, "prompt");
    expect_error(R"({"prompt": [1, 600]})", c, "prompt");
    expect_error(R"({"prompt": 12})", c, "prompt");
    const auto h = endpoint::chat;
    expect_error(R"({"prompt": "x"})", h, "messages");
    expect_error(R"({"messages": []})", h, "messages");
    expect_error(R"({"messages": [{"content": "x"}]})", h, "messages");
    expect_error(R"({"messages": [{"role": "user", "content": 3}]})", h, "messages");
    expect_error(R"({"messages": [{"role": "user", "content": [{"type": "image_url"}]}]})", h, "messages");
    expect_error(R"({"messages": [{"role": "user", "content": "x"}], "top_logprobs": 2})", h, "top_logprobs");
    expect_error(R"({"messages": [{"role": "user", "content": "x"}], "max_completion_tokens": -2})", h,
                 "max_completion_tokens");
}

TEST(openai_request, malformed_bodies) {
    for (const char* body : {"{bad", "", "[1, 2]", "\"text\"", "{\"prompt\": \"x\",}"}) {
        try {
            completion(body);
            ADD_FAILURE() << "no error for " << body;
        } catch (const request_error& e) {
            EXPECT_TRUE(e.param().empty()) << body;
            EXPECT_NE(std::string(e.what()).find("JSON"), std::string::npos) << body << ": " << e.what();
        }
    }
}

// A syntax error names the line and column of the body.
TEST(openai_request, syntax_errors_name_the_line_and_column) {
    try {
        completion("{\"prompt\": \"x\",\n \"max_tokens\": 12,,\n}");
        ADD_FAILURE() << "no error";
    } catch (const request_error& e) {
        EXPECT_NE(std::string(e.what()).find("the body: not valid JSON at line 2, column 19 (byte offset 0x22)"),
                  std::string::npos)
            << e.what();
    }
}

// A deeply nested body is refused while it is parsed, with a short message (not the value).
TEST(openai_request, deep_nesting_is_refused) {
    const std::string deep =
        "{\"prompt\": \"x\", \"extra\": " + std::string(100000, '[') + std::string(100000, ']') + "}";
    try {
        completion(deep);
        ADD_FAILURE() << "no error for a body nested 100000 levels deep";
    } catch (const request_error& e) {
        EXPECT_NE(std::string(e.what()).find("deeper than 64 levels"), std::string::npos) << e.what();
        EXPECT_LT(std::string(e.what()).size(), 200u);
    }
    const std::string ok = "{\"prompt\": \"x\", \"extra\": " + std::string(60, '[') + std::string(60, ']') + "}";
    EXPECT_EQ(completion(ok).options.max_new_tokens, nexttok::generation_options{}.max_new_tokens);
}

}  // namespace
