// generate --chat's loop (chat.hpp) on stories260K with a real chat template (Mistral Nemo's, from
// ../shared/data/chat_templates) written into a copy of the model (gguf_with_template.hpp), driven
// with in-memory streams. Oracles, computed here with the library rather than read from the loop:
//  - turn 2 keeps exactly the longest common prefix of what the cache holds after turn 1 (turn 1's
//    prompt and the generated tokens that were run) and the whole conversation rendered anew, and
//    prefills the rest; the statistics line says so;
//  - turn 2's answer is the text generate() gives for that prompt alone on a fresh cache;
//  - a model without a template is refused with a message naming --chat-template chatml, which works.
#include "chat.hpp"
#include "gguf_with_template.hpp"

#include <test_data.hpp>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

const char* const stories_gguf = "models/stories260K/stories260K.gguf";
const char* const mistral_json = "chat_templates/mistralai-Mistral-Nemo-Instruct-2407.json";

std::string mistral_template() {
    std::ifstream in(nexttok::test::data_path(mistral_json));
    return nlohmann::json::parse(in)["template"].get<std::string>();
}

// The model copy with the template, written into the build tree under the running test's name:
// ctest runs each test of this file as a process of its own, in parallel, and each reads the copy
// it wrote.
std::filesystem::path templated_model() {
    const std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    const std::filesystem::path out =
        std::filesystem::path(NEXTTOK_CHAT_TEST_DIR) / ("stories260K-mistral-template-" + test + ".gguf");
    chat::write_gguf_with_chat_template(nexttok::test::data_path(stories_gguf), out, mistral_template());
    return out;
}

