// The README's "Using the library" code, as a program the tests build and run (on stories260K):
//   minimal MODEL
#include <nexttok/nexttok.hpp>

#include <iostream>
#include <vector>

int main(int argc, char** argv) {
    if (argc != 2) {
        std::cerr << "usage: minimal MODEL (a GGUF file, a Hugging Face directory or a llama2.c checkpoint)\n";
        return 1;
    }
    try {
        auto model = nexttok::load_model(argv[1]);                  // GGUF, HF directory or llama2.c .bin, mapped
        auto tok = nexttok::load_model_tokenizer(*model);           // from the GGUF / directory, or give a path
        nexttok::decoder<Eigen::half> dec(model, /*n_threads=*/2);  // KV cache and activations in half
        nexttok::kv_cache<Eigen::half> cache(model->config());      // or no_cache, q8_0_kv_cache
        auto sampler = nexttok::make_sampler_chain(nexttok::top_k{40}, nexttok::top_p{0.95f},
                                                   nexttok::temperature{0.8f}, nexttok::categorical{42});
        nexttok::any_of stop(nexttok::eos_criterion{tok.eos()}, nexttok::max_new_tokens(100));
        auto print = [](const nexttok::token_event& e) {  // streams each piece of text as it comes
            std::cout << e.text << std::flush;
            return true;
        };
        auto result = nexttok::generate(dec, cache, tok, tok.encode("Once upon a time", true), sampler, stop, print);
        // result.tokens, result.text, result.reason, result.logprobs, result.timings
        std::cout << "\n[" << result.tokens.size() << " tokens, finish: " << nexttok::to_string(result.reason) << "]\n";

        // Or everything from one options struct (llama.cpp's defaults), the policies built for you:
        nexttok::generation_options opts;
        opts.max_new_tokens = 48;
        opts.sampling.repeat_penalty = 1.3f;
        opts.stop = {"\n\n"};
        opts.n_logprobs = 5;  // result.top_logprobs
        auto r2 = nexttok::generate(dec, cache, tok, tok.encode("Once upon a time", true), opts);
        opts.n_samples = 4;  // 4 samples, one prefill
        auto samples = nexttok::generate_n(dec, cache, tok, tok.encode("Once upon a time", true), opts);
        std::cout << r2.text << "\n[" << samples.size() << " samples]\n";

        // The log-probability of a text after a prompt; the text is tokenized as part of the whole
        // string, as examples/score does (encoded alone, ", there was" would start with a space token):
        auto [prompt_ids, continuation_ids] =
            nexttok::encode_continuation(tok, "Once upon a time", ", there was", true);
        auto s = nexttok::score(dec, cache, prompt_ids, continuation_ids);  // s.logprob, s.perplexity()
        std::cout << "perplexity of ', there was': " << s.perplexity() << "\n";

        // Many requests at once, each with its own options and callback, through one decoder and one
        // pool of KV blocks; every request gets exactly the tokens generate() gives it alone:
        nexttok::paged_kv_cache<float> pool(model->config(), {.n_blocks = 64, .block_size = 16});
        nexttok::decoder<float> bdec(model, 2);
        nexttok::scheduler<float> batch(bdec, pool, &tok, {.max_step_tokens = 256});
        opts.n_samples = 1;
        auto on_token = [](const nexttok::token_event&) {
            return true;
        };
        auto a = batch.submit(tok.encode("Once upon a time", true), opts, on_token);  // from any thread
        auto b = batch.submit(tok.encode("The little dog", true), opts);
        batch.run();  // or batch.step() in a serving loop; batch.cancel(b)
        nexttok::generation_result ra = *batch.take_result(a);
        std::vector<std::vector<nexttok::token_id>> prompts = {tok.encode("Lily", true), tok.encode("The sun", true)};
        auto all = nexttok::generate_batch(bdec, pool, tok, prompts, opts);  // N prompts, results in order
        std::cout << "[batch: " << ra.tokens.size() << " and " << batch.take_result(b)->tokens.size() << " tokens; "
                  << all.size() << " results]\n";
    } catch (const nexttok::error& e) {
        std::cerr << "error: " << e.what() << '\n';
        return 1;
    }
    return 0;
}
