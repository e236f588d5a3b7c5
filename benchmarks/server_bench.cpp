// The server under load: time to first token, time per output token and aggregate tokens/s at 1, 4
// and 16 concurrent clients, against the `server` program serving the 1.1B shape (TinyLlama's, random
// q8_0 weights: support/decode_cases.hpp) with the llama-2-tiny-random vocabulary (32000 tokens).
//
// The program writes the model as GGUF into a temporary directory, starts the server there on a free
// loopback port (--threads 2 --parallel 16 --ctx-size 256), sends one untimed request (the mapped
// weights are read from disk once), then each case is one round: C client threads (httplib::Client,
// one connection each) send streamed completions until 4 x C requests (at least 8) are done. A
// request is 32 prompt tokens (ids, different in every request: no prefix-cache hits), max_tokens 32,
// ignore_eos, greedy. Per request: ttft = the first chunk with text - the request's start; tpot =
// (the last such chunk - the first) / (completion tokens - 1). Reported: p50 and p99 (nearest rank)
// of both in ms, tokens_per_s = all completion tokens / the round's wall time, and vs_c1 = tokens_per_s
// / the C = 1 round's (which runs first; absent when a filter leaves it out). The server is stopped
// at exit, also when the program fails (it is killed with this process).
//
// Usage: nexttok_server_bench [benchmark flags] [--server=PATH] [--tokenizer=GGUF] [--dir=DIR]
//   --server     the server program (default: the build's, when it was built with the benchmarks)
//   --tokenizer  a GGUF with a 32000-token vocabulary (default: ../shared/data's llama-2-tiny-random)
//   --dir        where the model file is written (default: a new directory under $TMPDIR or /tmp)
#include <nexttok/model/random_model.hpp>

#include "support/decode_cases.hpp"
#include "support/model_gguf.hpp"
#include "support/server_process.hpp"

#include <benchmark/benchmark.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;
using json = nlohmann::json;

constexpr int n_prompt = 32;
constexpr int n_new = 32;
constexpr int server_threads = 2;

struct settings {
#ifdef NEXTTOK_SERVER_PATH
    std::string server = NEXTTOK_SERVER_PATH;
#else
    std::string server;
#endif
#ifdef NEXTTOK_BENCH_TOKENIZER
    std::string tokenizer = NEXTTOK_BENCH_TOKENIZER;
#else
    std::string tokenizer;
#endif
    std::string dir;
};

settings& config() {
    static settings s;
    return s;
}

// The server and the temporary directory it runs in; made by the first case that runs.
struct bench_server {
    std::filesystem::path dir;
    bool remove_dir = false;
    std::unique_ptr<nexttok::bench::server_process> process;

    ~bench_server() {
        process.reset();
        std::error_code ec;
        if (remove_dir) std::filesystem::remove_all(dir, ec);
    }
};

std::unique_ptr<bench_server>& the_server() {
    static std::unique_ptr<bench_server> s;
    return s;
}

// 32 token ids, different for every request (no two requests share a prefix-cache block); the ids
// stay clear of the special tokens 0..2.
json prompt_ids(int request) {
    json ids = json::array();
    for (int j = 0; j < n_prompt; ++j)
        ids.push_back(3 +
                      (static_cast<std::int64_t>(request) * 7919 + static_cast<std::int64_t>(j) * 104729 + 17) % 31997);
    return ids;
}

struct request_timing {
    double ttft_s = 0;
    double tpot_s = 0;
    int tokens = 0;
    std::string error;  // empty: the request succeeded
};

