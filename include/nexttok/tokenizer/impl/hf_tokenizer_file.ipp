// The definitions of hf_tokenizer_file.hpp.
#pragma once

#include <nexttok/tokenizer/hf_tokenizer_file.hpp>
#include <nexttok/error.hpp>
#include <nexttok/io/json_file.hpp>
#include <nexttok/io/json_limits.hpp>
#include <nexttok/tokenizer/bpe_tokenizer.hpp>
#include <nexttok/tokenizer/detail/merge_rules.hpp>
#include <nexttok/tokenizer/pre_tokenizer.hpp>
#include <nexttok/tokenizer/tokenizer.hpp>
#include <nexttok/tokenizer/vocabulary.hpp>
#include <nexttok/types.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nexttok {

namespace detail {

using json = nlohmann::json;

inline void check_hf_bpe_model(const json_fields& f, const json& model) {
    if (const json* type = json_fields::find(model, "type"); type != nullptr && f.string(*type, "model.type") != "BPE")
        throw unsupported_error(f.file() + ": 'model.type' is '" + quote_text(type->get<std::string>()) +
                                "': only 'BPE' (byte-level) is supported");
    if (f.flag(model, "byte_fallback", false, "model.byte_fallback"))
        throw unsupported_error(f.file() +
                                ": 'model.byte_fallback' is true: SentencePiece-style BPE is supported "
                                "from its tokenizer.model (load_spm_tokenizer), not from tokenizer.json");
    for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"})
        if (const json* v = json_fields::find(model, key);
            v != nullptr && !f.string(*v, std::string("model.") + key).empty())
            throw unsupported_error(f.file() + ": 'model." + key + "' is set: only byte-level BPE is supported");
}

// model.vocab and added_tokens -> the token table (ids 0..max, gaps filled with unused "[PAD<id>]"
// tokens as llama.cpp's converter does).
inline std::vector<token_data> read_hf_tokens(const json_fields& f, const json& root, const json& model) {
    const json& vocab = f.object(f.require(model, "vocab", "model.vocab"), "model.vocab");
    const json* added = json_fields::find(root, "added_tokens");
    if (added != nullptr) f.array(*added, "added_tokens");
    const std::size_t n_entries = vocab.size() + (added != nullptr ? added->size() : 0);

    struct entry {
        token_id id;
        std::string_view text;
        token_type type;
    };
    std::vector<entry> entries;
    entries.reserve(n_entries);
    std::size_t n_slots = 0;
    for (auto it = vocab.begin(); it != vocab.end(); ++it) {
        const std::string& text = it.key();  // a reference into the document, which outlives entries
        entries.push_back({f.id(*it, "model.vocab." + text), text, token_type::normal});
        n_slots = std::max(n_slots, static_cast<std::size_t>(entries.back().id) + 1);
    }
    const std::size_t n_model = entries.size();
    if (added != nullptr) {
        for (std::size_t i = 0; i < added->size(); ++i) {
            const std::string path = "added_tokens[" + std::to_string(i) + "]";
            const json& t = f.object((*added)[i], path);
            const token_id id = f.id(f.require(t, "id", path + ".id"), path + ".id");
            const std::string& content = f.string(f.require(t, "content", path + ".content"), path + ".content");
            const bool special = f.flag(t, "special", false, path + ".special");
            entries.push_back({id, content, special ? token_type::control : token_type::user_defined});
            n_slots = std::max(n_slots, static_cast<std::size_t>(id) + 1);
        }
    }
    if (entries.empty()) f.fail("model.vocab", "at least one token");
    // A few padding slots are normal; a huge id is a corrupt (or hostile) file, not a reason to allocate.
    if (n_slots > 2 * n_entries + 1024)
        f.fail("model.vocab",
               "token ids close to 0.." + std::to_string(n_entries - 1) + ", found id " + std::to_string(n_slots - 1));

    std::vector<token_data> tokens(n_slots);
    std::vector<bool> filled(n_slots, false);
    for (std::size_t k = 0; k < entries.size(); ++k) {
        const entry& e = entries[k];
        const auto i = static_cast<std::size_t>(e.id);
        // An added token may re-declare a vocab entry (GPT-2's <|endoftext|>); its content and type win.
        if (filled[i] && k < n_model)
            f.fail("model.vocab." + quote_text(e.text), "each id once, found id " + std::to_string(e.id) + " again");
        tokens[i] = {std::string(e.text), 0.0f, e.type};
        filled[i] = true;
    }
    for (std::size_t i = 0; i < n_slots; ++i)
        if (!filled[i]) tokens[i] = {"[PAD" + std::to_string(i) + "]", 0.0f, token_type::unused};
    return tokens;
}

inline std::vector<bpe_merge> read_hf_merges(const json_fields& f, const json& model, const vocabulary& vocab) {
    const json& list = f.array(f.require(model, "merges", "model.merges"), "model.merges");
    std::vector<bpe_merge> merges;
    merges.reserve(list.size());
    std::string problem;
    for (std::size_t i = 0; i < list.size(); ++i) {
        const std::string path = "model.merges[" + std::to_string(i) + "]";
        const json& m = list[i];
        std::optional<std::pair<std::string_view, std::string_view>> parts;
        if (m.is_string()) {
            parts = split_merge_line(m.get_ref<const std::string&>());
        } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
            parts = std::pair<std::string_view, std::string_view>(m[0].get_ref<const std::string&>(),
                                                                  m[1].get_ref<const std::string&>());
        }
        if (!parts) f.fail(path, "a merge \"left right\" or [\"left\", \"right\"], found " + quote_json(m));
        const auto rule = resolve_bpe_merge(vocab, parts->first, parts->second, problem);
        if (!rule) f.fail(path, "a merge of two tokens: " + problem);
        merges.push_back(*rule);
    }
    return merges;
}

