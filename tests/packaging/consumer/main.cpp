// A user's program, built against the installed package: the README's example, verbatim in spirit.
// With a GGUF model path as argument it generates; without, it only checks that everything links.
#include <nexttok/nexttok.hpp>

#include <cstdio>
#include <cstring>
#include <iostream>

int main(int argc, char** argv) {
    if (std::strcmp(nexttok::version_string, "0.1.0") != 0) {
        std::fprintf(stderr, "unexpected nexttok version %s\n", nexttok::version_string);
        return 1;
    }
    std::printf("nexttok %s\n", nexttok::version_string);
    if (argc < 2) return 0;

    auto model = nexttok::load_model(argv[1]);
    auto tok = nexttok::load_tokenizer(*model->gguf());
    nexttok::decoder<Eigen::half> dec(model, /*n_threads=*/2);
    nexttok::kv_cache<Eigen::half> cache(model->config());
    auto sampler = nexttok::make_sampler_chain(nexttok::top_k{40}, nexttok::top_p{0.95f}, nexttok::temperature{0.8f},
                                               nexttok::categorical{42});
    nexttok::any_of stop(nexttok::eos_criterion{tok.eos()}, nexttok::max_new_tokens(20));
    auto result = nexttok::generate(dec, cache, tok, tok.encode("Once upon a time", true), sampler, stop,
                                    [](const nexttok::token_event& e) {
                                        std::cout << e.text << std::flush;
                                        return true;
                                    });
    std::cout << "\n" << result.tokens.size() << " tokens, finish: " << nexttok::to_string(result.reason) << "\n";
    return result.tokens.empty() ? 1 : 0;
}
