// nexttok's main example: load a model (GGUF, or a llama2.c checkpoint with its tokenizer.bin),
// generate a continuation of a prompt and stream it to stdout. Statistics go to stderr.
//
//   generate --model stories260K.gguf --prompt "Once upon a time" -n 60 --temperature 0
//   generate                          (no model file: a built-in model with random weights)
#include "demo_model.hpp"

#include <nexttok/nexttok.hpp>

#include <CLI/CLI.hpp>

#include <cstdio>
#include <iostream>
#include <optional>
#include <string>
#include <thread>

namespace {

struct options {
    std::string model_path;        // GGUF file or llama2.c checkpoint; empty: the built-in demo model
    std::string tokenizer_path;    // llama2.c tokenizer.bin (required with a .bin checkpoint) or a GGUF
    std::string prompt;            // text to continue; BOS is prepended when the model asks for it
    std::int64_t n_predict = 128;  // tokens to generate at most (llama.cpp's -n)
    std::int64_t context = 0;      // KV-cache capacity in positions; 0: the model's context length
    std::string scalar = "float";  // KV cache and activations: float, half or bf16
    bool no_cache = false;         // recompute the whole prefix at every step (the uncached baseline)
    int threads = 0;               // 0: one per hardware thread
    nexttok::sampling_options sampling;
};

struct loaded {
    std::shared_ptr<const nexttok::model> model;
    std::optional<nexttok::tokenizer> tok;
};

loaded load(const options& o) {
    loaded l;
    if (o.model_path.empty()) {
        l.tok.emplace(demo::make_tokenizer());
        l.model = demo::make_model(static_cast<std::int64_t>(l.tok->vocab_size()));
        std::cerr << "No --model given: generating from a built-in model with random weights (seed " << demo::seed
                  << "), so the text is meaningless.\nTry: --model ../shared/data/models/stories260K/stories260K.gguf "
                     "--prompt \"Once upon a time\"\n";
        return l;
    }
    l.model = nexttok::load_model(o.model_path);
    if (!o.tokenizer_path.empty()) {
        if (nexttok::is_gguf_file(o.tokenizer_path))
            l.tok.emplace(nexttok::load_tokenizer(nexttok::gguf_file(o.tokenizer_path)));
        else
            l.tok.emplace(nexttok::load_llama2c_tokenizer(o.tokenizer_path));
    } else if (const nexttok::gguf_file* g = l.model->gguf()) {
        l.tok.emplace(nexttok::load_tokenizer(*g));
    } else {
        throw nexttok::invalid_argument_error(o.model_path + ": a llama2.c checkpoint has no vocabulary: pass --tokenizer tokenizer.bin");
    }
    if (static_cast<std::int64_t>(l.tok->vocab_size()) != l.model->config().vocab_size)
        throw nexttok::invalid_argument_error("the tokenizer has " + std::to_string(l.tok->vocab_size()) + " tokens but " +
                                              l.model->file_name() + " has a vocabulary of " + std::to_string(l.model->config().vocab_size));
    return l;
}

template <class Scalar, class Cache>
void run(const options& o, const loaded& l, const char* scalar_name) {
    const nexttok::model_config& c = l.model->config();
    nexttok::decoder<Scalar> dec(l.model, o.threads > 0 ? o.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
    Cache cache(c, o.context);
    const auto prompt = l.tok->encode(o.prompt, l.tok->default_add_bos());
    if (prompt.empty()) throw nexttok::invalid_argument_error("the prompt is empty and the model adds no BOS: give --prompt");
    auto sampler = nexttok::make_sampler(o.sampling);
    nexttok::any_of stop(nexttok::eos_criterion{l.tok->eos()}, nexttok::max_new_tokens(o.n_predict));

    std::cout << o.prompt << std::flush;
    const auto result = nexttok::generate(dec, cache, *l.tok, prompt, sampler, stop, [](const nexttok::token_event& e) {
        std::cout << e.text << std::flush;
        return true;
    });
    std::cout << std::endl;

    const auto& t = result.timings;
    std::fprintf(stderr,
                 "\n[%s] prompt: %lld tokens, %.1f tokens/s | generated: %zu tokens, %.1f tokens/s | finish: %s\n"
                 "[%s] KV cache (%s): %zu bytes for %lld positions | weights: %llu bytes | threads: %d\n",
                 l.model->file_name().c_str(), static_cast<long long>(t.n_prompt_tokens), t.prefill_tokens_per_second(),
                 result.tokens.size(), t.decode_tokens_per_second(), std::string(nexttok::to_string(result.reason)).c_str(),
                 l.model->file_name().c_str(), o.no_cache ? (std::string(scalar_name) + ", no cache: scratch").c_str() : scalar_name,
                 cache.bytes(), static_cast<long long>(cache.capacity()),
                 static_cast<unsigned long long>(l.model->weight_bytes()), dec.n_threads());
}

template <class Scalar>
void run_scalar(const options& o, const loaded& l, const char* name) {
    if (o.no_cache) run<Scalar, nexttok::no_cache<Scalar>>(o, l, name);
    else run<Scalar, nexttok::kv_cache<Scalar>>(o, l, name);
}

}  // namespace

int main(int argc, char** argv) {
    options o;
    CLI::App app{"nexttok generate: continue a prompt with a decoder-only transformer"};
    app.add_option("-m,--model", o.model_path, "GGUF model or llama2.c checkpoint (default: built-in random demo model)")->check(CLI::ExistingFile);
    app.add_option("--tokenizer", o.tokenizer_path, "llama2.c tokenizer.bin (needed with a .bin checkpoint) or a GGUF vocabulary")->check(CLI::ExistingFile);
    app.add_option("-p,--prompt", o.prompt, "prompt text");
    app.add_option("-n,--n-predict", o.n_predict, "maximum number of tokens to generate")->capture_default_str()->check(CLI::NonNegativeNumber);
    app.add_option("-c,--ctx-size", o.context, "KV-cache capacity in positions (0: the model's context length)")->capture_default_str()->check(CLI::NonNegativeNumber);
    app.add_option("--temperature,--temp", o.sampling.temperature, "sampling temperature (0: greedy)")->capture_default_str();
    app.add_option("--top-k", o.sampling.top_k, "keep the k most likely tokens (0: off)")->capture_default_str();
    app.add_option("--top-p", o.sampling.top_p, "nucleus sampling threshold (1: off)")->capture_default_str();
    app.add_option("--min-p", o.sampling.min_p, "drop tokens below min-p times the top probability (0: off)")->capture_default_str();
    app.add_option("-s,--seed", o.sampling.seed, "seed of the sampler")->capture_default_str();
    app.add_option("--scalar", o.scalar, "type of the KV cache and activations")->capture_default_str()->check(CLI::IsMember({"float", "half", "bf16"}));
    app.add_flag("--no-cache", o.no_cache, "recompute the whole prefix at every step (uncached baseline)");
    app.add_option("-t,--threads", o.threads, "threads (0: one per hardware thread)")->capture_default_str()->check(CLI::Range(0, 1024));
    CLI11_PARSE(app, argc, argv);

    try {
        o.sampling.validate();
        const loaded l = load(o);
        if (o.scalar == "half") run_scalar<Eigen::half>(o, l, "half");
        else if (o.scalar == "bf16") run_scalar<Eigen::bfloat16>(o, l, "bf16");
        else run_scalar<float>(o, l, "float");
    } catch (const nexttok::error& e) {
        std::cerr << "error: " << e.what() << '\n';
        return 1;
    } catch (const std::exception& e) {
        std::cerr << "error: " << e.what() << '\n';
        return 1;
    }
    return 0;
}
