// The oracle: ../shared/data/chat_templates/*.json, real templates of seven model families with
// the exact text Python's Jinja2 renders for each case in Hugging Face's apply_chat_template
// environment (strftime_now fixed to 26 Jul 2024). Every case must match byte for byte; every case
// marked "error" must raise, with the template's own message in ours.
#include <nexttok/chat.hpp>
#include <nexttok/io/gguf.hpp>
#include <nexttok/io/gguf_writer.hpp>

#include "file_patch.hpp"
#include "test_data.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace nexttok {
namespace {

using ordered_json = nlohmann::ordered_json;

// 26 Jul 2024, 12:00 UTC: the same calendar day in every time zone from UTC-11 to UTC+11.
std::chrono::system_clock::time_point fixed_date() {
    return std::chrono::sys_days{std::chrono::year{2024} / std::chrono::July / 26} + std::chrono::hours{12};
}

std::vector<std::filesystem::path> template_files() {
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(test::data_path("chat_templates")))
        if (entry.path().extension() == ".json") files.push_back(entry.path());
    std::ranges::sort(files);
    return files;
}

TEST(chat_template_oracle, every_case_of_every_model_matches_jinja2) {
    NEXTTOK_REQUIRE_DATA("chat_templates");
    const std::vector<std::filesystem::path> files = template_files();
    ASSERT_GE(files.size(), 7u) << "expected the seven model families of the README";
    int n_cases = 0, n_errors = 0;
    for (const std::filesystem::path& file : files) {
        SCOPED_TRACE(file.filename().string());
        const ordered_json data = ordered_json::parse(std::ifstream(file));
        chat_template t(data.at("template").get<std::string>(), file.stem().string());
        t.set_clock(fixed_date);
        ordered_json variables = ordered_json::object();
        for (const char* key : {"bos_token", "eos_token"})  // a model without one has no such variable
            if (data.contains(key) && !data[key].is_null()) variables[key] = data[key];
        int index = 0;
        for (const ordered_json& c : data.at("cases")) {
            SCOPED_TRACE("case " + std::to_string(index++));
            const bool add_generation_prompt = c.at("add_generation_prompt").get<bool>();
            if (c.value("error", false)) {
                const std::string message = c.at("message").get<std::string>();
                try {
                    const std::string out = t.render(c.at("messages"), add_generation_prompt, variables);
                    ADD_FAILURE() << "expected an error containing '" << message << "', rendered:\n" << out;
                } catch (const chat_template_error& e) {
                    EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
                }
                ++n_errors;
            } else {
                EXPECT_EQ(t.render(c.at("messages"), add_generation_prompt, variables),
                          c.at("expected").get<std::string>());
            }
            ++n_cases;
        }
    }
    EXPECT_GT(n_errors, 0);
    std::printf("chat templates: %zu models, %d cases (%d errors)\n", files.size(), n_cases, n_errors);
}

// The same templates, given as chat_message values rather than JSON, render the same text.
TEST(chat_template_oracle, chat_messages_render_as_their_json) {
    NEXTTOK_REQUIRE_DATA("chat_templates");
    const ordered_json data =
        ordered_json::parse(std::ifstream(test::data_path("chat_templates/Qwen-Qwen2.5-7B-Instruct.json")));
    const chat_template t(data.at("template").get<std::string>(), "Qwen2.5");
    const std::vector<chat_message> messages = {{"system", "Be brief."}, {"user", "Hi"}};
    EXPECT_EQ(t.render(messages, true),
              "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
}

// A tokenizer_config.json's template, as a string or in a named list; none when the field is absent.
TEST(load_chat_template, reads_tokenizer_config_json) {
    const test::temp_dir dir;  // per process: no other run or test writes there
    const auto write = [&](const char* name, const std::string& text) {
        return dir.write(name, test::bytes(text.begin(), text.end()));
    };
    const auto plain = write("plain.json", R"({"chat_template": "{{ messages[0].content }}!"})");
    const auto named =
        write("named.json",
              R"({"chat_template": [{"name": "default", "template": "D"}, {"name": "tool_use", "template": "T"}]})");
    const auto none = write("none.json", R"({"bos_token": "<s>"})");
    const std::vector<chat_message> m = {{"user", "hi"}};
    EXPECT_EQ(load_chat_template_from_tokenizer_config(plain)->render(m, false), "hi!");
    EXPECT_EQ(load_chat_template_from_tokenizer_config(named)->render(m, false), "D");
    EXPECT_EQ(load_chat_template_from_tokenizer_config(named, "tool_use")->render(m, false), "T");
    EXPECT_FALSE(load_chat_template_from_tokenizer_config(none).has_value());
    EXPECT_FALSE(load_chat_template_from_tokenizer_config(named, "missing").has_value());
}

// A configuration whose template is not where or what it should be: a format_error naming the file
// and the field; a template that does not parse: a chat_template_error naming it, the line and column.
TEST(load_chat_template, errors_name_the_file_and_the_field) {
    test::temp_dir dir;
    const auto error_of = [&](const std::string& text) -> std::string {
        const auto path = dir.path() / "tokenizer_config.json";
        std::ofstream(path) << text;
        try {
            (void)load_chat_template_from_tokenizer_config(path);
        } catch (const error& e) {
            return e.what();
        }
        return "no error";
    };
    const std::string file = (dir.path() / "tokenizer_config.json").string();
    EXPECT_EQ(error_of(R"({"chat_template": 7})"),
              file + ": field 'chat_template': expected a string or a list of {name, template}");
    for (const char* list : {R"([{"name": "default"}])", R"([{"name": 1, "template": "x"}])", R"(["x"])"})
        EXPECT_EQ(error_of(std::string(R"({"chat_template": )") + list + "}"),
                  file + ": field 'chat_template': each entry must be {\"name\": string, \"template\": string}")
            << list;
    EXPECT_EQ(error_of(R"({"chat_template": "hi {{ name"})")
                  .rfind("chat template 'tokenizer_config.json chat_template': line 1, column ", 0),
              0u);
    EXPECT_THROW((void)load_chat_template_from_tokenizer_config(dir.path() / "absent.json"), io_error);
    // In a GGUF file: the key must hold a string.
    gguf_writer w;
    w.add_u32("tokenizer.chat_template", 3);
    w.write(dir.path() / "template.gguf");
    try {
        (void)load_chat_template(gguf_file(dir.path() / "template.gguf"));
        ADD_FAILURE() << "a u32 template was read";
    } catch (const format_error& e) {
        EXPECT_NE(std::string(e.what()).find("template.gguf: metadata key 'tokenizer.chat_template' at offset 0x"),
                  std::string::npos)
            << e.what();
    }
}

// A GGUF without tokenizer.chat_template has none.
TEST(load_chat_template, gguf_without_a_template_has_none) {
    NEXTTOK_REQUIRE_DATA("models/stories260K/stories260K.gguf");
    EXPECT_FALSE(load_chat_template(gguf_file(test::data_path("models/stories260K/stories260K.gguf"))).has_value());
}

}  // namespace
}  // namespace nexttok
