// The server's OpenAI request parser on arbitrary bodies, for both endpoints (the first byte picks
// it): a bad body must be a request_error (a 400), never another exception. A chat request that
// parses is then rendered with the ChatML template, as the server does for a model without one.
#include <nexttok/chat/chat_template.hpp>

#include "fuzz_support.hpp"
#include "openai_request.hpp"

#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 1) return 0;
    static const nexttok::chat_template chatml = nexttok::chat_template::chatml();
    const auto kind = (data[0] & 1) != 0 ? server::endpoint::chat : server::endpoint::completions;
    const std::string body(nexttok::fuzz::as_chars(data + 1, size - 1));
    try {
        const server::openai_request r = server::parse_openai_request(body, kind, {}, 512);
        if (kind == server::endpoint::chat) (void)chatml.render(nlohmann::ordered_json(r.messages), true);
        for (std::int64_t i = 0; i < r.n; ++i) (void)server::choice_options(r, i);
    } catch (const server::request_error&) {
    } catch (const nexttok::error&) {
    }
    return 0;
}