// The one regular expression of the pre-tokenizer, checked to be byte-level.
inline pre_tokenizer read_hf_pre_tokenizer(const json_fields& f, const json& root) {
    const json* pre = json_fields::find(root, "pre_tokenizer");
    if (pre == nullptr)
        throw unsupported_error(
            f.file() + ": 'pre_tokenizer' is null: only byte-level BPE (a ByteLevel pre-tokenizer) is supported");
    std::vector<std::pair<const json*, std::string>> steps{{pre, "pre_tokenizer"}};
    if (f.object(*pre, "pre_tokenizer").value("type", "") == "Sequence") {
        steps.clear();
        const json& list =
            f.array(f.require(*pre, "pretokenizers", "pre_tokenizer.pretokenizers"), "pre_tokenizer.pretokenizers");
        for (std::size_t i = 0; i < list.size(); ++i)
            steps.emplace_back(&list[i], "pre_tokenizer.pretokenizers[" + std::to_string(i) + "]");
    }

    std::vector<std::string> patterns;  // in the order the steps apply
    bool byte_level = false;
    const auto unsupported = [&](const std::string& path, const std::string& what) {
        throw unsupported_error(f.file() + ": '" + quote_text(path) + "': " + quote_text(what, 3 * max_quote_bytes));
    };
    const auto set_pattern = [&](const std::string&, std::string p) {
        patterns.push_back(std::move(p));
    };
    for (const auto& [step, path] : steps) {
        const std::string& type = f.string(f.require(f.object(*step, path), "type", path + ".type"), path + ".type");
        if (type == "ByteLevel") {
            if (byte_level) unsupported(path, "a second ByteLevel step");
            if (f.flag(*step, "add_prefix_space", false, path + ".add_prefix_space"))
                unsupported(path, "add_prefix_space is not supported");
            byte_level = true;
            if (f.flag(*step, "use_regex", true, path + ".use_regex"))
                set_pattern(path, std::string(pre_tokenizer::gpt2_pattern));
        } else if (type == "Split") {
            const std::string& behavior =
                f.string(f.require(*step, "behavior", path + ".behavior"), path + ".behavior");
            if (behavior != "Isolated")
                unsupported(path, "Split behaviour '" + quote_text(behavior) + "' is not supported (only 'Isolated')");
            if (f.flag(*step, "invert", false, path + ".invert"))
                unsupported(path, "an inverted Split is not supported");
            const json& p = f.object(f.require(*step, "pattern", path + ".pattern"), path + ".pattern");
            if (const json* regex = json_fields::find(p, "Regex")) {
                set_pattern(path, f.string(*regex, path + ".pattern.Regex"));
            } else if (const json* literal = json_fields::find(p, "String")) {
                const std::string& s = f.string(*literal, path + ".pattern.String");
                if (s.empty() || s.find("\\E") != std::string::npos)
                    f.fail(path + ".pattern.String", "a non-empty literal without \\E");
                set_pattern(path, "\\Q" + s + "\\E");  // PCRE2's quoting: the text matches itself
            } else {
                f.fail(path + ".pattern", "an object with 'Regex' or 'String'");
            }
        } else if (type == "Digits") {
            // tokenizers' Digits isolates runs of char::is_numeric (Unicode N), or each one.
            set_pattern(path,
                        f.flag(*step, "individual_digits", false, path + ".individual_digits") ? "\\p{N}" : "\\p{N}+");
        } else {
            unsupported(path, "pre-tokenizer type '" + quote_text(type) +
                                  "' is not supported (supported: ByteLevel, Split, Digits, Sequence)");
        }
    }
    if (!byte_level)
        throw unsupported_error(f.file() + ": 'pre_tokenizer' has no ByteLevel step: only byte-level BPE is supported");
    if (patterns.empty())
        throw unsupported_error(f.file() +
                                ": 'pre_tokenizer' does not split the text (no Split, ByteLevel use_regex false)");
    try {
        return pre_tokenizer::from_patterns(std::move(patterns));
    } catch (const invalid_argument_error& e) {
        throw format_error(f.file() + ": 'pre_tokenizer': " + quote_text(e.what(), 3 * max_quote_bytes));
    }
}

