// nexttok's main example: load a model (GGUF, a Hugging Face directory, or a llama2.c checkpoint
// with its tokenizer.bin),
// generate a continuation of a prompt and stream it to stdout. Statistics go to stderr.
//
//   generate --model stories260K.gguf --prompt "Once upon a time" -n 60 --temperature 0
//   generate --model stories260K.gguf -p "Once" --repeat-penalty 1.3 --stop "." --logprobs 3
//   generate                          (no model file: a built-in model with random weights)
//   generate --model stories260K.gguf -p "Once" --draft-model stories260K-q8_0.gguf --draft-max 8
//   generate --model stories260K.gguf -p "Once" --lookup-ngram 3     (speculative decoding)
//   generate --model stories260K.gguf -n 1200 --context-shift       (past the 128-position context)
//   generate --model chat-model.gguf --chat --system "You are terse." -n 256   (a conversation)
//
// Every sampling and stopping flag sets one field of nexttok::generation_options (named after
// llama.cpp's flag where llama.cpp has one), so a llama.cpp or Hugging Face setup carries over; the
// flag help gives each default. With a drafter (--draft-model, --lookup-ngram) generation goes
// through generate_speculative() with the same options: the same text when greedy, the same
// distribution when sampling, and the speculation's statistics on stderr.
//
// The context: --ctx-size positions (the model's trained context by default). When they are full,
// generation ends (finish: cache_full) with a message on stderr saying how to get more room, unless
// --context-shift drops the older half of the context (after the first --keep prompt tokens) and
// goes on. A --ctx-size beyond the trained context of a model without RoPE scaling is accepted with
// a warning.
//
// --chat: a conversation (chat.hpp), as llama.cpp's -cnv: one user turn per line of stdin, each
// answer generated on the KV cache of the previous turns (only the new tokens are prefilled) and
// streamed to stdout, one line of statistics per turn on stderr (the prompt marker "> " goes there
// too). The template is the model's own (GGUF tokenizer.chat_template, or chat_template in a Hugging
// Face directory's tokenizer_config.json), or --chat-template FILE / chatml. --prompt with --chat is
// the first user turn, then stdin continues the conversation. -n bounds each answer. When the
// conversation no longer fits the context, the program says so and ends (no turn is dropped).
// --special parses special-token texts ("<|im_start|>") in a plain --prompt.
//
// llama.cpp's habits (command_line.hpp): -f/--file reads the prompt from a file; escapes (\n \t ...)
// in the prompt and the system message are processed, as llama.cpp's -e does by default (--no-escape
// keeps them as typed); llama.cpp's single-dash flags work where we have the setting (-cnv, -sys,
// -md, -r) and print a one-line note when they do not apply on a CPU (-ngl, -fa, -b, ...); without
// --seed a random seed is drawn and printed on stderr, so that --seed repeats the run (the library's
// own default seed is fixed; greedy runs draw nothing); llama.cpp's timing lines (load, prompt eval, eval, total) end the run.
#include "chat.hpp"
#include "command_line.hpp"
#include "demo_model.hpp"
#include "flags.hpp"

#include <nexttok/nexttok.hpp>

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <type_traits>

