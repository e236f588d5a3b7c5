// A copy of a GGUF file with a chat template added (tokenizer.chat_template), for the tests of
// generate --chat on a small model that carries none: every key and tensor is read with gguf_file
// and written back with gguf_writer (keys in sorted order, tensors in the file's order), plus the
// template (replacing any there).
#pragma once

#include <nexttok/io/gguf.hpp>
#include <nexttok/io/gguf_writer.hpp>

#include <filesystem>
#include <string>

namespace chat {

inline void write_gguf_with_chat_template(const std::filesystem::path& in, const std::filesystem::path& out,
                                          const std::string& template_source) {
    const nexttok::gguf_file file(in);  // maps `in`; the tensor bytes are written from the mapping
    if (file.alignment() != nexttok::gguf_writer::alignment)
        throw nexttok::unsupported_error(file.name() + ": general.alignment " + std::to_string(file.alignment()) +
                                         ": the writer only writes the default alignment of 32");
    nexttok::gguf_writer w;
    for (const auto& [key, value] : file.metadata())
        if (key != "tokenizer.chat_template" && key != "general.alignment") w.add_value(key, value);
    w.add_string("tokenizer.chat_template", template_source);
    for (const nexttok::tensor_view& t : file.tensors()) w.add_tensor(t);
    w.write(out);
}

}  // namespace chat