inline void check_hf_normalizer(const json_fields& f, const json& root) {
    const json* n = json_fields::find(root, "normalizer");
    if (n == nullptr) return;
    const json* type = json_fields::find(f.object(*n, "normalizer"), "type");
    const std::string name = type != nullptr ? f.string(*type, "normalizer.type") : "";
    if (name == "NFC") return;  // not applied (see the file comment)
    if (name == "Sequence" &&
        f.array(f.require(*n, "normalizers", "normalizer.normalizers"), "normalizer.normalizers").empty())
        return;
    throw unsupported_error(f.file() + ": 'normalizer' of type '" + quote_text(name) +
                            "' is not supported (supported: none, NFC)");
}

// Where a special token's text was read: the file and the field's path, for json_fields::fail when
// the text is not in the vocabulary.
struct hf_field {
    std::string file, path;
};

// BOS / EOS from the post-processor's template: a special token before (after) the sequence; each
// with the field it was read from (tokenizer_config.json's override the template's).
struct hf_specials {
    std::string bos, eos;
    hf_field bos_from, eos_from;
    bool add_bos = false, add_eos = false;
};

inline void read_hf_template(const json_fields& f, const json& processor, const std::string& path, hf_specials& out) {
    const std::string type = processor.is_object() ? processor.value("type", "") : "";
    if (type == "Sequence") {
        const json& list = f.array(f.require(processor, "processors", path + ".processors"), path + ".processors");
        for (std::size_t i = 0; i < list.size(); ++i)
            read_hf_template(f, list[i], path + ".processors[" + std::to_string(i) + "]", out);
        return;
    }
    if (type != "TemplateProcessing") return;
    const json& single = f.array(f.require(processor, "single", path + ".single"), path + ".single");
    const auto special_id = [&](const json& item) -> std::string {
        if (!item.is_object() || !item.contains("SpecialToken")) return {};
        return f.string(
            f.require(f.object(item["SpecialToken"], path + ".single"), "id", path + ".single.SpecialToken.id"),
            path + ".single.SpecialToken.id");
    };
    if (single.empty()) return;
    if (std::string bos = special_id(single.front()); !bos.empty()) {
        out.bos = std::move(bos);
        out.bos_from = {f.file(), path + ".single[0].SpecialToken.id"};
        out.add_bos = true;
    }
    if (std::string eos = special_id(single.back()); !eos.empty() && single.size() > 1) {
        out.eos = std::move(eos);
        out.eos_from = {f.file(), path + ".single[" + std::to_string(single.size() - 1) + "].SpecialToken.id"};
        out.add_eos = true;
    }
}

