// Focused tests of the template engine: whitespace control ({%- -%}, trim_blocks, lstrip_blocks),
// loops (loop.*, filters, else, break/continue), scoping and namespace(), macros, block set,
// filters, tests, operators, Python printing, and errors that name the line and column. Each
// expected text was worked out by hand from Jinja2's documented semantics (and checked against
// Python's Jinja2 3.1.6 in apply_chat_template's environment).
#include <nexttok/chat.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <initializer_list>
#include <string>
#include <vector>

namespace nexttok {
namespace {

struct engine_case {
    const char* name;
    const char* source;
    const char* variables;  // JSON object
    const char* expected;
};

struct error_case {
    const char* name;
    const char* source;
    std::vector<std::string> message_parts;  // each must appear in the error's message
};

const engine_case engine_cases[] = {
    {"dash_strips_whitespace_before", "a  \n {%- if true %}b{% endif %}", "{}", "ab"},
    {"dash_strips_whitespace_after", "{% if true -%}\n   x\n{%- endif %}", "{}", "x"},
    {"trim_blocks_drops_one_newline", "{% if true %}\nhello\n{% endif %}\nworld", "{}", "hello\nworld"},
    {"trim_blocks_keeps_a_second_newline", "{% if true %}\n\nx{% endif %}", "{}", "\nx"},
    {"lstrip_blocks_drops_indentation", "line\n    {% if true %}\n    x\n    {% endif %}\nend", "{}",
     "line\n    x\nend"},
    {"lstrip_blocks_keeps_text_before_tag", "a {% if true %}b{% endif %}", "{}", "a b"},
    {"no_lstrip_before_output", "  {{ 'a' }}\n{{ 'b' }}", "{}", "  a\nb"},
    {"plus_disables_lstrip", "  {%+ if true %}x{% endif %}", "{}", "  x"},
    {"comments_are_stripped_like_blocks", "a\n  {# note #}\nb", "{}", "a\nb"},
    {"dash_on_output", "a  {{- 'b' -}}  c", "{}", "abc"},
    {"one_trailing_newline_dropped", "x\n\n", "{}", "x\n"},
    {"raw_block", "{% raw %}{{ not evaluated }}{% endraw %}", "{}", "{{ not evaluated }}"},
    {"loop_variables",
     "{% for x in ['a','b','c'] %}{{ loop.index }}{{ loop.index0 }}{{ x }}{% if loop.first %}F{% endif %}{% if "
     "loop.last %}L{% endif %}{{ loop.revindex }}{{ loop.length }};{% endfor %}",
     "{}", "10aF33;21b23;32cL13;"},
    {"loop_filter_counts_kept_items",
     "{% for x in range(6) if x is odd %}{{ x }}{% if not loop.last %},{% endif %}{% endfor %}", "{}", "1,3,5"},
    {"loop_else", "{% for x in [] %}x{% else %}empty{% endfor %}", "{}", "empty"},
    {"break_and_continue",
     "{% for x in range(10) %}{% if x == 2 %}{% continue %}{% endif %}{% if x == 5 %}{% break %}{% endif %}{{ x }}{% "
     "endfor %}",
     "{}", "0134"},
    {"previtem_nextitem",
     "{% for x in [1,2,3] %}{{ loop.previtem is defined }}{{ loop.nextitem | default('-') }} {% endfor %}", "{}",
     "False2 True3 True- "},
    {"loop_cycle", "{% for x in range(4) %}{{ loop.cycle('a', 'b') }}{% endfor %}", "{}", "abab"},
    {"unpack_dict_items_in_order", "{% for k, v in {'b': 1, 'a': 2}.items() %}{{ k }}={{ v }} {% endfor %}", "{}",
     "b=1 a=2 "},
    {"set_in_loop_does_not_leak", "{% set x = 1 %}{% for i in [1,2] %}{% set x = x + i %}{% endfor %}{{ x }}", "{}",
     "1"},
    {"set_in_if_does_leak", "{% if true %}{% set x = 5 %}{% endif %}{{ x }}", "{}", "5"},
    {"namespace_carries_out_of_loop",
     "{% set ns = namespace(total=0, seen=false) %}{% for i in [1,2,3] %}{% set ns.total = ns.total + i %}{% endfor "
     "%}{{ ns.total }} {{ ns.seen }}",
     "{}", "6 False"},
    {"macro_with_defaults_and_keywords",
     "{% macro greet(name, punct='!') %}Hi {{ name }}{{ punct }}{% endmacro %}{{ greet('Ann') }} {{ greet('Bob', "
     "punct='?') }}",
     "{}", "Hi Ann! Hi Bob?"},
    {"block_set_with_filter", "{% set s | upper %}  x {% endset %}[{{ s | trim }}]", "{}", "[X]"},
    {"filter_block", "{% filter upper %}abc{% endfilter %}", "{}", "ABC"},
    {"tojson_python_separators_and_non_ascii", "{{ {'a': [1, 2.5, none, true], 'b': 'é\"\\n'} | tojson }}", "{}",
     "{\"a\": [1, 2.5, null, true], \"b\": \"é\\\"\\n\"}"},
    {"tojson_indent", "{{ {'a': [1, {}], 'b': []} | tojson(indent=2) }}", "{}",
     "{\n  \"a\": [\n    1,\n    {}\n  ],\n  \"b\": []\n}"},
    {"print_python_reprs", "{{ [1, 'a', none, true, 1.0, \"it's\"] }} {{ {'k': 'v'} }}", "{}",
     "[1, 'a', None, True, 1.0, \"it's\"] {'k': 'v'}"},
    {"arithmetic",
     "{{ 7 / 2 }} {{ 7 // 2 }} {{ -7 // 2 }} {{ -7 % 3 }} {{ 2 ** 10 }} {{ 1e20 }} {{ 0.1 + 0.2 }} {{ 3 * 'ab' }} {{ 1 "
     "~ 2 }}",
     "{}", "3.5 3 -4 2 1024 1e+20 0.30000000000000004 ababab 12"},
    {"string_methods",
     "{{ 'a,b,,c'.split(',') }} {{ '  x  y '.split() }} {{ '  pad '.strip() }}|{{ 'xxhixx'.strip('x') }} {{ "
     "'Hello'.startswith('He') }} {{ 'Hello'.endswith(('x', 'lo')) }} {{ 'a-b-c'.replace('-', '+') }} {{ 'hello "
     "world'.title() }}",
     "{}", "['a', 'b', '', 'c'] ['x', 'y'] pad|hi True True a+b+c Hello World"},
    {"slices_by_code_point",
     "{{ 'héllo'[1:3] }} {{ 'abc'[::-1] }} {{ 'héllo'[-1] }} {{ [1,2,3,4][1:] }} {{ [1,2,3][:-1] }} {{ 'héllo' | "
     "length }}",
     "{}", "él cba o [2, 3, 4] [1, 2] 5"},
    {"split_last_piece", "{{ 'x</think>y'.split('</think>')[-1] }}", "{}", "y"},
    {"filters",
     "{{ '  t  ' | trim }}|{{ 'Ab' | upper }}{{ 'Ab' | lower }}|{{ [3,1,2] | first }}{{ [3,1,2] | last }}|{{ [3,1,2] | "
     "join('-') }}|{{ [3,1,2] | sort | list }}|{{ ['b','A','a'] | unique | list }}|{{ 'ab' | list }}|{{ [1,2] | "
     "reverse | list }}|{{ undefined_thing | default('d') }}|{{ none | default('d') }}|{{ '' | default('e', true) "
     "}}|{{ 42 | string }}|{{ 'aXa' | replace('a', 'b') }}",
     "{}", "t|ABab|32|3-1-2|[1, 2, 3]|['b', 'A']|['a', 'b']|[2, 1]|d|None|e|42|bXb"},
    {"selectattr_rejectattr_map",
     "{{ msgs | selectattr('role', 'equalto', 'user') | map(attribute='content') | join(',') }} {{ msgs | "
     "rejectattr('role', 'equalto', 'user') | map(attribute='content') | list }} {{ msgs | map(attribute='role') | "
     "map('upper') | join }} {{ msgs | selectattr('content') | list | length }}",
     "{\"msgs\": [{\"role\": \"user\", \"content\": \"a\"}, {\"role\": \"assistant\", \"content\": \"\"}, {\"role\": "
     "\"user\", \"content\": \"c\"}]}",
     "a,c [''] USERASSISTANTUSER 2"},
    {"select_reject_with_tests",
     "{{ [1,2,3,4] | select('odd') | list }} {{ ['a','code','b'] | reject('equalto', 'code') | join(', ') }} {{ [0, 1, "
     "'', 'x'] | select | list }}",
     "{}", "[1, 3] a, b [1, 'x']"},
    {"items_and_dictsort", "{% for k, v in d | items %}{{ k }}{{ v }}{% endfor %} {{ d | dictsort }}",
     "{\"d\": {\"z\": 1, \"a\": 2}}", "z1a2 [('a', 2), ('z', 1)]"},
    {"tests",
     "{{ x is defined }} {{ y is defined }} {{ n is none }} {{ x is string }} {{ 3 is number }} {{ 3 is integer }} {{ "
     "3.0 is float }} {{ d is mapping }} {{ 'ab' is iterable }} {{ 6 is divisibleby 3 }} {{ 5 is even }} {{ x is not "
     "none }} {{ 'abc' is lower }}",
     "{\"x\": \"s\", \"n\": null, \"d\": {}}", "True False True True True True True True True True False True True"},
    {"membership",
     "{{ 'a' in 'cat' }} {{ 2 in [1, 2] }} {{ 'k' in {'k': 1} }} {{ 'z' not in 'cat' }} {{ 'tool_calls' in m }}",
     "{\"m\": {\"role\": \"user\"}}", "True True True True False"},
    {"conditional_expression", "[{{ 'y' if false }}] {{ 'a' if 1 > 2 else 'b' }} {{ 1 < 2 < 3 }} {{ 3 > 2 > 2 }}", "{}",
     "[] b True False"},
    {"attribute_falls_back_to_key_and_undefined",
     "{{ m.role }} {{ m['role'] }} [{{ m.missing }}] {{ m.missing is defined }} {{ m.get('missing', 'g') }} {{ "
     "m.keys() | list }}",
     "{\"m\": {\"role\": \"user\"}}", "user user [] False g ['role']"},
    {"undefined_prints_nothing_and_iterates_empty",
     "[{{ nothing }}]{% for x in nothing %}x{% endfor %}{{ nothing | length }}", "{}", "[]0"},
    {"and_or_return_operands", "{{ 0 or 'x' }} {{ 'a' and 'b' }} {{ none or [] }} {{ not '' }}", "{}", "x b [] True"},
    {"strftime_now_reads_the_clock", "{{ strftime_now('%d %b %Y') }}", "{}", "26 Jul 2024"},
    {"string_escapes", "{{ 'a\\tb\\u00e9\\x41' }}|{{ \"q'\" }}", "{}", "a\tbéA|q'"},
    {"with_block", "{% with a = 1, b = 2 %}{{ a + b }}{% endwith %}[{{ a }}]", "{}", "3[]"},
    {"integer_and_float_filters",
     "{{ '42' | int + 1 }} {{ '2.5' | float }} {{ 'x' | int }} {{ 3.7 | int }} {{ -3 | abs }} {{ [1, 2, 3] | sum }} {{ "
     "[3, 1] | min }}{{ [3, 1] | max }}",
     "{}", "43 2.5 0 3 3 6 13"},
    {"indent_filter", "{{ 'a\\nb\\n\\nc' | indent(2) }}|{{ 'a\\nb' | indent(2, true) }}", "{}",
     "a\n  b\n\n  c|  a\n  b"},
};

const error_case error_cases[] = {
    {"raise_exception_names_line_and_column", "line1\n{{ raise_exception('boom') }}", {"boom", "line 2, column 4"}},
    {"unclosed_block", "{% if x %}\nabc", {"line 2, column 4", "endif"}},
    {"unknown_filter", "{{ x | frobnicate }}", {"line 1, column 6", "frobnicate"}},
    {"unsupported_tag", "\n  {% include 'other.jinja' %}", {"line 2, column 6", "include"}},
    {"attribute_of_undefined", "{{ foo.bar }}", {"'foo' is undefined"}},
    {"percent_formatting", "{{ '%s' % 'x' }}", {"not supported"}},
    {"adding_string_and_int", "{{ 'a' + 1 }}", {"unsupported operand"}},
    {"break_outside_loop", "{% break %}", {"outside of a loop"}},
    {"bad_token", "{{ a ! b }}", {"line 1, column 6"}},
};

std::string render(const char* source, const char* variables) {
    chat_template t(source, "test");
    t.set_clock([] {
        return std::chrono::sys_days{std::chrono::year{2024} / std::chrono::July / 26} + std::chrono::hours{12};
    });
    return t.render(nlohmann::ordered_json::array(), false, nlohmann::ordered_json::parse(variables));
}

class jinja_engine : public testing::TestWithParam<engine_case> {};

TEST_P(jinja_engine, renders_as_jinja2) {
    const engine_case& c = GetParam();
    EXPECT_EQ(render(c.source, c.variables), c.expected) << "template: " << c.source;
}

INSTANTIATE_TEST_SUITE_P(cases, jinja_engine, testing::ValuesIn(engine_cases),
                         [](const testing::TestParamInfo<engine_case>& info) { return std::string(info.param.name); });

class jinja_engine_error : public testing::TestWithParam<error_case> {};

TEST_P(jinja_engine_error, raises_naming_the_place) {
    const error_case& c = GetParam();
    try {
        const std::string out = render(c.source, "{}");
        ADD_FAILURE() << "no error; rendered: " << out;
    } catch (const chat_template_error& e) {
        const std::string message = e.what();
        EXPECT_NE(message.find("chat template 'test'"), std::string::npos) << message;
        for (const std::string& part : c.message_parts) EXPECT_NE(message.find(part), std::string::npos) << message;
    }
}

INSTANTIATE_TEST_SUITE_P(cases, jinja_engine_error, testing::ValuesIn(error_cases),
                         [](const testing::TestParamInfo<error_case>& info) { return std::string(info.param.name); });

TEST(chat_template, chatml_builtin) {
    const std::vector<chat_message> messages = {{"system", "S"}, {"user", "U"}, {"assistant", "A"}};
    const chat_template t = chat_template::builtin("chatml");
    EXPECT_EQ(t.render(messages, false),
              "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU<|im_end|>\n<|im_start|>assistant\nA<|im_end|>\n");
    EXPECT_EQ(t.render(std::vector<chat_message>{{"user", "U"}}, true),
              "<|im_start|>user\nU<|im_end|>\n<|im_start|>assistant\n");
    EXPECT_THROW(chat_template::builtin("no-such-template"), chat_template_error);
}

TEST(chat_template, parse_once_render_many_with_variables) {
    const chat_template t(
        "{{ bos_token }}{% for m in messages %}[{{ m.role }}:{{ m.content }}]{% endfor %}"
        "{% if add_generation_prompt %}>{% endif %}{{ tools | length }}");
    const std::vector<chat_message> one = {{"user", "hi"}};
    EXPECT_EQ(t.render(one, true, {{"bos_token", "<s>"}, {"tools", {1, 2}}}), "<s>[user:hi]>2");
    EXPECT_EQ(t.render(one, false), "[user:hi]0");
    const chat_template copy = t;  // copies share the parsed template
    EXPECT_EQ(copy.render(one, false, {{"bos_token", "B"}}), "B[user:hi]0");
}

// Each names the template, the line and column of the construct, and what was expected.
TEST(chat_template, syntax_errors_surface_at_construction) {
    const auto error_of = [](const std::string& source) -> std::string {
        try {
            chat_template t(source, "t");
        } catch (const chat_template_error& e) {
            return e.what();
        }
        return "no error";
    };
    EXPECT_EQ(error_of("{% for x in %}{% endfor %}").rfind("chat template 't': line 1, column 13: expected ", 0), 0u)
        << error_of("{% for x in %}{% endfor %}");
    EXPECT_EQ(error_of("{{ 'unclosed }}"),
              "chat template 't': line 1, column 4: unexpected end of template: the string is not closed");
    EXPECT_EQ(error_of("{% endif %}"), "chat template 't': line 1, column 4: unknown or misplaced tag 'endif'");
    EXPECT_EQ(error_of("{% if a %}\n  {% endfor %}"),
              "chat template 't': line 2, column 6: unknown or misplaced tag 'endfor'");
    EXPECT_EQ(error_of("{% if a %}x"),
              "chat template 't': line 1, column 12: unexpected end of template: looking for 'elif' or 'else' or "
              "'endif' to close the 'if' block");
}

TEST(chat_template, errors_are_nexttok_errors) {
    const chat_template t("{{ raise_exception('no') }}");
    EXPECT_THROW(t.render(nlohmann::ordered_json::array(), false), error);
    EXPECT_THROW(t.render(nlohmann::ordered_json::object(), false), chat_template_error);  // messages must be a list
}

}  // namespace
}  // namespace nexttok
