// nexttok's batching example: continue many prompts at once with continuous batching (a scheduler
// over a paged KV pool, nexttok/batching.hpp), and report the throughput and the pool's use.
//
//   batch --model stories260K.gguf --file prompts.txt --parallel 4 -n 40 --temperature 0
//   some-command | batch --model stories260K.gguf --file - --ctx-size 1024 --seed 7
//
// Prompts: one per line of --file ("-": standard input); empty lines are skipped, a trailing '\r' is
// dropped, nothing else is changed (no escapes). Each is encoded as generate encodes its --prompt
// (BOS when the model asks for it), and generated with its own sampler from the same flags, so its
// text does not depend on the other prompts, --parallel, --ctx-size or the preemptions.
//
// Output: for each prompt, in input order, as soon as it and those before it are done, the line
//   --- prompt I (line L) ---
// (I counts the prompts from 0, L the file's lines from 1) and then exactly the bytes that
// `generate --prompt "<the line>"` with the same flags writes to stdout: the prompt, its continuation,
// a newline. Statistics go to stderr: one line per prompt, then the totals.
//
// The sampling and stopping flags are generate's (flags.hpp: same names, meanings and defaults),
// except that --n-samples must stay 1 and --logprobs 0.
#include "../generate/demo_model.hpp"
#include "../generate/command_line.hpp"
#include "../generate/flags.hpp"

#include <nexttok/nexttok.hpp>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

struct options {
    std::string model_path;             // GGUF file, llama2.c checkpoint or HF directory; empty: the built-in demo
    std::string tokenizer_path;         // tokenizer file or directory (required with a llama2.c checkpoint)
    std::string prompt_file;            // one prompt per line; "-": stdin
    std::int64_t context = 0;           // the pool's positions in total; 0: --parallel x the model's context length
    std::string scalar = "float";       // KV pool and activations: float, half or bf16
    std::string cache_type = "scalar";  // the pool in --scalar's type, or q8_0 (8-bit blocks)
    int threads = 0;                    // 0: one per hardware thread
    nexttok::scheduler_options schedule{.max_running = 4};  // --batch-tokens, --parallel, --prefill-chunk
    nexttok::paged_cache_options pool;                      // --block-size, --no-prefix-cache; n_blocks from --ctx-size
    nexttok::generation_options gen;
    nexttok::load_options load;  // --check-tensors
};

struct prompt_line {
    std::string text;
    std::int64_t line = 0;  // in the file, from 1
};

struct loaded {
    std::shared_ptr<const nexttok::model> model;
    std::optional<nexttok::tokenizer> tok;
    double load_seconds = 0.0;  // mapping and checking the model, reading the tokenizer
};

std::vector<prompt_line> read_prompts(const std::string& path) {
    const std::string name = path == "-" ? std::string("standard input") : path;
    std::ifstream file;
    if (path != "-") {
        file.open(path, std::ios::binary);
        if (!file) throw nexttok::io_error("--file " + path + ": cannot open it");
    }
    std::istream& in = path == "-" ? std::cin : file;
    std::vector<prompt_line> prompts;
    std::string text;
    for (std::int64_t line = 1; std::getline(in, text); ++line) {
        if (!text.empty() && text.back() == '\r') text.pop_back();
        if (!text.empty()) prompts.push_back({text, line});
    }
    if (in.bad()) throw nexttok::io_error("--file " + name + ": read error");
    if (prompts.empty())
        throw nexttok::invalid_argument_error("--file " + name +
                                              ": no prompt (expected one per line; empty lines are skipped)");
    return prompts;
}

loaded load(const options& o) {
    loaded l;
    if (o.model_path.empty()) {
        l.tok.emplace(demo::make_tokenizer());
        l.model = demo::make_model(static_cast<std::int64_t>(l.tok->vocab_size()));
        std::cerr << "No --model given: generating from a built-in model with random weights (seed " << demo::seed
                  << "), so the text is meaningless.\n";
        return l;
    }
    const auto t0 = std::chrono::steady_clock::now();
    l.model = nexttok::load_model(o.model_path, o.load);
    l.tok.emplace(nexttok::load_model_tokenizer(*l.model, o.tokenizer_path));
    l.load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return l;
}

