// The regular expressions of the byte-level BPE pre-tokenizers (data; see pre_tokenizer_kind.hpp
// for where they come from and where they differ from llama.cpp's spelling). PCRE2 syntax, compiled
// with UTF and UCP. Non-ASCII characters are written \x{...} so that the source holds no look-alike
// or invisible characters (the ideographic space U+3000, the Kelvin sign U+212A).
#pragma once

#include <string_view>

namespace nexttok::detail::pre_patterns {

// GPT-2 (OpenAI's encoder.py; HF ByteLevel with use_regex).
inline constexpr std::string_view gpt2 =
    R"re('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)re";
// The same as llama.cpp spells it, without the final |\s+: it cuts the same pieces (tested), so the
// lists below use the full form, as the tokenizer.json files (a ByteLevel step) do.
inline constexpr std::string_view gpt2_llama_cpp =
    R"re('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S))re";
// Llama 3 (tiktoken cl100k_base): case-insensitive contractions, letters with one leading
// non-letter, digits in groups of at most 3, newlines kept with the punctuation or spaces before them.
inline constexpr std::string_view llama3 =
    R"re((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";
// Qwen2: as Llama 3 but one digit per piece.
inline constexpr std::string_view qwen2 =
    R"re((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";
// GPT-4o (tiktoken o200k_base): words split before an upper-case letter that follows lower case,
// contractions attached, '/' kept with the punctuation run.
inline constexpr std::string_view gpt4o =
    R"re([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";
// BLOOM, Poro, GPT-3 Finnish: a run of anything but whitespace and a few punctuation marks
// (the parentheses and '|' are characters of the class), with one leading space.
inline constexpr std::string_view bloom_words =
    R"re( ?[^(\s|.,!?\x{2026}\x{3002}\x{FF0C}\x{3001}\x{964}\x{6D4}\x{60C})]+)re";

inline constexpr std::string_view gpt2_list[] = {gpt2};
inline constexpr std::string_view llama3_list[] = {llama3};
inline constexpr std::string_view qwen2_list[] = {qwen2};
inline constexpr std::string_view gpt4o_list[] = {gpt4o};

inline constexpr std::string_view llama_cpp_default[] = {
    R"re([\p{P}\$\+<=>\^~\|]+)re",
    gpt2,
    R"re(\p{N}+)re",
    R"re([0-9][0-9][0-9])re",
};

// Jais 2: Llama 3 with whitespace runs cut in power-of-two lengths.
inline constexpr std::string_view jais2[] = {
    R"re((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s{512}(?!\S)|\s{256}(?!\S)|\s{128}(?!\S)|\s{64}(?!\S)|\s{32}(?!\S)|\s{16}(?!\S)|\s{8}(?!\S)|\s{4}(?!\S)|\s{1,2}(?!\S)|\s{1})re",
};

// DeepSeek LLM: newlines alone; words of cased letters (Latin, Greek, Cyrillic, Armenian, Georgian,
// Cherokee, Glagolitic, Coptic, Deseret, ...) with one leading space; ASCII and full-width
// punctuation; trailing whitespace; CJK and Hangul runs; number runs.
inline constexpr std::string_view deepseek_llm[] = {
    R"re([\r\n])re",
    R"re(\s?[A-Za-z\x{B5}\x{C0}-\x{D6}\x{D8}-\x{F6}\x{F8}-\x{1BA}\x{1BC}-\x{1BF}\x{1C4}-\x{293}\x{295}-\x{2AF})re"
    R"re(\x{370}-\x{373}\x{376}\x{377}\x{37B}-\x{37D}\x{37F}\x{386}\x{388}-\x{38A}\x{38C}\x{38E}-\x{3A1}\x{3A3}-\x{3F5})re"
    R"re(\x{3F7}-\x{481}\x{48A}-\x{52F}\x{531}-\x{556}\x{10A0}-\x{10C5}\x{13A0}-\x{13F5}\x{13F8}-\x{13FD})re"
    R"re(\x{1C90}-\x{1CBA}\x{1CBD}-\x{1CBF}\x{1D00}-\x{1D2B}\x{1D6B}-\x{1D77}\x{1D79}-\x{1D9A}\x{1E00}-\x{1F15})re"
    R"re(\x{1F18}-\x{1F1D}\x{1F20}-\x{1F45}\x{1F48}-\x{1F4D}\x{1F50}-\x{1F57}\x{1F59}\x{1F5B}\x{1F5D}\x{1F5F}-\x{1F7D})re"
    R"re(\x{1F80}-\x{1FB4}\x{1FB6}-\x{1FBC}\x{1FBE}\x{1FC2}-\x{1FC4}\x{1FC6}-\x{1FCC}\x{1FD0}-\x{1FD3}\x{1FD6}-\x{1FDB})re"
    R"re(\x{1FE0}-\x{1FEC}\x{1FF2}-\x{1FF4}\x{1FF6}-\x{1FFC}\x{2102}\x{2107}\x{210A}-\x{2113}\x{2115}\x{2119}-\x{211D})re"
    R"re(\x{2124}\x{2126}\x{2128}\x{212A}-\x{212D}\x{212F}-\x{2134}\x{2139}\x{213C}-\x{213F}\x{2145}-\x{2149}\x{214E})re"
    R"re(\x{2183}\x{2184}\x{2C00}-\x{2C7B}\x{2C7E}-\x{2CE4}\x{2CEB}-\x{2CEE}\x{2CF2}\x{2CF3}\x{A640}-\x{A66D})re"
    R"re(\x{A680}-\x{A69B}\x{A722}-\x{A76F}\x{A771}-\x{A787}\x{A78B}-\x{A78E}\x{AB70}-\x{ABBF}\x{FB00}-\x{FB06})re"
    R"re(\x{FB13}-\x{FB17}\x{FF21}-\x{FF3A}\x{FF41}-\x{FF5A}\x{10400}-\x{1044F}\x{104B0}-\x{104D3}\x{104D8}-\x{104FB})re"
    R"re(\x{10C80}-\x{10CB2}\x{10CC0}-\x{10CF2}\x{118A0}-\x{118DF}\x{1E900}-\x{1E943}]+)re",
    R"re(\s?[!-/:-~\x{FF01}-\x{FF0F}\x{FF1A}-\x{FF5E}\x{2018}-\x{201F}\x{3000}-\x{3002}]+)re",
    R"re(\s+$)re",
    R"re([\x{4E00}-\x{9FA5}\x{800}-\x{4E00}\x{AC00}-\x{D7FF}]+)re",
    R"re(\p{N}+)re",
};

inline constexpr std::string_view deepseek_coder[] = {
    R"re([\r\n])re",    R"re(\s?\p{L}+)re",
    R"re(\s?\p{P}+)re", R"re([\x{4E00}-\x{9FA5}\x{800}-\x{4E00}\x{AC00}-\x{D7FF}]+)re",
    R"re(\p{N})re",
};

// DeepSeek V3 (also Hunyuan dense, JoyAI, HY v4).
inline constexpr std::string_view deepseek_v3[] = {
    R"re(\p{N}{1,3})re",
    R"re([\x{4E00}-\x{9FA5}\x{3040}-\x{309F}\x{30A0}-\x{30FF}]+)re",
    R"re([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re",
};

inline constexpr std::string_view spark2_5[] = {
    R"re(\p{N}{1,3})re",
    R"re([\x{4E00}-\x{9FA5}\x{3040}-\x{309F}\x{30A0}-\x{30FF}]+)re",
    R"re([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+|[\r\n]|\s+(?!\S)|\s+)re",
    R"re(\p{N})re",
};

// Youtu: Hangul, CJK punctuation, Bopomofo and CJK runs first, then a GPT-4o-like expression.
inline constexpr std::string_view youtu[] = {
    R"re([\x{AC00}-\x{D7A3}\x{3131}-\x{318E}]+|[\x{FF01}\x{2026}\x{201C}\x{201D}\x{2018}\x{2019}\x{2014}\x{FF1A}\x{FF1B}\x{FF0C}\x{3001}-\x{303F}\x{FE30}-\x{FE4F}]+|[\x{3105}-\x{312F}]+|[\x{4E00}-\x{9FA5}\x{3040}-\x{309F}\x{30A0}-\x{30FF}]+)re",
    R"re([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)re",
};

// Falcon: punctuation runs, GPT-2, then digit runs in threes from the left.
inline constexpr std::string_view falcon[] = {
    R"re([\p{P}\$\+<=>\^~\|`]+)re",
    gpt2,
    R"re([0-9][0-9][0-9])re",
};

// StarCoder (also Refact, Command-R, SmolLM, CodeShell, EXAONE, Minerva, Mellum 2): every digit
// alone, then GPT-2.
inline constexpr std::string_view starcoder[] = {R"re(\p{N})re", gpt2};

inline constexpr std::string_view qwen35[] = {
    R"re((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re",
};

inline constexpr std::string_view bloom[] = {bloom_words};
inline constexpr std::string_view viking[] = {bloom_words, R"re(\p{N})re"};

// Tekken (Mistral Nemo): GPT-4o's word rule without contractions, one digit per piece.
inline constexpr std::string_view tekken[] = {
    R"re([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)re",
};

// Chameleon: sentinel and image tokens, tabs/newlines and 4- or 2-space runs, single digits,
// single punctuation marks, then GPT-2.
inline constexpr std::string_view chameleon[] = {
    R"re(<sentinel:[0-9]+>)re",    R"re((IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z)re",
    R"re(([\t\n]|    |  ))re",     R"re(\p{N})re",
    R"re([\p{P}!-/:-@\[-`{-~])re", gpt2,
};

// Tiny Aya, Cohere 2 MoE: digit runs in threes from the right, then GPT-4o.
inline constexpr std::string_view tiny_aya[] = {R"re(\d{1,3}(?=(?:\d{3})*\b))re", gpt4o};

// Kimi K2 (tokenization_kimi.py): Han runs, then GPT-4o's word rule over non-Han letters.
inline constexpr std::string_view kimi_k2[] = {
    R"re(\p{Han}+|[^\r\n\p{L}\p{N}]?(?:(?!\p{Han})[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}])*(?:(?!\p{Han})[\p{Ll}\p{Lm}\p{Lo}\p{M}])+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?(?:(?!\p{Han})[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}])+(?:(?!\p{Han})[\p{Ll}\p{Lm}\p{Lo}\p{M}])*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re",
};

// SuperBPE: number runs, cut (by an empty match) before each group of three digits from the right.
inline constexpr std::string_view superbpe[] = {R"re(\p{N}+)re", R"re((?=(\d{3})+(?!\d)))re"};

// Ling / Bailing MoE (its tokenizer.json, possessive quantifiers included).
inline constexpr std::string_view bailingmoe[] = {
    R"re('(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]++[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+)re",
};

inline constexpr std::string_view seed_coder[] = {
    R"re((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1}| ?[^\s\p{L}\p{N}\r\n]+|\s*[\r\n]+|\s+(?!\S)|\s+)re",
};

// Qwen2 without the contractions (Turkish apostrophe suffixes stay with their word).
inline constexpr std::string_view ufakzeka[] = {
    R"re([^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re",
};

// AFMoE: digit runs as a group of 1-2 then threes (llama.cpp's custom \p{AFMoE_digits} splitter,
// written as an expression), CJK, kana, Thai, Lao, Khmer, Myanmar, Hangul runs, then DeepSeek V3's rule.
inline constexpr std::string_view afmoe[] = {
    R"re(\p{N}{1,3}(?=(?:\p{N}{3})*(?!\p{N})))re",
    R"re([\x{4E00}-\x{9FFF}\x{3400}-\x{4DBF}\x{F900}-\x{FAFF}\x{3040}-\x{309F}\x{30A0}-\x{30FF}\x{FF65}-\x{FF9F})re"
    R"re(\x{2F00}-\x{2FDF}\x{E40}-\x{E7F}\x{E80}-\x{EFF}\x{1780}-\x{17FF}\x{1000}-\x{109F}\x{AA60}-\x{AA7F})re"
    R"re(\x{A9E0}-\x{A9FF}\x{AC00}-\x{D7AF}\x{1100}-\x{11FF}]+)re",
    R"re([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re",
};

// Laguna: lines and newline runs, then Qwen2's rule.
inline constexpr std::string_view laguna[] = {
    R"re([^\n]+|[\n]+)re",
    R"re((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re",
};

// EXAONE MoE: letters with their marks, and words joined by single spaces, in one piece.
inline constexpr std::string_view exaone_moe[] = {
    R"re((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?(?:\p{L}\p{M}*(?: \p{L}\p{M}*)*)+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]?|\s*[\r\n]|\s+(?!\S)|\s+)re",
};

// MiniCPM 5: digits in groups of at most three, then Qwen2's rule with number runs.
inline constexpr std::string_view minicpm5[] = {
    R"re(\p{N}{1,3})re",
    R"re((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}+| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re",
};

}  // namespace nexttok::detail::pre_patterns