namespace {

struct options {
    std::string model_path;             // GGUF file, llama2.c checkpoint or HF directory; empty: the built-in demo
    std::string tokenizer_path;         // tokenizer file or directory (required with a llama2.c checkpoint)
    std::string prompt;                 // text to continue; BOS is prepended when the model asks for it
    std::string prompt_file;            // -f: the prompt read from this file (one trailing newline dropped)
    bool no_escape = false;             // keep \n, \t ... in the prompt and the system message as typed
    std::int64_t context = 0;           // KV-cache capacity in positions; 0: the model's context length
    std::string scalar = "float";       // KV cache and activations: float, half or bf16
    bool no_cache = false;              // recompute the whole prefix at every step (the uncached baseline)
    std::string cache_type = "scalar";  // the KV cache in --scalar's type, or q8_0 (8-bit blocks)
    int threads = 0;                    // 0: one per hardware thread
    nexttok::generation_options gen;
    flags::speculative_flags spec;  // the drafter, if any, and draft_max / draft_min
    bool special = false;           // parse special-token texts in --prompt
    bool chat = false;              // an interactive conversation on stdin (chat.hpp)
    std::string system;             // --chat: the system message
    std::string chat_template;      // --chat: a Jinja file or a built-in name; empty: the model's own
    bool check_tensors = false;     // scan every weight for NaN and inf whatever the model's size
};

nexttok::load_options load_options_of(const options& o) {
    nexttok::load_options lo;
    if (o.check_tensors) lo.check_tensors = nexttok::tensor_check::always;
    return lo;
}

struct loaded {
    std::shared_ptr<const nexttok::model> model;
    std::optional<nexttok::tokenizer> tok;
    double load_seconds = 0.0;                    // mapping and checking the model, reading the tokenizer
    std::shared_ptr<const nexttok::model> draft;  // --draft-model; null without it
    double draft_load_seconds = 0.0;
};

loaded load(const options& o) {
    loaded l;
    if (o.model_path.empty()) {
        l.tok.emplace(demo::make_tokenizer());
        l.model = demo::make_model(static_cast<std::int64_t>(l.tok->vocab_size()));
        std::cerr << "No --model given: generating from a built-in model with random weights (seed " << demo::seed
                  << "), so the text is meaningless.\nTry: --model ../shared/data/models/stories260K/stories260K.gguf "
                     "--prompt \"Once upon a time\"\n";
    } else {
        const auto t0 = std::chrono::steady_clock::now();
        l.model = nexttok::load_model(o.model_path, load_options_of(o));
        l.tok.emplace(nexttok::load_model_tokenizer(*l.model, o.tokenizer_path));
        l.load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    if (!o.spec.draft_model.empty()) {
        // Only the weights: the draft proposes ids of the target's vocabulary, which the target's
        // tokenizer reads (generate_speculative checks that the vocabulary sizes agree).
        const auto t0 = std::chrono::steady_clock::now();
        l.draft = nexttok::load_model(o.spec.draft_model, load_options_of(o));
        l.draft_load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    return l;
}

// --logprobs N: one line per generated token on stderr, its log-probability and the N most likely.
void print_logprobs(const nexttok::tokenizer& tok, const nexttok::generation_result& r) {
    auto quoted = [&](nexttok::token_id id) {
        std::string s;
        for (char ch : tok.token_to_piece(id)) s += ch == '\n' ? std::string("\\n") : std::string(1, ch);
        return "'" + s + "'";
    };
    std::fprintf(stderr, "\n[logprobs] step id 'piece' logprob | the %zu most likely: id 'piece' logprob\n",
                 r.top_logprobs.empty() ? std::size_t{0} : r.top_logprobs.front().size());
    for (std::size_t i = 0; i < r.tokens.size(); ++i) {
        std::fprintf(stderr, "[logprobs] %3zu %5d %-12s %8.4f |", i, r.tokens[i], quoted(r.tokens[i]).c_str(),
                     r.logprobs[i]);
        for (const auto& alt : r.top_logprobs[i])
            std::fprintf(stderr, " %d %s %.4f", alt.id, quoted(alt.id).c_str(), alt.logprob);
        std::fprintf(stderr, "\n");
    }
}

// What a speculative generation reports besides its generation_result.
struct speculation_report {
    nexttok::speculative_result result;
    std::string drafter;                // "draft model FILE" or "n-gram lookup, n N..1"
    std::size_t draft_cache_bytes = 0;  // the draft model's KV cache; 0 for n-gram lookup
};

// --draft-model or --lookup-ngram: generate_speculative() with the same generation_options. The draft
// model runs on its own decoder (with the target's thread count) and a cache of the target's type and
// capacity, so that it can draft up to the end of the target's context.
template <class Scalar, class Cache>
speculation_report speculate(const options& o, const loaded& l, nexttok::decoder<Scalar>& dec, Cache& cache,
                             std::span<const nexttok::token_id> prompt, const nexttok::token_callback& on_token) {
    speculation_report s;
    if (l.draft) {
        nexttok::decoder<Scalar> draft_dec(l.draft, dec.n_threads());
        Cache draft_cache(l.draft->config(), cache.capacity());
        nexttok::model_drafter draft(draft_dec, draft_cache);
        s.result = nexttok::generate_speculative(dec, cache, draft, *l.tok, prompt, o.gen, o.spec.options, on_token);
        s.drafter = "draft model " + l.draft->file_name();
        s.draft_cache_bytes = draft_cache.bytes();
    } else {
        nexttok::ngram_drafter draft(o.spec.lookup_ngram);
        s.result = nexttok::generate_speculative(dec, cache, draft, *l.tok, prompt, o.gen, o.spec.options, on_token);
        s.drafter = "n-gram lookup, n " + std::to_string(o.spec.lookup_ngram) + "..1";
    }
    return s;
}

// The statistics of a speculative generation, under its timing line.
void print_speculation(const loaded& l, const speculation_report& s, const nexttok::speculative_options& spec) {
    const nexttok::speculative_stats& st = s.result.speculation;
    char acceptance[32] = "n/a (nothing drafted)";
    if (st.n_drafted > 0) std::snprintf(acceptance, sizeof acceptance, "%.4f", st.acceptance_rate());
    std::fprintf(stderr,
                 "[%s] speculation (%s, k %lld..%lld): drafted: %lld tokens, accepted: %lld, acceptance: %s | "
                 "rounds: %lld, target calls: %lld | tokens/round: %.2f\n",
                 l.model->file_name().c_str(), s.drafter.c_str(), static_cast<long long>(spec.draft_min),
                 static_cast<long long>(spec.draft_max), static_cast<long long>(st.n_drafted),
                 static_cast<long long>(st.n_accepted), acceptance, static_cast<long long>(st.n_rounds),
                 static_cast<long long>(st.n_target_calls), s.result.tokens_per_round());
}

// --ctx-size beyond what the model was trained on: RoPE without scaling has never seen those
// positions (learned positions have no row for them: the decoder refuses them).
void warn_about_context(const options& o, const loaded& l) {
    const nexttok::model_config& c = l.model->config();
    if (o.context <= c.max_seq_len || c.rope_scaling.type != nexttok::rope_scaling_type::none) return;
    std::fprintf(
        stderr,
        "[%s] warning: --ctx-size %lld is more than the %lld positions the model was trained on, and it has no "
        "RoPE scaling: the text may degrade past position %lld\n",
        l.model->file_name().c_str(), static_cast<long long>(o.context), static_cast<long long>(c.max_seq_len),
        static_cast<long long>(c.max_seq_len));
}

// finish: cache_full: what filled up, and how to get more room.
void explain_full_context(const options& o, const loaded& l, std::int64_t capacity) {
    const std::int64_t trained = l.model->config().max_seq_len;
    std::string room;
    if (capacity < trained) room = "--ctx-size up to " + std::to_string(trained) + " (the model's trained context)";
    if (!o.no_cache && !o.spec.enabled()) {
        if (!room.empty()) room += ", or ";
        room += "--context-shift (keep the first --keep prompt tokens, drop half of the rest and go on)";
    }
    if (room.empty()) room = "a shorter prompt or a model trained on a longer context";
    std::fprintf(stderr, "[%s] the context is full at %lld positions: generation stopped there. For more room: %s\n",
                 l.model->file_name().c_str(), static_cast<long long>(capacity), room.c_str());
}

// The load and cache line that ends every run.
template <class Scalar, class Cache>
void print_setup(const options& o, const loaded& l, const nexttok::decoder<Scalar>& dec, const Cache& cache,
                 const char* scalar_name) {
    const std::string cache_name = o.no_cache ? std::string(scalar_name) + ", no cache: scratch"
                                   : std::is_same_v<nexttok::kv_element_t<Cache>, nexttok::block_q8_0>
                                       ? std::string("q8_0")
                                       : std::string(scalar_name);
    std::fprintf(stderr,
                 "[%s] load: %.1f ms | KV cache (%s): %zu bytes for %lld positions | weights: %llu bytes | threads: %d "
                 "| samplers: %s\n",
                 l.model->file_name().c_str(), 1e3 * l.load_seconds, cache_name.c_str(), cache.bytes(),
                 static_cast<long long>(cache.capacity()), static_cast<unsigned long long>(l.model->weight_bytes()),
                 dec.n_threads(), nexttok::format_sampler_order(o.gen.sampling.sampler_order).c_str());
}

// llama.cpp's timing lines: load, prompt eval (the prefill), eval (each later forward call), total.
void print_llama_timings(const loaded& l, const nexttok::generation_result& r) {
    const nexttok::generation_timings& t = r.timings;
    const std::string file = l.model->file_name();  // kept: c_str() of the returned temporary would dangle
    const char* name = file.c_str();
    const auto per = [](double seconds, std::int64_t n) {
        return n > 0 ? 1e3 * seconds / static_cast<double>(n) : 0.0;
    };
    const auto rate = [](double seconds, std::int64_t n) {
        return seconds > 0.0 ? static_cast<double>(n) / seconds : 0.0;
    };
    std::fprintf(stderr, "[%s]        load time = %10.2f ms\n", name, 1e3 * l.load_seconds);
    std::fprintf(stderr,
                 "[%s] prompt eval time = %10.2f ms / %5lld tokens (%8.2f ms per token, %8.2f tokens per second)\n",
                 name, 1e3 * t.prefill_seconds, static_cast<long long>(t.n_prompt_tokens),
                 per(t.prefill_seconds, t.n_prompt_tokens), rate(t.prefill_seconds, t.n_prompt_tokens));
    std::fprintf(stderr,
                 "[%s]        eval time = %10.2f ms / %5lld runs   (%8.2f ms per token, %8.2f tokens per second)\n",
                 name, 1e3 * t.decode_seconds, static_cast<long long>(t.n_decode_steps),
                 per(t.decode_seconds, t.n_decode_steps), rate(t.decode_seconds, t.n_decode_steps));
    std::fprintf(stderr, "[%s]       total time = %10.2f ms / %5lld tokens\n", name,
                 1e3 * (l.load_seconds + t.prefill_seconds + t.decode_seconds),
                 static_cast<long long>(t.n_prompt_tokens + static_cast<std::int64_t>(r.tokens.size())));
}

// -f FILE: the prompt, without one trailing newline (as llama.cpp reads it).
std::string read_prompt_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw nexttok::io_error("-f " + path + ": cannot open the prompt file");
    std::string text((std::istreambuf_iterator<char>(in)), {});
    if (text.ends_with("\r\n"))
        text.resize(text.size() - 2);
    else if (text.ends_with('\n'))
        text.pop_back();
    return text;
}

// --chat: the conversation on stdin (chat.hpp), on one cache for all its turns.
template <class Scalar, class Cache>
void run_chat(const options& o, const loaded& l, nexttok::decoder<Scalar>& dec, Cache& cache, const char* scalar_name) {
    chat::chat_options co;
    co.system = o.system;
    co.gen = o.gen;
    co.model_name = l.model->file_name();
    const std::int64_t trained = l.model->config().max_seq_len;
    co.room_hint = cache.capacity() < trained
                       ? "--ctx-size up to " + std::to_string(trained) + " (the model's trained context)"
                       : "a new conversation, or a model trained on a longer context";
    chat::conversation<nexttok::decoder<Scalar>, Cache> c(dec, cache, *l.tok,
                                                          chat::choose_template(*l.model, o.chat_template), co);
    std::fprintf(stderr, "[%s] chat template: %s | one line per turn; /exit or end of input ends the conversation\n",
                 co.model_name.c_str(), c.chat_template().name().c_str());
    chat::run(c, o.prompt, std::cin, std::cout, std::cerr);
    print_setup(o, l, dec, cache, scalar_name);
}

template <class Scalar, class Cache>
void run(const options& o, const loaded& l, const char* scalar_name) {
    const nexttok::model_config& c = l.model->config();
    warn_about_context(o, l);
    nexttok::decoder<Scalar> dec(
        l.model, o.threads > 0 ? o.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
    Cache cache(c, o.context);
    if (o.chat) {
        if constexpr (nexttok::prefix_reusing_decoder<nexttok::decoder<Scalar>, Cache>)
            return run_chat(o, l, dec, cache, scalar_name);
        else
            throw nexttok::invalid_argument_error(
                "--chat reuses the KV cache of the previous turns: it cannot be combined with --no-cache");
    }
    const auto prompt = l.tok->encode(o.prompt, l.tok->default_add_bos(), o.special);
    if (prompt.empty())
        throw nexttok::invalid_argument_error("the prompt is empty and the model adds no BOS: give --prompt");
    auto stream = [](const nexttok::token_event& e) {
        std::cout << e.text << std::flush;
        return true;
    };

    std::vector<nexttok::generation_result> results;
    std::optional<speculation_report> speculation;
    if (o.spec.enabled()) {
        if constexpr (nexttok::rewindable_kv_storage<Cache, Scalar>) {
            // The prompt goes out with the first token, so that options the verification refuses
            // (mirostat, XTC, a draft of another vocabulary) leave stdout empty.
            bool started = false;
            auto after_prompt = [&](const nexttok::token_event& e) {
                if (!started) std::cout << o.prompt;
                started = true;
                return stream(e);
            };
            speculation = speculate(o, l, dec, cache, prompt, after_prompt);
            if (!started) std::cout << o.prompt;
            std::cout << std::endl;
            results.push_back(speculation->result);
        } else {
            throw nexttok::invalid_argument_error(
                std::string(o.spec.drafter_flag()) +
                " drops rejected drafts from the KV cache: it cannot be combined with --no-cache");
        }
    } else if (o.gen.n_samples == 1) {
        std::cout << o.prompt << std::flush;
        results.push_back(nexttok::generate(dec, cache, *l.tok, prompt, o.gen, stream));
        std::cout << std::endl;
    } else if constexpr (Cache::retains_history) {
        std::int64_t current = -1;
        auto headed = [&](const nexttok::token_event& e) {
            if (e.sample != current) {
                current = e.sample;
                std::cout << (current > 0 ? "\n" : "") << "--- sample " << current << " ---\n" << o.prompt;
            }
            return stream(e);
        };
        results = nexttok::generate_n(dec, cache, *l.tok, prompt, o.gen, headed);
        std::cout << std::endl;
    } else {
        throw nexttok::invalid_argument_error(
            "--n-samples shares the prompt's KV cache: it cannot be combined with --no-cache");
    }

    bool full = false;
    for (std::size_t i = 0; i < results.size(); ++i) {
        const auto& r = results[i];
        if (o.gen.n_logprobs > 0) print_logprobs(*l.tok, r);
        const auto& t = r.timings;
        const std::string shifts =
            o.gen.context_shift ? " | context shifts: " + std::to_string(r.n_context_shifts) : "";
        std::fprintf(
            stderr,
            "\n[%s] %sprompt: %lld tokens, %.1f tokens/s | generated: %zu tokens, %.1f tokens/s | finish: %s%s\n",
            l.model->file_name().c_str(), results.size() > 1 ? ("sample " + std::to_string(i) + ": ").c_str() : "",
            static_cast<long long>(t.n_prompt_tokens), t.prefill_tokens_per_second(), r.tokens.size(),
            t.decode_tokens_per_second(), std::string(nexttok::to_string(r.reason)).c_str(), shifts.c_str());
        if (speculation) print_speculation(l, *speculation, o.spec.options);
        print_llama_timings(l, r);
        full = full || r.reason == nexttok::finish_reason::cache_full;
    }
    if (full) explain_full_context(o, l, cache.capacity());
    print_setup(o, l, dec, cache, scalar_name);
    if (l.draft)
        std::fprintf(
            stderr,
            "[%s] draft model %s: load: %.1f ms | KV cache (%s): %zu bytes for %lld positions | weights: %llu bytes\n",
            l.model->file_name().c_str(), l.draft->file_name().c_str(), 1e3 * l.draft_load_seconds,
            std::is_same_v<nexttok::kv_element_t<Cache>, nexttok::block_q8_0> ? "q8_0" : scalar_name,
            speculation->draft_cache_bytes, static_cast<long long>(cache.capacity()),
            static_cast<unsigned long long>(l.draft->weight_bytes()));
}

template <class Scalar>
void run_scalar(const options& o, const loaded& l, const char* name) {
    if (o.no_cache)
        run<Scalar, nexttok::no_cache<Scalar>>(o, l, name);
    else if (o.cache_type == "q8_0")
        run<Scalar, nexttok::q8_0_kv_cache<Scalar>>(o, l, name);
    else
        run<Scalar, nexttok::kv_cache<Scalar>>(o, l, name);
}

// --chat and the flags that go with it, or contradict it.
void check_chat_flags(const options& o) {
    if (!o.chat) {
        if (!o.system.empty())
            throw nexttok::invalid_argument_error("--system is the system message of a conversation: it needs --chat");
        if (!o.chat_template.empty())
            throw nexttok::invalid_argument_error("--chat-template applies to a conversation: it needs --chat");
        return;
    }
    const auto refuse = [](const std::string& flag, const std::string& why) {
        throw nexttok::invalid_argument_error(flag + " cannot be combined with --chat: " + why);
    };
    if (o.no_cache) refuse("--no-cache", "each turn reuses the KV cache of the previous ones");
    if (o.gen.n_samples != 1)
        refuse("--n-samples " + std::to_string(o.gen.n_samples), "a conversation has one answer per turn");
    if (o.spec.enabled()) refuse(o.spec.drafter_flag(), "speculative decoding is not available in chat mode");
    if (o.gen.context_shift)
        refuse("--context-shift",
               "the prefix reuse needs the cache to hold exactly what a prefill of its tokens writes");
    if (o.gen.n_logprobs > 0) refuse("--logprobs", "chat mode prints no per-token log-probabilities");
    if (o.special)
        refuse("--special",
               "user text in a conversation is never parsed for special tokens (only the template's own text is)");
}

}  // namespace

int main(int argc, char** argv) {
    options o;
    CLI::App app{"nexttok generate: continue a prompt with a decoder-only transformer"};
    flags::add_model_flags(app, o.model_path, o.tokenizer_path);
    auto* prompt_flag =
        app.add_option("-p,--prompt", o.prompt, "prompt text (escapes such as \\n are processed unless --no-escape)");
    app.add_option("-f,--file", o.prompt_file, "read the prompt from this file (one trailing newline dropped)")
        ->check(CLI::ExistingFile)
        ->excludes(prompt_flag);
    app.add_flag("-e,--escape")
        ->description(
            "process escapes (\\n \\r \\t \\' \\\" \\\\) in the prompt and the system message: the default, as in "
            "llama.cpp");
    app.add_flag("--no-escape", o.no_escape, "keep backslashes in the prompt and the system message as typed");
    app.add_option("-c,--ctx-size", o.context,
                   "KV-cache capacity in positions (0: the model's context length; more than that warns unless the "
                   "model has RoPE scaling)")
        ->capture_default_str()
        ->check(CLI::NonNegativeNumber);
    app.add_option("--scalar", o.scalar, "type of the KV cache and activations")
        ->capture_default_str()
        ->check(CLI::IsMember({"float", "half", "bf16"}));
    app.add_flag("--no-cache", o.no_cache, "recompute the whole prefix at every step (uncached baseline)");
    app.add_flag("--check-tensors", o.check_tensors,
                 "scan every weight for NaN and inf when loading (by default only models up to 2 GiB)");
    app.add_option("--cache-type", o.cache_type,
                   "KV cache storage: scalar (--scalar's type) or q8_0 (8-bit blocks, 3.8x smaller than float)")
        ->capture_default_str()
        ->check(CLI::IsMember({"scalar", "q8_0"}));
    app.add_option("-t,--threads", o.threads, "threads (0: one per hardware thread)")
        ->capture_default_str()
        ->check(CLI::Range(0, 1024));
    flags::add_speculative_flags(app, o.spec);
    flags::generation_flags gf;
    flags::add_generation_flags(app, o.gen, gf);
    flags::add_context_flags(app, o.gen);
    app.add_flag("--special", o.special,
                 "parse special-token texts such as <|im_start|> in --prompt as the tokens they name");
    app.add_flag(
        "--chat,--conversation", o.chat,
        "an interactive conversation: one user turn per line of stdin, rendered with the model's chat template; "
        "each turn prefills only its new tokens (--prompt: the first turn)");
    app.add_option("--system", o.system, "--chat: a system message before the first turn");
    app.add_option("--chat-template", o.chat_template,
                   "--chat: a Jinja chat template file, or chatml (default: the model's own)");
    flags::add_version_flag(app, "generate");

    try {
        std::vector<std::string> notes;
        std::vector<std::string> args;
        try {
            args = flags::translate_llama_flags(app, argc, argv, notes);
        } catch (const CLI::ParseError& e) {
            return flags::refuse_command_line(e);
        }
        if (const int status = flags::parse_command_line(app, std::move(args)); status >= 0) return status;
        for (const std::string& note : notes) std::cerr << note << '\n';
        if (!o.prompt_file.empty()) o.prompt = read_prompt_file(o.prompt_file);
        if (!o.no_escape) {
            o.prompt = flags::process_escapes(o.prompt);
            o.system = flags::process_escapes(o.system);
        }
        if (app.count("--seed") == 0 && o.gen.sampling.temperature > 0.0f) {
            // Sampling: as llama.cpp and Hugging Face do, a new seed for each run, printed so that
            // --seed repeats it (greedy decoding draws nothing).
            o.gen.sampling.seed = std::random_device{}();
            std::cerr << "seed: " << o.gen.sampling.seed << " (drawn at random; --seed " << o.gen.sampling.seed
                      << " repeats this run)\n";
        }
        flags::finish_generation_flags(o.gen, gf);
        o.gen.validate();
        flags::finish_speculative_flags(o.spec, o.gen);
        check_chat_flags(o);
        if (o.no_cache && o.cache_type != "scalar")
            throw nexttok::invalid_argument_error("--cache-type " + o.cache_type +
                                                  " needs a KV cache: it cannot be combined with --no-cache");
        const loaded l = load(o);
        if (o.scalar == "half")
            run_scalar<Eigen::half>(o, l, "half");
        else if (o.scalar == "bf16")
            run_scalar<Eigen::bfloat16>(o, l, "bf16");
        else
            run_scalar<float>(o, l, "float");
    } catch (const nexttok::error& e) {
        std::cerr << "error: " << e.what() << '\n';
        return 1;
    } catch (const std::exception& e) {
        std::cerr << "error: " << e.what() << '\n';
        return 1;
    }
    return 0;
}