// The totals of a run: throughput, the pool's use, prefix-cache hits, preemptions.
template <class Pool>
void print_totals(const options& o, const loaded& l, const Pool& pool, const nexttok::scheduler_stats& s,
                  std::int64_t capacity, std::size_t n_prompts, double wall_seconds, int n_threads,
                  const char* cache_name) {
    const std::string file = l.model->file_name();
    auto per_second = [](std::int64_t n, double seconds) {
        return seconds > 0.0 ? static_cast<double>(n) / seconds : 0.0;
    };
    std::fprintf(stderr,
                 "\n[%s] %zu prompts, %lld at once | prompt: %lld tokens, %.1f tokens/s | generated: %lld tokens, %.1f "
                 "tokens/s | wall: %.1f ms, %lld steps\n",
                 file.c_str(), n_prompts, static_cast<long long>(s.peak_running),
                 static_cast<long long>(s.prompt_tokens), per_second(s.prompt_tokens, s.prompt_seconds),
                 static_cast<long long>(s.generated_tokens), per_second(s.generated_tokens, s.decode_seconds),
                 1e3 * wall_seconds, static_cast<long long>(s.steps));
    const auto block_bytes = static_cast<unsigned long long>(pool.block_bytes());
    std::fprintf(stderr,
                 "[%s] KV pool (%s): %lld blocks of %lld positions (%llu bytes each), %lld positions per request | "
                 "peak: %lld blocks in use (%llu of %llu bytes)\n",
                 file.c_str(), cache_name, static_cast<long long>(pool.n_blocks()),
                 static_cast<long long>(pool.block_size()), block_bytes, static_cast<long long>(capacity),
                 static_cast<long long>(s.peak_used_blocks),
                 static_cast<unsigned long long>(s.peak_used_blocks) * block_bytes,
                 static_cast<unsigned long long>(pool.n_blocks()) * block_bytes);
    // The scheduler counts prompt positions attached; the pool counts blocks attached, also those of
    // generated tokens a preempted request finds again.
    std::fprintf(stderr,
                 "[%s] prefix cache: %lld prompt tokens attached, %lld blocks hit in the pool | preemptions: %lld, "
                 "%lld tokens recomputed\n",
                 file.c_str(), static_cast<long long>(s.prefix_hit_tokens),
                 static_cast<long long>(pool.prefix_hit_blocks()), static_cast<long long>(s.preemptions),
                 static_cast<long long>(s.recomputed_tokens));
    std::fprintf(stderr,
                 "[%s] load: %.1f ms | weights: %llu bytes | threads: %d | step budget: %lld tokens | samplers: %s\n",
                 file.c_str(), 1e3 * l.load_seconds, static_cast<unsigned long long>(l.model->weight_bytes()),
                 n_threads, static_cast<long long>(o.schedule.max_step_tokens),
                 nexttok::format_sampler_order(o.gen.sampling.sampler_order).c_str());
}

