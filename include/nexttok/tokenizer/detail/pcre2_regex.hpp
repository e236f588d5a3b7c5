// A compiled PCRE2 regular expression for the pre-tokenizers: UTF-8 with Unicode properties
// (PCRE2_UTF | PCRE2_UCP, so \p{L}, \p{N} and \s are Unicode-aware), JIT-compiled when PCRE2 has a
// JIT for this machine. Subjects may be invalid UTF-8 (PCRE2_MATCH_INVALID_UTF): an ill-formed
// sequence is matched by nothing, so callers see it as text between matches.
//
// Ownership: the compiled code is shared between copies (it is immutable). Thread-safety: find()
// may run concurrently on one regex, each thread with its own match_data.
//
// We use the width-suffixed names (pcre2_compile_8, ...) so that a program that includes pcre2.h
// for another code-unit width still compiles with this header.
#pragma once

#ifndef PCRE2_CODE_UNIT_WIDTH
#define PCRE2_CODE_UNIT_WIDTH 8
#endif
#include <pcre2.h>

#include <nexttok/error.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <string_view>

namespace nexttok::detail {

inline std::string pcre2_message(int code) {
    PCRE2_UCHAR8 buffer[256];
    const int n = pcre2_get_error_message_8(code, buffer, sizeof buffer);
    return n < 0 ? "PCRE2 error " + std::to_string(code) : std::string(reinterpret_cast<const char*>(buffer));
}

class pcre2_regex {
public:
    struct match_data_deleter {
        void operator()(pcre2_match_data_8* md) const noexcept { pcre2_match_data_free_8(md); }
    };
    // Scratch space of one matching thread: allocate once per encode call, reuse for every find().
    using match_data = std::unique_ptr<pcre2_match_data_8, match_data_deleter>;

    // invalid_argument_error with PCRE2's message and the offset in the pattern when it does not compile.
    explicit pcre2_regex(std::string pattern) : pattern_(std::move(pattern)) {
        int code = 0;
        PCRE2_SIZE offset = 0;
        pcre2_code_8* compiled =
            pcre2_compile_8(reinterpret_cast<PCRE2_SPTR8>(pattern_.data()), pattern_.size(),
                            PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &code, &offset, nullptr);
        if (compiled == nullptr)
            throw invalid_argument_error("regular expression '" + pattern_ + "' does not compile at offset " +
                                         std::to_string(offset) + ": " + pcre2_message(code));
        code_.reset(compiled, [](pcre2_code_8* c) { pcre2_code_free_8(c); });
        // Without JIT support (some architectures, or a PCRE2 built without it) matching is interpreted.
        jit_ = pcre2_jit_compile_8(compiled, PCRE2_JIT_COMPLETE) == 0;
    }

    const std::string& pattern() const noexcept { return pattern_; }
    bool jit() const noexcept { return jit_; }

    // Room for the whole match only (captures are not reported), so one match_data serves any regex.
    static match_data make_match_data() {
        match_data md(pcre2_match_data_create_8(1, nullptr));
        if (!md) throw std::bad_alloc();
        return md;
    }

    // The first match in subject at or after `start`: true with [begin, end) set, or false. Unless
    // allow_empty, an empty match is skipped (the search goes on one byte later), so callers always
    // make progress; with allow_empty the caller must move on itself.
    // invalid_argument_error when PCRE2 gives up (its match or heap limit), naming the offset.
    bool find(std::string_view subject, std::size_t start, match_data& md, std::size_t& begin, std::size_t& end,
              bool allow_empty = false) const {
        while (start <= subject.size()) {
            int rc = match(subject, start, md, 0);
            // The JIT's default stack is 32 KiB: a very long run of one character class can exhaust
            // it. The interpreter keeps its backtracking state on the heap instead.
            if (rc == PCRE2_ERROR_JIT_STACKLIMIT) rc = match(subject, start, md, PCRE2_NO_JIT);
            if (rc == PCRE2_ERROR_NOMATCH) return false;
            // rc == 0: the ovector has no room for the captures; the whole match is still there.
            if (rc < 0)
                throw invalid_argument_error("pre-tokenizer: matching the text at byte " + std::to_string(start) +
                                             " failed: " + pcre2_message(rc));
            const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer_8(md.get());
            begin = ovector[0];
            end = ovector[1];
            if (end > begin || allow_empty) return true;
            start = begin + 1;
        }
        return false;
    }

private:
    int match(std::string_view subject, std::size_t start, match_data& md, std::uint32_t options) const {
        return pcre2_match_8(code_.get(), reinterpret_cast<PCRE2_SPTR8>(subject.data()), subject.size(), start, options,
                             md.get(), nullptr);
    }

    std::string pattern_;
    std::shared_ptr<pcre2_code_8> code_;  // shared by copies; freed with the last one
    bool jit_ = false;
};

}  // namespace nexttok::detail