// One streamed completion on `client`; SSE events are parsed as they arrive.
request_timing run_request(httplib::Client& client, int request, int max_tokens) {
    const json body = {{"prompt", prompt_ids(request)},
                       {"max_tokens", max_tokens},
                       {"ignore_eos", true},
                       {"temperature", 0},
                       {"stream", true},
                       {"stream_options", {{"include_usage", true}}}};
    httplib::Request req;
    req.method = "POST";
    req.path = "/v1/completions";
    req.set_header("Content-Type", "application/json");
    req.body = body.dump();
    std::string pending, raw;
    std::optional<clock_type::time_point> first, last;
    int text_chunks = 0, usage_tokens = -1;
    bool done = false;
    std::string parse_error;
    req.content_receiver = [&](const char* data, std::size_t n, std::uint64_t, std::uint64_t) {
        const auto now = clock_type::now();
        if (raw.size() < 4096) raw.append(data, std::min<std::size_t>(n, 4096));
        pending.append(data, n);
        for (std::size_t end; (end = pending.find("\n\n")) != std::string::npos; pending.erase(0, end + 2)) {
            const std::string_view event(pending.data(), end);
            if (!event.starts_with("data: ")) continue;
            const std::string_view payload = event.substr(6);
            if (payload == "[DONE]") {
                done = true;
                continue;
            }
            const json chunk = json::parse(payload, nullptr, false);
            if (chunk.is_discarded() || !chunk.is_object()) {
                parse_error = "not JSON: " + std::string(payload.substr(0, 200));
                return false;
            }
            if (chunk.contains("usage") && chunk["usage"].is_object())
                usage_tokens = chunk["usage"].value("completion_tokens", -1);
            if (!chunk.contains("choices") || !chunk["choices"].is_array()) continue;
            for (const json& choice : chunk["choices"]) {
                const auto text = choice.find("text");
                if (text == choice.end() || !text->is_string() || text->get_ref<const std::string&>().empty()) continue;
                if (!first) first = now;
                last = now;
                ++text_chunks;
            }
        }
        return true;
    };
    const auto t0 = clock_type::now();
    httplib::Response res;
    httplib::Error err = httplib::Error::Success;
    request_timing r;
    if (!client.send(req, res, err)) {
        r.error = parse_error.empty() ? "request failed: " + httplib::to_string(err) : parse_error;
        return r;
    }
    if (res.status != 200) {
        r.error = "status " + std::to_string(res.status) + ": " + raw + res.body;
        return r;
    }
    if (!done || !first) {
        r.error = "the stream has no text or no [DONE]: " + raw.substr(0, 300);
        return r;
    }
    r.tokens = usage_tokens > 0 ? usage_tokens : text_chunks;
    r.ttft_s = std::chrono::duration<double>(*first - t0).count();
    r.tpot_s = r.tokens > 1 ? std::chrono::duration<double>(*last - *first).count() / (r.tokens - 1) : 0.0;
    return r;
}

// Builds the model file and starts the server; throws with a message on failure.
void start_server() {
    settings& s = config();
    if (s.server.empty()) throw std::runtime_error("no server program: give --server=PATH");
    if (!std::filesystem::exists(s.server))
        throw std::runtime_error("--server=" + s.server + ": no such file (build the server target)");
    if (!std::filesystem::exists(s.tokenizer))
        throw std::runtime_error("--tokenizer=" + s.tokenizer +
                                 ": no such file (a GGUF with a 32000-token vocabulary)");
    auto b = std::make_unique<bench_server>();
    if (s.dir.empty()) {
        const char* tmp = std::getenv("TMPDIR");
        std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/nexttok-server-bench.XXXXXX";
        if (!::mkdtemp(pattern.data())) throw std::runtime_error(pattern + ": mkdtemp failed");
        b->dir = pattern;
        b->remove_dir = true;
    } else {
        b->dir = s.dir;
        std::filesystem::create_directories(b->dir);
    }
    the_server() = std::move(b);
    bench_server& srv = *the_server();
    const auto model_path = srv.dir / "1.1B-q8_0.gguf";
    {
        const auto t0 = clock_type::now();
        const auto m =
            nexttok::make_random_model(nexttok::bench::shapes[1].config, 1234, nexttok::tensor_type::q8_0, false);
        nexttok::bench::write_model_gguf(*m, model_path);
        std::fprintf(stderr, "server_bench: wrote %s (%.1f s)\n", model_path.c_str(),
                     std::chrono::duration<double>(clock_type::now() - t0).count());
    }  // the in-memory model is freed here
    srv.process = std::make_unique<nexttok::bench::server_process>(
        std::vector<std::string>{s.server, "--model", model_path.string(), "--tokenizer", s.tokenizer, "--threads",
                                 std::to_string(server_threads), "--parallel", "16", "--ctx-size", "256", "--port",
                                 "0"},
        srv.dir / "server.log", std::chrono::seconds(300));
    // The server maps the file: it can go now (its pages stay until the server unmaps them), so that
    // nothing large is left behind whatever happens next.
    std::filesystem::remove(model_path);
    httplib::Client client("127.0.0.1", srv.process->port());
    client.set_read_timeout(std::chrono::seconds(120));
    const request_timing warm = run_request(client, 1 << 20, 4);
    if (!warm.error.empty())
        throw std::runtime_error("the first request failed: " + warm.error + "\n" + srv.process->log_tail());
    std::fprintf(stderr, "server_bench: server on port %d (%s), log %s\n", srv.process->port(), s.server.c_str(),
                 (srv.dir / "server.log").c_str());
}

