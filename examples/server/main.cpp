// nexttok's OpenAI-compatible server: /v1/completions and /v1/chat/completions (streamed as
// server-sent events or not), /v1/models, /health and /metrics, on cpp-httplib, with every request
// run by one continuous-batching scheduler over a paged KV pool with prefix caching.
//
//   server --model stories260K.gguf --port 8080 --parallel 4
//   curl -s localhost:8080/v1/completions -d '{"prompt": "Once upon a time", "max_tokens": 40, "temperature": 0}'
//   server --model model.gguf --chat-template chatml --api-key secret --port 0
//
// When it accepts connections it prints one line on stdout, "server listening on http://HOST:PORT"
// (the bound port, also with --port 0); logs go to stderr. The generation flags (those of generate,
// flags.hpp) are the defaults of every request; a request's fields override them.
// SIGINT / SIGTERM: new requests get 503, running ones are cancelled (finish_reason "length"; streams
// get their last chunk and [DONE]), then the listener closes and the program exits with status 0.
#include "../generate/command_line.hpp"
#include "../generate/flags.hpp"
#include "engine.hpp"
#include "http_routes.hpp"
#include "model_context.hpp"
#include "server_state.hpp"

#include <nexttok/nexttok.hpp>

#include <CLI/CLI.hpp>
#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <unistd.h>

namespace {

struct options {
    std::string model_path;             // GGUF file, llama2.c checkpoint or HF directory; empty: the built-in demo
    std::string tokenizer_path;         // tokenizer file or directory (required with a llama2.c checkpoint)
    std::int64_t context = 0;           // positions one request may hold; 0: the model's context length
    int threads = 0;                    // 0: one per hardware thread
    std::string scalar = "float";       // KV pool and activations: float, half or bf16
    std::string cache_type = "scalar";  // the pool in --scalar's type, or q8_0
    std::string chat_template;          // a Jinja file or "chatml"; empty: the model's
    std::string host = "127.0.0.1";
    int port = 8080;            // 0: a free port
    std::int64_t parallel = 4;  // running requests at once
    std::int64_t queue = 64;    // waiting requests beyond the running ones before 503
    std::string api_key;
    std::int64_t kv_blocks = 0;  // 0: enough for --parallel requests of --ctx-size positions
    std::int64_t block_size = 16;
    bool no_prefix_cache = false;
    bool check_tensors = false;  // scan every weight for NaN and inf whatever the model's size
    std::int64_t batch_tokens = 256;
    std::int64_t max_body = 8 << 20;
    std::string alias;
    nexttok::generation_options gen;
};

// The self-pipe: the signal handler only writes a byte; a watcher thread does the stopping.
int signal_pipe[2] = {-1, -1};

extern "C" void on_signal(int) {
    const char byte = 1;
    [[maybe_unused]] const auto n = ::write(signal_pipe[1], &byte, 1);
}

// Waits for a signal (or the main thread's wake-up), then stops: new requests get 503, running
// ones are cancelled, responses being written get up to 5 s to finish, the listener closes.
void stop_on_signal(httplib::Server& svr, server::server_state& s) {
    char byte = 0;
    while (::read(signal_pipe[0], &byte, 1) < 0 && errno == EINTR) {
    }
    if (byte == 1)
        std::cerr << "server: stopping (signal): cancelling " << s.eng->gauges().running << " running requests\n";
    s.eng->cancel_all();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (s.open_responses > 0 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    svr.stop();
}

template <class Scalar, class Pool>
int serve(const options& o, const server::model_context& m) {
    const nexttok::model_config& c = m.model->config();
    server::engine_options eo;
    eo.threads = o.threads > 0 ? o.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    eo.schedule.max_running = o.parallel;
    eo.schedule.max_step_tokens = o.batch_tokens;
    const std::int64_t ctx = o.context > 0 ? o.context : c.max_seq_len;
    eo.pool.block_size = o.block_size;
    eo.pool.max_seq_len = ctx;
    eo.pool.n_blocks = o.kv_blocks > 0 ? o.kv_blocks : o.parallel * ((ctx + o.block_size - 1) / o.block_size);
    eo.pool.prefix_caching = !o.no_prefix_cache;
    eo.limit = o.parallel + o.queue;
    server::metrics stats;
    server::engine_impl<Scalar, Pool> eng(m.model, *m.tok, eo, stats);

    server::server_state s;
    s.model = &m;
    s.eng = &eng;
    s.stats = &stats;
    s.defaults = o.gen;
    s.api_key = o.api_key;
    s.max_body = o.max_body;
    s.started = static_cast<std::int64_t>(std::time(nullptr));

    httplib::Server svr;
    const auto n_http_threads = static_cast<std::size_t>(o.parallel + o.queue + 4);
    svr.new_task_queue = [n_http_threads] {
        return new httplib::ThreadPool(n_http_threads);
    };
    svr.set_payload_max_length(static_cast<std::size_t>(o.max_body));
    server::install_routes(svr, s);

    int port = o.port;
    if (o.port == 0) {
        port = svr.bind_to_any_port(o.host);
        if (port < 0) throw nexttok::io_error("--host " + o.host + ": cannot bind a port");
    } else if (!svr.bind_to_port(o.host, o.port)) {
        throw nexttok::io_error("--host " + o.host + " --port " + std::to_string(o.port) +
                                ": cannot bind (in use, or not an address of this machine?)");
    }
    std::fprintf(
        stderr,
        "[%s] load: %.1f ms | KV pool: %lld blocks of %lld positions, %lld positions per request, prefix cache %s | "
        "parallel: %lld, queue: %lld | threads: %d | chat template: %s\n",
        m.name.c_str(), 1e3 * m.load_seconds, static_cast<long long>(eo.pool.n_blocks),
        static_cast<long long>(eo.pool.block_size), static_cast<long long>(eng.capacity()),
        eo.pool.prefix_caching ? "on" : "off", static_cast<long long>(o.parallel), static_cast<long long>(o.queue),
        eo.threads, m.chat ? m.chat->name().c_str() : "none (chat requests are refused)");
    std::thread watcher([&] { stop_on_signal(svr, s); });
    std::printf("server listening on http://%s:%d\n", o.host.c_str(), port);
    std::fflush(stdout);
    const bool listened = svr.listen_after_bind();
    const char wake = 0;  // the listener ended without a signal: let the watcher finish
    [[maybe_unused]] const auto n = ::write(signal_pipe[1], &wake, 1);
    watcher.join();
    eng.shutdown();
    std::cerr << "server: stopped\n";
    return listened ? 0 : 1;
}

template <class Scalar>
int serve_scalar(const options& o, const server::model_context& m) {
    if (o.cache_type == "q8_0") return serve<Scalar, nexttok::q8_0_paged_kv_cache<Scalar>>(o, m);
    return serve<Scalar, nexttok::paged_kv_cache<Scalar>>(o, m);
}

void add_server_flags(CLI::App& app, options& o) {
    flags::add_model_flags(app, o.model_path, o.tokenizer_path);
    app.add_option("-c,--ctx-size", o.context,
                   "positions one request may hold, prompt + generated (0: the model's context length)")
        ->capture_default_str()
        ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 24));
    app.add_option("-t,--threads", o.threads, "threads of the decoder (0: one per hardware thread)")
        ->capture_default_str()
        ->check(CLI::Range(0, 1024));
    app.add_option("--scalar", o.scalar, "type of the KV pool and activations")
        ->capture_default_str()
        ->check(CLI::IsMember({"float", "half", "bf16"}));
    app.add_option("--cache-type", o.cache_type, "KV pool storage: scalar (--scalar's type) or q8_0")
        ->capture_default_str()
        ->check(CLI::IsMember({"scalar", "q8_0"}));
    app.add_option("--chat-template", o.chat_template,
                   "chat template: a Jinja file, or chatml (default: the model's own)");
    app.add_option("--host", o.host, "address to listen on")->capture_default_str();
    app.add_option("--port", o.port, "port to listen on (0: a free port, printed on stdout)")
        ->capture_default_str()
        ->check(CLI::Range(0, 65535));
    app.add_option("--parallel", o.parallel, "requests generated at once")
        ->capture_default_str()
        ->check(CLI::Range(std::int64_t{1}, std::int64_t{1024}));
    app.add_option("--queue", o.queue, "requests waiting beyond --parallel; more get 503 with Retry-After")
        ->capture_default_str()
        ->check(CLI::Range(std::int64_t{0}, std::int64_t{4096}));
    app.add_option("--api-key", o.api_key, "require 'Authorization: Bearer KEY' on /v1/ endpoints");
    app.add_option("--kv-blocks", o.kv_blocks, "blocks of the KV pool (0: --parallel x --ctx-size positions)")
        ->capture_default_str()
        ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 24));
    app.add_option("--block-size", o.block_size, "positions per KV block")
        ->capture_default_str()
        ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 16));
    app.add_flag("--no-prefix-cache", o.no_prefix_cache,
                 "compute every prompt's positions, even those another request shares");
    app.add_flag("--check-tensors", o.check_tensors,
                 "scan every weight for NaN and inf when loading (by default only models up to 2 GiB)");
    app.add_option("-b,--batch-tokens", o.batch_tokens, "tokens of one forward call: decode tokens + prompt chunks")
        ->capture_default_str()
        ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 20));
    app.add_option("--max-body", o.max_body, "largest request body in bytes (larger: 413)")
        ->capture_default_str()
        ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 34));
    app.add_option("--alias", o.alias, "the model's name in /v1/models and answers (default: the file name)");
}

}  // namespace

