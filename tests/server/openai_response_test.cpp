// The server's answer shapes (examples/server/openai_response.hpp), field for field as OpenAI's.
#include "../../examples/server/openai_response.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

using server::json;

server::response_meta meta(server::endpoint kind, bool logprobs = false) {
    server::response_meta m;
    m.kind = kind;
    m.id = kind == server::endpoint::chat ? "chatcmpl-1" : "cmpl-1";
    m.created = 1700000000;
    m.model = "stories260K.gguf";
    m.logprobs = logprobs;
    return m;
}

TEST(openai_response, completion_body) {
    server::choice_output c{
        .index = 0, .text = "Hello", .finish_reason = "stop", .error = {}, .logprobs = {}, .n_tokens = 2};
    const json j =
        server::completion_body(meta(server::endpoint::completions), {c}, {.prompt_tokens = 5, .completion_tokens = 2});
    EXPECT_EQ(j.dump(), R"({"id":"cmpl-1","object":"text_completion","created":1700000000,"model":"stories260K.gguf",)"
                        R"("choices":[{"index":0,"text":"Hello","logprobs":null,"finish_reason":"stop"}],)"
                        R"("usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}})");
}

TEST(openai_response, chat_body) {
    server::choice_output a{
        .index = 0, .text = "Hi", .finish_reason = "length", .error = {}, .logprobs = {}, .n_tokens = 1};
    server::choice_output b{
        .index = 1, .text = "Yo", .finish_reason = "stop", .error = {}, .logprobs = {}, .n_tokens = 1};
    const json j =
        server::completion_body(meta(server::endpoint::chat), {a, b}, {.prompt_tokens = 3, .completion_tokens = 2});
    EXPECT_EQ(j["object"], "chat.completion");
    EXPECT_EQ(j["choices"][1].dump(),
              R"({"index":1,"message":{"role":"assistant","content":"Yo"},"logprobs":null,"finish_reason":"stop"})");
    EXPECT_EQ(j["usage"]["total_tokens"], 5);
}

TEST(openai_response, chunks) {
    const auto chat = meta(server::endpoint::chat);
    server::chunk_part role;
    role.role_only = true;
    EXPECT_EQ(server::chunk_json(chat, role, false)["choices"][0]["delta"].dump(),
              R"({"role":"assistant","content":""})");
    server::chunk_part text;
    text.index = 1;
    text.text = " there";
    const json t = server::chunk_json(chat, text, true);
    EXPECT_EQ(t["object"], "chat.completion.chunk");
    EXPECT_EQ(t["choices"][0].dump(),
              R"({"index":1,"delta":{"content":" there"},"logprobs":null,"finish_reason":null})");
    EXPECT_TRUE(t.contains("usage") && t["usage"].is_null());
    server::chunk_part end;
    end.finish_reason = "stop";
    EXPECT_EQ(server::chunk_json(chat, end, false)["choices"][0].dump(),
              R"({"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"})");
    const json c = server::chunk_json(meta(server::endpoint::completions), end, false);
    EXPECT_EQ(c["object"], "text_completion");
    EXPECT_EQ(c["choices"][0].dump(), R"({"index":0,"text":"","logprobs":null,"finish_reason":"stop"})");
    EXPECT_FALSE(c.contains("usage"));
    const json u = server::usage_chunk_json(chat, {.prompt_tokens = 4, .completion_tokens = 6});
    EXPECT_EQ(u["choices"].dump(), "[]");
    EXPECT_EQ(u["usage"]["total_tokens"], 10);
    EXPECT_EQ(server::sse(json{{"a", 1}}), "data: {\"a\":1}\n\n");
}

TEST(openai_response, logprobs) {
    const std::vector<server::token_logprob_entry> tokens = {{"He", -0.5f, {{"He", -0.5f}, {"A", -1.5f}}, 0},
                                                             {"llo", -0.25f, {{"llo", -0.25f}, {"llo", -3.0f}}, 2}};
    const json c = server::logprobs_json(server::endpoint::completions, tokens);
    EXPECT_EQ(
        c.dump(),
        R"({"tokens":["He","llo"],"token_logprobs":[-0.5,-0.25],"top_logprobs":[{"He":-0.5,"A":-1.5},{"llo":-0.25}],"text_offset":[0,2]})");
    const json h = server::logprobs_json(server::endpoint::chat, tokens);
    EXPECT_EQ(
        h["content"][0].dump(),
        R"({"token":"He","logprob":-0.5,"bytes":[72,101],"top_logprobs":[{"token":"He","logprob":-0.5,"bytes":[72,101]},{"token":"A","logprob":-1.5,"bytes":[65]}]})");
    // In a body, only when asked.
    server::choice_output out{
        .index = 0, .text = "Hello", .finish_reason = "length", .error = {}, .logprobs = tokens, .n_tokens = 2};
    EXPECT_TRUE(
        server::completion_body(meta(server::endpoint::completions), {out}, {})["choices"][0]["logprobs"].is_null());
    EXPECT_EQ(server::completion_body(meta(server::endpoint::completions, true), {out}, {})["choices"][0]["logprobs"],
              c);
}

TEST(openai_response, finish_reasons_and_errors) {
    using nexttok::finish_reason;
    for (auto r : {finish_reason::eos, finish_reason::stop_token, finish_reason::stop_string})
        EXPECT_EQ(server::openai_finish_reason(r), "stop");
    for (auto r : {finish_reason::max_new_tokens, finish_reason::cache_full, finish_reason::max_length,
                   finish_reason::cancelled, finish_reason::deadline})
        EXPECT_EQ(server::openai_finish_reason(r), "length");
    EXPECT_EQ(server::error_body("bad", "invalid_request_error", "max_tokens").dump(),
              R"({"error":{"message":"bad","type":"invalid_request_error","param":"max_tokens","code":null}})");
    EXPECT_EQ(server::error_body("gone", "invalid_request_error", {}, "not_found")["error"]["param"], nullptr);
    // A choice whose generation failed: finish_reason "error" and the message as an OpenAI error
    // object in the whole answer (the status line has already gone out).
    EXPECT_EQ(server::openai_finish_reason(finish_reason::error), "error");
    server::choice_output failed{
        .index = 0, .text = "Hi", .finish_reason = "error", .error = "generation: NaN", .logprobs = {}, .n_tokens = 1};
    const json body = server::completion_body(meta(server::endpoint::completions), {failed}, {});
    EXPECT_EQ(body["choices"][0]["finish_reason"], "error");
    EXPECT_EQ(body["error"].dump(), R"({"message":"generation: NaN","type":"server_error","param":null,"code":null})");
    EXPECT_FALSE(
        server::completion_body(meta(server::endpoint::completions), {server::choice_output{}}, {}).contains("error"));
    // Half a UTF-8 character (a byte token's piece) does not throw: it becomes U+FFFD.
    EXPECT_EQ(server::dump(json{{"t", std::string("a\xE2\x96")}}), "{\"t\":\"a\xEF\xBF\xBD\"}");
}

}  // namespace