double percentile(std::vector<double> v, double p) {
    std::sort(v.begin(), v.end());
    const std::size_t rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(v.size())));
    return v[std::min(v.size() - 1, rank == 0 ? 0 : rank - 1)];
}

double& c1_tokens_per_s() {
    static double rate = 0;
    return rate;
}

// One round with `concurrency` clients.
void load(benchmark::State& state, int concurrency) {
    const int n_requests = std::max(8, 4 * concurrency);
    static std::string start_error;  // a server that failed to start is not tried again
    if (!the_server() && start_error.empty()) {
        try {
            start_server();
        } catch (const std::exception& e) {
            the_server().reset();
            start_error = e.what();
        }
    }
    if (!the_server()) {
        state.SkipWithError(start_error.c_str());
        for (auto _ : state) {
        }
        return;
    }
    const int port = the_server()->process->port();
    std::vector<request_timing> timings(static_cast<std::size_t>(n_requests));
    double seconds = 0;
    for (auto _ : state) {
        std::atomic<int> next{0};
        const auto t0 = clock_type::now();
        std::vector<std::thread> clients;
        for (int c = 0; c < concurrency; ++c)
            clients.emplace_back([&] {
                httplib::Client client("127.0.0.1", port);
                client.set_read_timeout(std::chrono::seconds(120));
                for (int r; (r = next.fetch_add(1)) < n_requests;)
                    timings[static_cast<std::size_t>(r)] = run_request(client, r, n_new);
            });
        for (std::thread& t : clients) t.join();
        seconds = std::chrono::duration<double>(clock_type::now() - t0).count();
    }
    std::vector<double> ttft, tpot;
    double tokens = 0;
    for (const request_timing& t : timings) {
        if (!t.error.empty()) {
            state.SkipWithError(("a request failed: " + t.error).c_str());
            return;
        }
        ttft.push_back(t.ttft_s * 1e3);
        tpot.push_back(t.tpot_s * 1e3);
        tokens += t.tokens;
    }
    const double rate = tokens / seconds;
    if (concurrency == 1) c1_tokens_per_s() = rate;
    state.counters["requests"] = n_requests;
    state.counters["ttft_p50_ms"] = percentile(ttft, 0.5);
    state.counters["ttft_p99_ms"] = percentile(ttft, 0.99);
    state.counters["tpot_p50_ms"] = percentile(tpot, 0.5);
    state.counters["tpot_p99_ms"] = percentile(tpot, 0.99);
    state.counters["tokens_per_s"] = rate;
    if (c1_tokens_per_s() > 0) state.counters["vs_c1"] = rate / c1_tokens_per_s();
}

// Takes --server=, --tokenizer= and --dir= out of argv (after benchmark::Initialize took its own).
bool parse_flags(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        auto value = [&](std::string_view name) -> std::optional<std::string> {
            if (a.starts_with(name) && a.size() > name.size() && a[name.size()] == '=')
                return std::string(a.substr(name.size() + 1));
            return std::nullopt;
        };
        if (auto v = value("--server"))
            config().server = *v;
        else if (auto v = value("--tokenizer"))
            config().tokenizer = *v;
        else if (auto v = value("--dir"))
            config().dir = *v;
        else {
            std::fprintf(
                stderr,
                "nexttok_server_bench: unknown argument '%s' (expected --server=PATH, --tokenizer=GGUF, --dir=DIR "
                "or a benchmark flag)\n",
                argv[i]);
            return false;
        }
    }
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    for (int c : {1, 4, 16})
        benchmark::RegisterBenchmark(
            ("server_load/1.1B/q8_0/threads:" + std::to_string(server_threads) + "/clients:" + std::to_string(c))
                .c_str(),
            [c](benchmark::State& state) { load(state, c); })
            ->Iterations(1)
            ->UseRealTime()
            ->Unit(benchmark::kSecond);
    benchmark::Initialize(&argc, argv);
    if (!parse_flags(argc, argv)) return 2;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    the_server().reset();  // stops the server, removes the directory
    return 0;
}