template <class Scalar, class Pool>
void run(const options& o, const loaded& l, const std::vector<prompt_line>& prompts, const char* cache_name) {
    const nexttok::model_config& c = l.model->config();
    nexttok::decoder<Scalar> dec(
        l.model, o.threads > 0 ? o.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
    const std::int64_t positions = o.context > 0 ? o.context : o.schedule.max_running * c.max_seq_len;
    nexttok::paged_cache_options pool_options = o.pool;
    pool_options.n_blocks = (positions + o.pool.block_size - 1) / o.pool.block_size;
    pool_options.max_seq_len =
        std::min(c.max_seq_len, positions);  // as generate --ctx-size when smaller than the model's
    Pool pool(c, pool_options);
    nexttok::scheduler<Scalar, Pool> batch(dec, pool, &*l.tok, o.schedule);

    const auto t0 = std::chrono::steady_clock::now();
    std::vector<nexttok::request_id> ids;
    ids.reserve(prompts.size());
    for (const prompt_line& p : prompts) {
        const auto tokens = l.tok->encode(p.text, l.tok->default_add_bos());
        try {
            ids.push_back(batch.submit(tokens, o.gen));
        } catch (const nexttok::invalid_argument_error& e) {
            throw nexttok::invalid_argument_error("--file, line " + std::to_string(p.line) + ": " + e.what());
        }
    }
    // Results in input order: prompt i is printed once it and every prompt before it are done.
    std::size_t n_printed = 0;
    auto print_ready = [&] {
        for (; n_printed < ids.size(); ++n_printed) {
            const std::optional<nexttok::generation_result> r = batch.take_result(ids[n_printed]);
            if (!r) break;
            const prompt_line& p = prompts[n_printed];
            std::cout << "--- prompt " << n_printed << " (line " << p.line << ") ---\n"
                      << p.text << r->text << std::endl;
            std::fprintf(stderr, "[%s] prompt %zu (line %lld): generated %zu tokens | finish: %s\n",
                         l.model->file_name().c_str(), n_printed, static_cast<long long>(p.line), r->tokens.size(),
                         std::string(nexttok::to_string(r->reason)).c_str());
        }
    };
    do {
        print_ready();
    } while (batch.step());
    print_ready();
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    print_totals(o, l, pool, batch.stats(), batch.capacity(), prompts.size(), wall, dec.n_threads(), cache_name);
}

template <class Scalar>
void run_scalar(const options& o, const loaded& l, const std::vector<prompt_line>& prompts, const char* name) {
    if (o.cache_type == "q8_0")
        run<Scalar, nexttok::q8_0_paged_kv_cache<Scalar>>(o, l, prompts, "q8_0");
    else
        run<Scalar, nexttok::paged_kv_cache<Scalar>>(o, l, prompts, name);
}

// The flags batch adds to generate's; a bad value is reported by CLI11 naming the flag.
void add_batch_flags(CLI::App& app, options& o) {
    flags::add_model_flags(app, o.model_path, o.tokenizer_path);
    app.add_option("-f,--file", o.prompt_file,
                   "prompts, one per line ('-': standard input); empty lines are skipped, a trailing \\r is dropped, "
                   "no escapes")
        ->required();
    app.add_option("--parallel", o.schedule.max_running, "requests decoded together (scheduler_options::max_running)")
        ->capture_default_str()
        ->check(CLI::Range(std::int64_t{1}, std::int64_t{4096}));
    app.add_option("-c,--ctx-size", o.context,
                   "KV pool positions in total, in blocks of --block-size; one request holds at most the model's "
                   "context length, or this if smaller (0: --parallel x the model's context length)")
        ->capture_default_str()
        ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 30));
    app.add_option("--block-size", o.pool.block_size, "positions per KV block")
        ->capture_default_str()
        ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 24));
    app.add_flag_callback(
        "--no-prefix-cache", [&o] { o.pool.prefix_caching = false; },
        "compute every prompt's positions, even those another prompt shares");
    app.add_option("-b,--batch-tokens", o.schedule.max_step_tokens,
                   "tokens of one forward call: decode tokens + prompt chunks (scheduler_options::max_step_tokens)")
        ->capture_default_str()
        ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 20));
    app.add_option("--prefill-chunk", o.schedule.prefill_chunk,
                   "prompt tokens of one request per forward call (0: as --batch-tokens allows)")
        ->capture_default_str()
        ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 20));
    app.add_option("--scalar", o.scalar, "type of the KV pool and activations")
        ->capture_default_str()
        ->check(CLI::IsMember({"float", "half", "bf16"}));
    app.add_option("--cache-type", o.cache_type,
                   "KV pool storage: scalar (--scalar's type) or q8_0 (8-bit blocks, 3.8x smaller than float)")
        ->capture_default_str()
        ->check(CLI::IsMember({"scalar", "q8_0"}));
    app.add_option("-t,--threads", o.threads, "threads (0: one per hardware thread)")
        ->capture_default_str()
        ->check(CLI::Range(0, 1024));
    app.add_flag_callback(
        "--check-tensors", [&o] { o.load.check_tensors = nexttok::tensor_check::always; },
        "scan every weight for NaN and inf when loading (by default only models up to 2 GiB)");
}

}  // namespace

int main(int argc, char** argv) {
    options o;
    CLI::App app{"nexttok batch: continue many prompts at once (continuous batching over a paged KV pool)"};
    app.footer(
        "Output: for each prompt, in input order, a line '--- prompt I (line L) ---' (I from 0, L the file's line from "
        "1), then\n"
        "exactly what generate prints on stdout for that prompt alone with the same flags (the prompt, its "
        "continuation, a\n"
        "newline). Statistics go to stderr. --n-samples must be 1 and --logprobs 0.");
    add_batch_flags(app, o);
    flags::generation_flags gf;
    flags::add_generation_flags(app, o.gen, gf);
    flags::add_version_flag(app, "batch");
    if (const int status = flags::parse_command_line(app, argc, argv); status >= 0) return status;

    try {
        flags::finish_generation_flags(o.gen, gf);
        o.gen.validate();
        if (o.gen.n_samples != 1)
            throw nexttok::invalid_argument_error("--n-samples " + std::to_string(o.gen.n_samples) +
                                                  ": batch generates one sample per prompt (use generate)");
        if (o.gen.n_logprobs != 0)
            throw nexttok::invalid_argument_error("--logprobs " + std::to_string(o.gen.n_logprobs) +
                                                  ": batch prints no log-probabilities (use generate)");
        const std::vector<prompt_line> prompts = read_prompts(o.prompt_file);
        const loaded l = load(o);
        if (o.scalar == "half")
            run_scalar<Eigen::half>(o, l, prompts, "half");
        else if (o.scalar == "bf16")
            run_scalar<Eigen::bfloat16>(o, l, prompts, "bf16");
        else
            run_scalar<float>(o, l, prompts, "float");
    } catch (const std::exception& e) {
        std::cerr << "error: " << e.what() << '\n';
        return 1;
    }
    return 0;
}
