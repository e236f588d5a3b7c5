// add_chat_template IN.gguf OUT.gguf TEMPLATE: writes a copy of IN.gguf with tokenizer.chat_template
// set to TEMPLATE's text, or, for a .json file in the format of ../shared/data/chat_templates, to its
// "template" field. A test helper of generate --chat (run_chat_test.cmake).
#include "gguf_with_template.hpp"

#include <nexttok/error.hpp>

#include <nlohmann/json.hpp>

#include <fstream>
#include <iostream>
#include <iterator>
#include <string>

int main(int argc, char** argv) {
    if (argc != 4) {
        std::cerr << "usage: add_chat_template IN.gguf OUT.gguf TEMPLATE(.jinja|.json)\n";
        return 2;
    }
    try {
        std::ifstream in(argv[3], std::ios::binary);
        if (!in) throw nexttok::io_error(std::string(argv[3]) + ": cannot open the template");
        std::string source((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        if (std::string(argv[3]).ends_with(".json")) {
            const nlohmann::json j = nlohmann::json::parse(source);
            if (!j.contains("template") || !j["template"].is_string())
                throw nexttok::format_error(std::string(argv[3]) + ": field 'template': expected a string");
            source = j["template"].get<std::string>();
        }
        chat::write_gguf_with_chat_template(argv[1], argv[2], source);
    } catch (const std::exception& e) {
        std::cerr << "error: " << e.what() << '\n';
        return 1;
    }
    return 0;
}