nexttok::generation_options greedy(std::int64_t n) {
    nexttok::generation_options o;
    o.max_new_tokens = n;
    o.sampling.temperature = 0.0f;
    return o;
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

using conversation = chat::conversation<nexttok::decoder<float>, nexttok::kv_cache<float>>;

// `copy` is stories260K with Mistral Nemo's template: the template, and every other key and tensor
// of the original as it was.
void expect_templated_copy(const nexttok::gguf_file& copy) {
    const nexttok::gguf_file original(nexttok::test::data_path(stories_gguf));
    const auto t = nexttok::load_chat_template(copy);
    ASSERT_TRUE(t.has_value());
    EXPECT_EQ(t->source(), mistral_template());
    EXPECT_FALSE(nexttok::load_chat_template(original).has_value());
    EXPECT_EQ(copy.metadata().size(), original.metadata().size() + 1);
    ASSERT_EQ(copy.tensors().size(), original.tensors().size());
    for (std::size_t i = 0; i < copy.tensors().size(); ++i) {
        const auto a = original.tensors()[i].bytes(), b = copy.tensors()[i].bytes();
        ASSERT_EQ(a.size(), b.size()) << original.tensors()[i].name;
        EXPECT_TRUE(std::equal(a.begin(), a.end(), b.begin())) << original.tensors()[i].name;
    }
    // Every key with its type and value (gguf_writer::add_value), arrays element by element.
    for (const auto& [key, v] : original.metadata()) {
        const nexttok::gguf_value* w = copy.find(key);
        ASSERT_NE(w, nullptr) << key;
        EXPECT_EQ(w->type, v.type) << key;
        EXPECT_EQ(w->u, v.u) << key;
        EXPECT_EQ(w->f, v.f) << key;
        EXPECT_EQ(w->str, v.str) << key;
        EXPECT_EQ(w->element_type, v.element_type) << key;
        EXPECT_EQ(w->count, v.count) << key;
        EXPECT_EQ(w->strings, v.strings) << key;
        EXPECT_TRUE(std::equal(w->raw.begin(), w->raw.end(), v.raw.begin(), v.raw.end())) << key;
    }
    EXPECT_EQ(copy.get_string_array("tokenizer.ggml.tokens").size(), 512u);
}

TEST(chat, the_copy_carries_the_template_and_everything_else) {
    NEXTTOK_REQUIRE_DATA(stories_gguf);
    NEXTTOK_REQUIRE_DATA(mistral_json);
    expect_templated_copy(nexttok::gguf_file(templated_model()));
}

// add_chat_template M.gguf M.gguf: the copy written over the file it is read from, whose tensors it
// writes straight from that file's mapping (gguf_writer replaces the file whole; truncated in
// place, the file had ended the program with SIGBUS and lost its tensors).
TEST(chat, the_copy_can_replace_its_source) {
    NEXTTOK_REQUIRE_DATA(stories_gguf);
    NEXTTOK_REQUIRE_DATA(mistral_json);
    namespace fs = std::filesystem;
    const fs::path path = fs::path(NEXTTOK_CHAT_TEST_DIR) / "stories260K-templated-in-place.gguf";
    fs::copy_file(nexttok::test::data_path(stories_gguf), path, fs::copy_options::overwrite_existing);
    fs::permissions(path, fs::perms::owner_write, fs::perm_options::add);  // the data files are read-only
    chat::write_gguf_with_chat_template(path, path, mistral_template());
    expect_templated_copy(nexttok::gguf_file(path));
}

TEST(chat, the_second_turn_prefills_only_its_new_tokens_and_answers_as_a_fresh_run) {
    NEXTTOK_REQUIRE_DATA(stories_gguf);
    NEXTTOK_REQUIRE_DATA(mistral_json);
    const auto m = nexttok::load_model(templated_model());
    const nexttok::tokenizer tok = nexttok::load_model_tokenizer(*m);
    nexttok::decoder<float> dec(m, 1);
    nexttok::kv_cache<float> cache(m->config(), 0);
    chat::chat_options o;
    o.gen = greedy(12);
    o.model_name = m->file_name();
    conversation c(dec, cache, tok, chat::choose_template(*m, ""), o);
    EXPECT_EQ(c.chat_template().source(), mistral_template());

    std::istringstream in("Tell me a story.\n\nWhat did the dog do?\n");
    std::ostringstream out, err;
    EXPECT_EQ(chat::run(c, "", in, out, err), chat::chat_end::input_ended);
    ASSERT_EQ(c.n_turns(), 2) << err.str();

    // Two answers on stdout, the ones recorded in the conversation.
    const nlohmann::ordered_json& msgs = c.messages();
    ASSERT_EQ(msgs.size(), 4u);
    const std::string a1 = msgs[1]["content"], a2 = msgs[3]["content"];
    EXPECT_EQ(out.str(), a1 + "\n" + a2 + "\n");

    // What the cache held after turn 1, computed independently: turn 1's prompt rendered alone and
    // its answer generated alone (the same greedy request), all but the last token run.
    const auto vars = chat::template_variables(tok);
    const nexttok::chat_template& t = c.chat_template();
    const nlohmann::ordered_json turn1 = {{{"role", "user"}, {"content", "Tell me a story."}}};
    const std::vector<nexttok::token_id> p1 = nexttok::encode_chat(tok, t, turn1, true, vars);
    ASSERT_EQ(p1.front(), tok.bos()) << "the template writes bos_token";
    nexttok::generation_options eot = greedy(12);
    eot.eos_ids = chat::end_of_turn_ids(tok);
    nexttok::kv_cache<float> fresh1(m->config(), 0);
    const nexttok::generation_result r1 = nexttok::generate(dec, fresh1, tok, p1, eot);
    EXPECT_EQ(r1.text, a1);
    std::vector<nexttok::token_id> held = p1;
    held.insert(held.end(), r1.tokens.begin(), r1.tokens.end() - 1);

    nlohmann::ordered_json turn2 = turn1;
    turn2.push_back({{"role", "assistant"}, {"content", a1}});
    turn2.push_back({{"role", "user"}, {"content", "What did the dog do?"}});
    const std::vector<nexttok::token_id> p2 = nexttok::encode_chat(tok, t, turn2, true, vars);
    std::size_t reused = 0;
    while (reused < held.size() && reused + 1 < p2.size() && held[reused] == p2[reused]) ++reused;
    // The answer re-tokenizes as it was generated: everything turn 1 ran is kept.
    EXPECT_EQ(reused, held.size());
    EXPECT_GT(reused, p1.size());

    // The statistics lines: turn 2 reused `reused` tokens and prefilled the rest.
    const std::vector<std::string> lines = lines_of(err.str());
    std::vector<std::string> stats;
    for (const std::string& l : lines)
        if (l.find("] turn ") != std::string::npos) stats.push_back(l.substr(l.find('[')));
    ASSERT_EQ(stats.size(), 2u) << err.str();
    const std::string want1 = "[" + m->file_name() + "] turn 1: prompt: " + std::to_string(p1.size()) +
                              " tokens (0 reused, " + std::to_string(p1.size()) + " new), ";
    const std::string want2 = "[" + m->file_name() + "] turn 2: prompt: " + std::to_string(p2.size()) + " tokens (" +
                              std::to_string(reused) + " reused, " + std::to_string(p2.size() - reused) + " new), ";
    EXPECT_EQ(stats[0].substr(0, want1.size()), want1) << stats[0];
    EXPECT_EQ(stats[1].substr(0, want2.size()), want2) << stats[1];
    EXPECT_TRUE(std::regex_search(
        stats[1], std::regex("\\| generated: [0-9]+ tokens, [0-9.]+ tokens/s \\| finish: (eos|max_new_tokens)$")))
        << stats[1];

    // The oracle: turn 2's prompt run alone on a fresh cache gives the same answer.
    nexttok::kv_cache<float> fresh2(m->config(), 0);
    EXPECT_EQ(nexttok::generate(dec, fresh2, tok, p2, eot).text, a2);
    EXPECT_EQ(c.held().tokens.size(), cache.size());
}

TEST(chat, a_model_without_a_template_is_refused_and_chatml_works) {
    NEXTTOK_REQUIRE_DATA(stories_gguf);
    const auto m = nexttok::load_model(nexttok::test::data_path(stories_gguf));
    try {
        chat::choose_template(*m, "");
        ADD_FAILURE() << "a model without a template was accepted";
    } catch (const nexttok::invalid_argument_error& e) {
        EXPECT_NE(std::string(e.what()).find("stories260K.gguf: the model carries no chat template"), std::string::npos)
            << e.what();
        EXPECT_NE(std::string(e.what()).find("--chat-template chatml"), std::string::npos) << e.what();
    }
    EXPECT_THROW(chat::choose_template(*m, "no-such-template"), nexttok::invalid_argument_error);

    const nexttok::tokenizer tok = nexttok::load_model_tokenizer(*m);
    nexttok::decoder<float> dec(m, 1);
    nexttok::kv_cache<float> cache(m->config(), 0);
    chat::chat_options o;
    o.gen = greedy(6);
    o.model_name = m->file_name();
    o.system = "Be kind.";
    conversation c(dec, cache, tok, chat::choose_template(*m, "chatml"), o);
    std::istringstream in("Hi\n/exit\nnever read\n");
    std::ostringstream out, err;
    EXPECT_EQ(chat::run(c, "", in, out, err), chat::chat_end::exit_command);
    ASSERT_EQ(c.n_turns(), 1);
    // The prompt is ChatML's text, with the system message first (BOS prepended: stories260K wants one).
    const std::string chatml =
        "<|im_start|>system\nBe kind.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n";
    std::vector<nexttok::token_id> want = tok.encode(chatml, true);
    nexttok::generation_options eot = greedy(6);
    eot.eos_ids = chat::end_of_turn_ids(tok);
    nexttok::kv_cache<float> fresh(m->config(), 0);
    const nexttok::generation_result r = nexttok::generate(dec, fresh, tok, want, eot);
    EXPECT_EQ(out.str(), r.text + "\n");
    want.insert(want.end(), r.tokens.begin(), r.tokens.end() - 1);
    EXPECT_EQ(c.held().tokens, want);
}

// EOS and the end-of-turn tokens the vocabulary has, whatever their ids; texts it lacks add nothing.
TEST(chat, end_of_turn_ids_are_eos_and_the_known_end_of_turn_tokens) {
    using nexttok::token_type;
    std::vector<nexttok::token_data> t = {{"<unk>", 0.0f, token_type::unknown},      {"<s>", 0.0f, token_type::control},
                                          {"</s>", 0.0f, token_type::control},       {"a", -1.0f, token_type::normal},
                                          {"<|eot_id|>", 0.0f, token_type::control}, {"b", -1.0f, token_type::normal},
                                          {"<|im_end|>", 0.0f, token_type::control}};
    const nexttok::tokenizer tok(
        nexttok::spm_tokenizer(nexttok::vocabulary(std::move(t), {.bos = 1, .eos = 2, .unk = 0}), {}));
    EXPECT_EQ(chat::end_of_turn_ids(tok), (std::vector<nexttok::token_id>{2, 6, 4}));
    EXPECT_EQ(chat::template_variables(tok).dump(), R"({"bos_token":"<s>","eos_token":"</s>"})");
}

// --chat-template FILE: the file's text, named after the file.
TEST(chat, a_template_file_overrides_the_model_s_own) {
    NEXTTOK_REQUIRE_DATA(stories_gguf);
    NEXTTOK_REQUIRE_DATA(mistral_json);
    const auto m = nexttok::load_model(templated_model());
    const std::filesystem::path file = std::filesystem::path(NEXTTOK_CHAT_TEST_DIR) / "plain.jinja";
    const std::string source = "{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}assistant:";
    std::ofstream(file) << source;
    const nexttok::chat_template t = chat::choose_template(*m, file.string());
    EXPECT_EQ(t.name(), "plain.jinja");
    EXPECT_EQ(t.render(nlohmann::ordered_json::array({{{"role", "user"}, {"content", "Hi"}}}), true),
              "user: Hi\nassistant:");
}

TEST(chat, a_conversation_that_outgrows_the_context_ends_with_a_message) {
    NEXTTOK_REQUIRE_DATA(stories_gguf);
    NEXTTOK_REQUIRE_DATA(mistral_json);
    const auto m = nexttok::load_model(templated_model());
    const nexttok::tokenizer tok = nexttok::load_model_tokenizer(*m);
    nexttok::decoder<float> dec(m, 1);
    nexttok::kv_cache<float> cache(m->config(), 40);
    chat::chat_options o;
    o.gen = greedy(10);
    o.gen.ignore_eos = true;
    o.model_name = m->file_name();
    o.room_hint = "--ctx-size up to 128";
    conversation c(dec, cache, tok, chat::choose_template(*m, ""), o);
    std::istringstream in("Tell me a story about a big red dog.\nAnd then?\nMore!\n");
    std::ostringstream out, err;
    EXPECT_EQ(chat::run(c, "Hello.", in, out, err), chat::chat_end::context_full);
    EXPECT_NE(err.str().find("the context is full at 40 positions"), std::string::npos) << err.str();
    EXPECT_NE(err.str().find("the conversation ends here. For more room: --ctx-size up to 128"), std::string::npos)
        << err.str();
    EXPECT_LE(cache.size(), 40);
}

}  // namespace