int main(int argc, char** argv) {
    options o;
    CLI::App app{
        "nexttok server: an OpenAI-compatible HTTP server (completions, chat completions) with continuous batching"};
    app.footer(
        "Endpoints: POST /v1/completions, POST /v1/chat/completions, GET /v1/models, GET /health, GET /metrics.\n"
        "The generation flags are the defaults of every request; a request's fields override them.");
    add_server_flags(app, o);
    flags::generation_flags gf;
    flags::add_generation_flags(app, o.gen, gf);
    flags::add_version_flag(app, "server");
    if (const int status = flags::parse_command_line(app, argc, argv); status >= 0) return status;

    try {
        flags::finish_generation_flags(o.gen, gf);
        o.gen.validate();
        if (o.gen.n_samples != 1)
            throw nexttok::invalid_argument_error("--n-samples: the server takes 'n' per request; leave the flag at 1");
        if (::pipe(signal_pipe) != 0) throw nexttok::io_error("cannot create the signal pipe");
        std::signal(SIGPIPE, SIG_IGN);  // a client gone is a failed write, not the end of the server
        struct sigaction sa {};
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, nullptr);
        sigaction(SIGTERM, &sa, nullptr);
        const server::model_context m = server::load_model_context(
            o.model_path, o.tokenizer_path, o.chat_template, o.alias,
            {.check_tensors = o.check_tensors ? nexttok::tensor_check::always : nexttok::tensor_check::automatic});
        if (o.scalar == "half") return serve_scalar<Eigen::half>(o, m);
        if (o.scalar == "bf16") return serve_scalar<Eigen::bfloat16>(o, m);
        return serve_scalar<float>(o, m);
    } catch (const std::exception& e) {
        std::cerr << "error: " << e.what() << '\n';
        return 1;
    }
}
