// The chat-template engine: bytes [0, 2) are the length n of the template (little-endian, capped by
// what remains), [2, 2 + n) the template, the rest a messages JSON read with the project's bounded
// parser (a fixed conversation when it is not valid JSON). Parse, then render with and without
// the generation prompt. A bad template, or one that raises, must be a chat_template_error; one
// that loops for ever or builds huge strings must hit the renderer's limits, not the fuzzer's.
#include <nexttok/chat/chat_template.hpp>
#include <nexttok/io/json_limits.hpp>

#include "fuzz_support.hpp"

#include <algorithm>
#include <cstdint>
#include <string>

namespace {

using json = nlohmann::ordered_json;

json messages_from(std::string_view text) {
    static const json fixed = json::parse(R"([{"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"},
        {"role": "user", "content": "Tell me a story"}])");
    try {
        return nexttok::parse_json_bounded<json>(text, "messages");
    } catch (const nexttok::error&) {
        return fixed;
    } catch (const json::exception&) {
        return fixed;
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 2) return 0;
    const std::string_view in = nexttok::fuzz::as_chars(data + 2, size - 2);
    const std::size_t n = std::min<std::size_t>(data[0] | (std::size_t{data[1]} << 8), in.size());
    const std::string_view source = in.substr(0, n);
    const json messages = messages_from(in.substr(n));
    const json variables = {{"bos_token", "<s>"}, {"eos_token", "</s>"}};
    try {
        nexttok::chat_template t(source, "fuzz");
        t.set_clock([] { return std::chrono::system_clock::time_point(std::chrono::seconds(1721952000)); });
        for (const bool add_generation_prompt : {false, true}) {
            try {
                (void)t.render(messages, add_generation_prompt, variables);
            } catch (const nexttok::error&) {
            }
        }
    } catch (const nexttok::error&) {
    }
    return 0;
}