// tokenizer_config.json beside tokenizer.json: its special tokens and flags override.
inline void read_hf_config(const std::filesystem::path& path, hf_specials& out) {
    if (!std::filesystem::is_regular_file(path)) return;
    const json config = read_json_file(path);
    const json_fields f(path.filename().string());
    f.object(config, "");
    const auto token_text = [&](const char* key, std::string& text, hf_field& from) {
        const json* v = json_fields::find(config, key);
        if (v == nullptr) return;
        const std::string path = v->is_object() ? std::string(key) + ".content" : std::string(key);
        text = f.string(v->is_object() ? f.require(*v, "content", path) : *v, path);
        from = {f.file(), path};
    };
    token_text("bos_token", out.bos, out.bos_from);
    token_text("eos_token", out.eos, out.eos_from);
    out.add_bos = f.flag(config, "add_bos_token", out.add_bos, "add_bos_token");
    out.add_eos = f.flag(config, "add_eos_token", out.add_eos, "add_eos_token");
}

}  // namespace detail

NEXTTOK_DECL tokenizer load_hf_tokenizer(const std::filesystem::path& tokenizer_json) {
    using detail::json;
    const json root = read_json_file(tokenizer_json);
    const json_fields f(tokenizer_json.filename().string());
    if (!root.is_object())
        throw format_error(f.file() + ": expected a JSON object at the top level (a tokenizer.json), found " +
                           root.type_name());
    const json* model = json_fields::find(root, "model");
    if (model == nullptr) throw format_error(f.file() + ": key 'model' is missing: not a Hugging Face tokenizer.json");
    f.object(*model, "model");
    detail::check_hf_bpe_model(f, *model);
    detail::check_hf_normalizer(f, root);
    pre_tokenizer pre = detail::read_hf_pre_tokenizer(f, root);
    std::vector<token_data> tokens = detail::read_hf_tokens(f, root, *model);

    detail::hf_specials specials;
    if (const json* processor = json_fields::find(root, "post_processor"))
        detail::read_hf_template(f, *processor, "post_processor", specials);
    const std::filesystem::path config_path = tokenizer_json.parent_path() / "tokenizer_config.json";
    detail::read_hf_config(config_path, specials);
    if (specials.eos.empty()) {
        const auto it = std::ranges::find(tokens, std::string_view("<|endoftext|>"), &token_data::text);
        if (it != tokens.end() && it->type == token_type::control) specials.eos = it->text;
    }

    // `from`: the file and the field the token's text was read from.
    const auto id_of = [&](const std::string& text, const detail::hf_field& from) {
        if (text.empty()) return no_token;
        const auto it = std::ranges::find(tokens, text, &token_data::text);
        if (it == tokens.end())
            json_fields(from.file).fail(from.path, "a token of the vocabulary, found '" + quote_text(text) + "'");
        return static_cast<token_id>(it - tokens.begin());
    };
    special_token_ids special;
    special.bos = id_of(specials.bos, specials.bos_from);
    special.eos = id_of(specials.eos, specials.eos_from);
    if (const json* unk = json_fields::find(*model, "unk_token"))
        special.unk = id_of(f.string(*unk, "model.unk_token"), {f.file(), "model.unk_token"});

    vocabulary vocab(std::move(tokens), special);
    const std::vector<bpe_merge> merges = detail::read_hf_merges(f, *model, vocab);
    bpe_options options;
    options.ignore_merges = f.flag(*model, "ignore_merges", false, "model.ignore_merges");
    options.add_bos = specials.add_bos && special.bos != no_token;
    options.add_eos = specials.add_eos && special.eos != no_token;
    return tokenizer(bpe_tokenizer(std::move(vocab), merges, std::move(pre), options));
}

}  // namespace nexttok
