// Templates that used to crash, hang or exhaust memory (found by tests/fuzz/chat_template): each
// must now be a chat_template_error that names the template, the place and the limit or the
// operation, and a render must stay fast. Oracles: the error's text, and for arithmetic Python's
// own results where they fit in 64 bits.
#include <nexttok/chat.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

namespace nexttok {
namespace {

using ordered_json = nlohmann::ordered_json;

std::string render(const std::string& source) {
    return chat_template(source, "fuzz").render(ordered_json::array({{{"role", "user"}, {"content", "hi"}}}), true);
}

// The message of the chat_template_error that parsing or rendering `source` throws.
std::string error_of(const std::string& source) {
    try {
        const std::string out = render(source);
        ADD_FAILURE() << "no error for " << source.substr(0, 200) << "; rendered " << out.size() << " bytes";
    } catch (const chat_template_error& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find("fuzz"), std::string::npos) << "message does not name the template: " << msg;
        return msg;
    }
    return {};
}

std::string repeated(const std::string& s, int n) {
    std::string out;
    for (int i = 0; i < n; ++i) out += s;
    return out;
}

TEST(chat_template_fuzz_regressions, recursive_macro_is_an_error_not_a_stack_overflow) {
    const std::string msg = error_of("{% macro f(x) %}{{ f(x) }}{% endmacro %}{{ f(1) }}");
    EXPECT_NE(msg.find("calls nested deeper than 100 levels"), std::string::npos) << msg;
    EXPECT_NE(msg.find("macro 'f'"), std::string::npos) << msg;
}

TEST(chat_template_fuzz_regressions, deeply_nested_expressions_fail_while_parsing) {
    for (const std::string& source : {"{{" + repeated("(", 30000) + "1" + repeated(")", 30000) + "}}",
                                      "{{" + repeated("[", 30000) + repeated("]", 30000) + "}}",
                                      "{{" + repeated("not ", 30000) + "1 }}", "{{" + repeated("-", 30000) + "1 }}"}) {
        const std::string msg = error_of(source);
        EXPECT_NE(msg.find("expression nested deeper than 200 levels"), std::string::npos) << msg;
        EXPECT_NE(msg.find("line 1"), std::string::npos) << msg;
    }
}

TEST(chat_template_fuzz_regressions, deeply_nested_blocks_fail_while_parsing) {
    const std::string msg = error_of(repeated("{% if 1 %}", 100000) + repeated("{% endif %}", 100000));
    EXPECT_NE(msg.find("blocks nested deeper than 200 levels"), std::string::npos) << msg;
    EXPECT_EQ(render(repeated("{% if 1 %}", 150) + "x" + repeated("{% endif %}", 150)), "x");
}

TEST(chat_template_fuzz_regressions, string_growth_is_bounded) {
    EXPECT_NE(error_of("{{ 'a' * 3000000000 }}").find("'*' repetition: the result would be longer than 16 MiB"),
              std::string::npos);
    const std::string doubling = error_of(
        "{% set ns = namespace(s='ab') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ "
        "ns.s|length }}");
    EXPECT_NE(doubling.find("'~' concatenation: the result would be longer than 16 MiB"), std::string::npos)
        << doubling;
    EXPECT_NE(error_of("{{ 'x'|indent(3000000000) }}").find("filter 'indent'"), std::string::npos);
    EXPECT_NE(error_of("{{ ('a' * 10000000)|replace('a', 'bb') }}").find("str.replace"), std::string::npos);
    EXPECT_NE(error_of("{{ [1]|tojson(indent=1000000000) }}").find("indent = 1000000000 (at most 64"),
              std::string::npos);
    const std::string output = error_of("{% for i in range(20) %}{{ 'a' * 1000000 }}{% endfor %}");
    EXPECT_NE(output.find("the rendered text: the result would be longer than 16 MiB"), std::string::npos) << output;
}

TEST(chat_template_fuzz_regressions, list_growth_and_nesting_are_bounded) {
    const std::string doubling = error_of(
        "{% set ns = namespace(l=[1]) %}{% for i in range(30) %}{% set ns.l = [ns.l, ns.l] %}{% endfor %}{{ "
        "ns.l|length }}");
    EXPECT_NE(doubling.find("a list: the result would hold more than 32 MiB"), std::string::npos) << doubling;
    const std::string nesting = error_of(
        "{% set ns = namespace(l=[1]) %}{% for i in range(3000) %}{% set ns.l = [ns.l] %}{% endfor %}{{ ns.l }}");
    EXPECT_NE(nesting.find("nested deeper than 128 levels"), std::string::npos) << nesting;
    EXPECT_NE(error_of("{{ [[1, 2, 3]] * 100000000 }}").find("'*' repetition"), std::string::npos);
}

TEST(chat_template_fuzz_regressions, a_namespace_cannot_contain_itself) {
    const std::string msg = error_of("{% set ns = namespace() %}{% set ns.x = ns %}{{ ns }}");
    EXPECT_NE(msg.find("cannot assign 'ns.x': the namespace would contain itself"), std::string::npos) << msg;
    const std::string indirect =
        error_of("{% set a = namespace() %}{% set b = namespace(x=a) %}{% set a.y = b %}{{ a }}");
    EXPECT_NE(indirect.find("cannot assign 'a.y'"), std::string::npos) << indirect;
}

TEST(chat_template_fuzz_regressions, loops_are_bounded_by_the_step_budget) {
    const std::string msg =
        error_of("{% for i in range(1000000) %}{% for j in range(1000000) %}{% endfor %}{% endfor %}");
    EXPECT_NE(msg.find("more than 1000000 statements, loop iterations and calls"), std::string::npos) << msg;
    // range()'s million items alone use up the budget: they are charged before the first iteration.
    EXPECT_NE(error_of("{% for i in range(1000000) %}x{% endfor %}").find("more than 1000000"), std::string::npos);
    EXPECT_EQ(render("{% for i in range(1000) %}{% endfor %}{{ range(10)|sum }}"), "45");
}

TEST(chat_template_fuzz_regressions, integer_overflow_is_an_error_not_undefined_behaviour) {
    for (const char* source :
         {"{{ 9223372036854775807 + 1 }}", "{{ -(-9223372036854775807 - 1) }}",
          "{{ (-9223372036854775807 - 1) // -1 }}", "{{ 3037000500 * 3037000500 }}", "{{ 2 ** 64 }}",
          "{{ (-9223372036854775807 - 1)|abs }}", "{{ -9223372036854775807 - 2 }}"}) {
        const std::string msg = error_of(source);
        EXPECT_NE(msg.find("integer overflow"), std::string::npos) << source << ": " << msg;
    }
    // Python's values where they fit.
    EXPECT_EQ(render("{{ (-9223372036854775807 - 1) % -1 }}"), "0");
    EXPECT_EQ(render("{{ 2 ** 62 }}"), "4611686018427387904");
    EXPECT_EQ(render("{{ (-2) ** 63 }}"), "-9223372036854775808");
    EXPECT_EQ(render("{{ 1 ** 9000000000000000000 }}"), "1");
    EXPECT_EQ(render("{{ 7 // -2 }} {{ -7 % 3 }}"), "-4 2");
    EXPECT_EQ(render("{{ range(9223372036854775800, 9223372036854775807, 5)|list }}"),
              "[9223372036854775800, 9223372036854775805]");
}

TEST(chat_template_fuzz_regressions, float_to_int_outside_int64_is_an_error) {
    EXPECT_NE(error_of("{{ 1e300|int }}").find("filter 'int': integer overflow"), std::string::npos);
    EXPECT_NE(error_of("{{ 'nan'|float|int }}").find("cannot convert float NaN to integer"), std::string::npos);
    EXPECT_NE(error_of("{{ '1e19'|int }}").find("integer overflow"), std::string::npos);
    EXPECT_EQ(render("{{ 9223372036854775807|int }} {{ -2.7|int }} {{ '12'|int }}"), "9223372036854775807 -2 12");
}

}  // namespace
}  // namespace nexttok
