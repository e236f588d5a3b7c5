// Continuous batching: many requests share one decoder and one paged KV cache. Each step() runs one
// forward call over a ragged batch: one decode token for every running request whose prompt is in
// the cache, then prompt chunks of the others, within a token budget; a request that finishes
// leaves at once and a waiting one takes its place in the next step, so the batch stays full while
// requests come and go (the iteration-level scheduling of Orca and vLLM).
//
// A request's tokens do not depend on what else runs: each has its own sampler and stopping
// criteria (sequence_generator, the same per-token logic as generate()), and the decoder computes
// every row of a batch bitwise as it would alone, whatever the chunking of its prompt
// (decoder::forward). So a request gives exactly what generate() gives for it on a kv_cache, with
// any batch, any token budget, any preemption and any number of threads; tests/batching checks it.
//
// Memory: the pool's blocks are the only KV memory. A request is admitted when the blocks for its
// whole sequence so far are free, then takes one more position per step. When the pool cannot
// supply a running request's next block, the newest running request is preempted: its blocks are
// released and it waits at the front of the queue, to be recomputed from its tokens (nothing is
// streamed twice and its sampler keeps its state, so its continuation is unchanged). With prefix
// caching on, full blocks are published as they fill, a new request attaches the longest cached
// run of its leading blocks and computes only the rest (waiting for blocks another request is
// still computing); a preempted request finds its own blocks again unless they were evicted.
//
//   paged_kv_cache<float> pool(model->config(), {.n_blocks = 512, .block_size = 16});
//   decoder<float> dec(model, 2);
//   scheduler<float> batch(dec, pool, &tok);
//   request_id a = batch.submit(tok.encode("Once", true), options, on_token);
//   request_id b = batch.submit(tok.encode("The cat", true), options);
//   batch.run();                                  // or step() from a serving loop
//   generation_result ra = *batch.take_result(a);
//
// Threads: one thread drives step()/run() (the decoder's own threads do the arithmetic); submit(),
// cancel(), finished(), take_result() and stats() may be called from any thread at any time (a
// mutex guards the queue of new requests, the cancellations and the results). Callbacks run on the
// thread that calls step(), except a request that its first check ends at once (e.g.
// max_new_tokens = 0), which finishes inside submit().
#pragma once

#include <nexttok/batching/detail/request_registry.hpp>
#include <nexttok/batching/detail/scheduled_request.hpp>
#include <nexttok/batching/scheduler_options.hpp>
#include <nexttok/cache/paged_kv_cache.hpp>
#include <nexttok/decoder/decoder.hpp>
#include <nexttok/detail/loop_settings.hpp>
#include <nexttok/error.hpp>
#include <nexttok/generation/generation_options.hpp>
#include <nexttok/generation/generation_result.hpp>
#include <nexttok/generation/make_generation.hpp>
#include <nexttok/generation/token_event.hpp>
#include <nexttok/sampling/any_sampler.hpp>
#include <nexttok/sampling/concepts.hpp>
#include <nexttok/stopping/any_of_criteria.hpp>
#include <nexttok/stopping/concepts.hpp>
#include <nexttok/stopping/finish_reason.hpp>
#include <nexttok/tokenizer/tokenizer.hpp>
#include <nexttok/types.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace nexttok {

template <class Scalar, class Pool = paged_kv_cache<Scalar>>
class scheduler {
public:
    using view_type = decltype(std::declval<Pool&>().sequence(seq_id{}));

    // tok: for text (null: tokens and log-probabilities only; submit() with generation_options needs
    // it). The decoder and the pool are shared, not owned: they must outlive the scheduler and serve
    // nothing else while it has requests. Throws invalid_argument_error for bad options.
    scheduler(decoder<Scalar>& dec, Pool& pool, const tokenizer* tok, const scheduler_options& options = {})
            : dec_(&dec), pool_(&pool), tok_(tok), options_(options) {
        options_.validate();
        capacity_ = std::min(pool.max_seq_len(), pool.n_blocks() * pool.block_size());
        // Learned position embeddings (GPT-2) have no row past the model's context.
        if (dec.config().positions == position_kind::learned) capacity_ = std::min(capacity_, dec.config().max_seq_len);
        views_.reserve(static_cast<std::size_t>(options_.max_running));
        batch_.reserve(static_cast<std::size_t>(options_.max_running));
        logits_.resize(static_cast<std::size_t>(options_.max_running * dec.config().vocab_size));
        dec.reserve(options_.max_step_tokens, capacity_);
    }

    scheduler(const scheduler&) = delete;
    scheduler& operator=(const scheduler&) = delete;

    // Releases the blocks of every request still held (results not taken are dropped).
    ~scheduler() {
        for (request* r : running_)
            if (pool_->contains(r->seq)) pool_->release(r->seq);
    }

    // Positions one request may reach (prompt + generated): the pool's max_seq_len, or all its
    // blocks if fewer (and the model's context with learned position embeddings).
    std::int64_t capacity() const noexcept { return capacity_; }

    // Queues a request with the sampler and criteria generate() builds from `options` (seed,
    // n_logprobs and all). The callback streams its tokens as generate()'s does. Throws
    // invalid_argument_error for bad options, n_samples != 1, context_shift, an empty prompt, one longer than
    // capacity() (naming both sizes) or a token outside the vocabulary; nothing is queued then.
    request_id submit(std::span<const token_id> prompt, const generation_options& options,
                      token_callback on_token = {}) {
        if (tok_ == nullptr)
            throw invalid_argument_error(
                "scheduler::submit: generation_options need the scheduler's tokenizer (constructed with null)");
        if (options.n_samples != 1)
            throw invalid_argument_error("scheduler::submit: n_samples = " + std::to_string(options.n_samples) +
                                         ": submit each sample as a request with its own seed");
        if (options.context_shift)
            throw invalid_argument_error(
                "scheduler::submit: context_shift is not supported by the scheduler (a request ends with "
                "cache_full at capacity()); use generate() for one long generation");
        check_fits_(prompt);
        detail::loop_settings settings;
        settings.n_logprobs = options.n_logprobs;
        return registry_.submit(tok_, prompt, make_sampler(options, *tok_), make_stopping(options, *tok_),
                                std::move(on_token), capacity_, settings);
    }

    // Queues a request with the caller's policies (moved in, type-erased). n_logprobs: top
    // alternatives recorded per token.
    template <sampler Sampler, stopping_criterion Stop>
    request_id submit(std::span<const token_id> prompt, Sampler sample, Stop stop, token_callback on_token = {},
                      std::int64_t n_logprobs = 0) {
        check_fits_(prompt);
        any_of_criteria criteria;
        criteria.add(any_criterion(std::move(stop)));
        detail::loop_settings settings;
        settings.n_logprobs = n_logprobs;
        return registry_.submit(tok_, prompt, any_sampler(std::move(sample)), std::move(criteria), std::move(on_token),
                                capacity_, settings);
    }

    // Ends a waiting or running request at the next step (reason cancelled; its blocks are freed and
    // its result holds what it generated). Throws invalid_argument_error for an id never returned
    // by submit() or a request that already finished.
    void cancel(request_id id) { registry_.cancel(id); }

    // Whether request `id` has finished and its result is waiting to be taken.
    bool finished(request_id id) const { return registry_.finished(id); }

    // The result of a finished request, once (afterwards, and before it finishes: nullopt).
    std::optional<generation_result> take_result(request_id id) { return registry_.take_result(id); }

    // No request waiting or running (submissions not yet seen by step() count as waiting).
    bool idle() const { return registry_.idle(); }

    scheduler_stats stats() const { return registry_.stats(); }

    // One forward call over the running requests (admitting waiting ones first as blocks and the
    // budget allow), then one token sampled for each request whose sequence is all in the cache.
    // Returns false when there was nothing to run (no request left). Call from one thread.
    bool step() {
        registry_.take_incoming(waiting_);
        apply_cancels_();
        plan_.clear();
        std::int64_t budget = options_.max_step_tokens;
        // Decode tokens first: a running request with only its newest token to compute.
        for (std::size_t i = 0; i < running_.size() && budget > 0;) {
            request* r = running_[i];
            if (r->pending() != 1) {
                ++i;
                continue;
            }
            if (!make_room_(r, r->total())) continue;  // r left running_: position i holds the next one
            plan_.push_back({r, 1});
            --budget;
            ++i;
        }
        // Prompt (or recompute) chunks of running requests, oldest first; their blocks are reserved.
        for (request* r : running_) {
            if (budget == 0) break;
            if (r->pending() <= 1 || planned_(r)) continue;
            const std::int64_t n = chunk_(r, budget);
            plan_.push_back({r, n});
            budget -= n;
        }
        admit_(budget);
        if (plan_.empty() && running_.empty() && !waiting_.empty()) {
            // Nothing runs and the oldest waiting request does not fit an empty pool: only blocks
            // a caller holds outside the scheduler can cause it. It ends rather than waits forever.
            request* r = waiting_.front();
            waiting_.pop_front();
            finish_(r, finish_reason::cache_full);
        }
        if (!plan_.empty()) run_plan_();
        publish_stats_();
        return !plan_.empty() || !running_.empty() || !waiting_.empty();
    }

    // step() until every request submitted so far (and any submitted meanwhile) has finished.
    void run() {
        while (step()) {
        }
    }

private:
    using request = detail::scheduled_request;
    using planned = detail::planned_rows;

    void check_fits_(std::span<const token_id> prompt) const {
        detail::check_prompt_fits(prompt, capacity_, dec_->config().vocab_size, pool_->n_blocks(), pool_->block_size(),
                                  pool_->max_seq_len());
    }

    // Cancelled requests leave running_ (their blocks freed) and waiting_, and finish.
    void apply_cancels_() {
        const auto finish_cancelled = [&](auto& list) {
            for (auto it = list.begin(); it != list.end();) {
                request* r = *it;
                if (!r->cancelled) {
                    ++it;
                    continue;
                }
                it = list.erase(it);
                if (r->seq >= 0) pool_->release(std::exchange(r->seq, -1));
                finish_(r, finish_reason::cancelled);
            }
        };
        finish_cancelled(running_);
        finish_cancelled(waiting_);
    }

    // Reserves positions [0, n) for running request r, preempting the newest running requests
    // (running_ is in admission order, so the last one) while the pool is short; r itself when it
    // is the newest. A request alone that still does not fit ends with cache_full. False when r
    // left running_ (requests before it in running_ stay).
    bool make_room_(request* r, std::int64_t n) {
        while (!pool_->can_reserve(r->seq, n)) {
            request* victim = running_.back();
            if (victim == r && running_.size() == 1) {
                running_.clear();
                pool_->release(r->seq);
                r->seq = -1;
                finish_(r, finish_reason::cache_full);
                return false;
            }
            preempt_(victim);
            if (victim == r) return false;
        }
        pool_->reserve(r->seq, n);
        return true;
    }

    void preempt_(request* r) {
        std::erase(running_, r);
        std::erase_if(plan_, [&](const planned& p) { return p.r == r; });
        pool_->release(r->seq);
        r->seq = -1;
        r->computed = 0;
        r->published = 0;
        waiting_.push_front(r);  // the newest is preempted first, so the oldest ends up in front
        ++step_stats_.preemptions;
    }

    bool planned_(const request* r) const {
        return std::any_of(plan_.begin(), plan_.end(), [&](const planned& p) { return p.r == r; });
    }

    std::int64_t chunk_(const request* r, std::int64_t budget) const {
        std::int64_t n = std::min(r->pending(), budget);
        if (options_.prefill_chunk > 0) n = std::min(n, options_.prefill_chunk);
        return n;
    }

    // Whether waiting request r should wait for a running request that is computing the blocks r
    // would attach (prefix caching): both start with the same full blocks, not all computed yet.
    bool wait_for_shared_prefix_(const request* r) const {
        if (!pool_->prefix_caching()) return false;
        const std::int64_t bs = pool_->block_size();
        const std::span<const token_id> mine = r->tokens().first(static_cast<std::size_t>(r->total() - 1));
        for (const request* q : running_) {
            const std::span<const token_id> theirs = q->tokens();
            const auto common = static_cast<std::int64_t>(
                std::mismatch(mine.begin(), mine.end(), theirs.begin(), theirs.end()).first - mine.begin());
            if (common / bs > 0 && q->computed / bs < common / bs) return true;
        }
        return false;
    }

    // Admits waiting requests, oldest first, while the budget, max_running and the pool allow: a
    // request takes its cached prefix and the blocks of its whole sequence so far, and a first chunk.
    void admit_(std::int64_t budget) {
        for (auto it = waiting_.begin(); it != waiting_.end() && budget > 0;) {
            if (static_cast<std::int64_t>(running_.size()) >= options_.max_running) break;
            request* r = *it;
            if (wait_for_shared_prefix_(r)) {
                ++it;
                continue;
            }
            // Fits when the blocks past its cached prefix are free once that prefix is attached
            // (checked before attaching, so that the pool counts only attaches that stay).
            const std::int64_t total = r->total();
            const auto match = pool_->match_prefix(r->tokens().first(static_cast<std::size_t>(total - 1)));
            const std::int64_t bs = pool_->block_size();
            const std::int64_t new_blocks = (total + bs - 1) / bs - match.positions / bs;
            if (total > pool_->max_seq_len() || new_blocks > pool_->n_free_blocks() - match.cached_blocks)
                break;  // first come, first served: nobody overtakes a request that does not fit
            const seq_id s = pool_->create();
            const std::int64_t attached =
                pool_->attach_prefix(s, r->tokens().first(static_cast<std::size_t>(total - 1)));
            if (!pool_->can_reserve(s, total)) {  // not expected after the check above; never throw here
                pool_->release(s);
                break;
            }
            pool_->reserve(s, total);
            r->seq = s;
            r->computed = attached;
            r->published = attached;
            r->admitted = next_admission_++;
            const std::int64_t n_prompt = r->n_prompt();
            step_stats_.prefix_hit_tokens += std::min(attached, n_prompt);
            running_.push_back(r);
            it = waiting_.erase(it);
            const std::int64_t n = chunk_(r, budget);
            plan_.push_back({r, n});
            budget -= n;
        }
        step_stats_.peak_running = std::max(step_stats_.peak_running, static_cast<std::int64_t>(running_.size()));
    }

    void run_plan_() {
        const auto t0 = std::chrono::steady_clock::now();
        views_.clear();
        batch_.clear();
        std::int64_t prompt_rows = 0, decode_rows = 0;
        for (const planned& p : plan_) {
            views_.push_back(pool_->sequence(p.r->seq));
            const bool last = p.r->computed + p.n == p.r->total();
            batch_.push_back(
                {p.r->tokens().subspan(static_cast<std::size_t>(p.r->computed), static_cast<std::size_t>(p.n)),
                 p.r->computed, &views_.back(), last ? logits_for::last : logits_for::none});
            // Rows at prompt positions, and at generated ones: all recomputed after a preemption
            // except the newest token's, which runs for the first time.
            const std::int64_t n_prompt = p.r->n_prompt();
            const std::int64_t in_prompt = std::clamp<std::int64_t>(n_prompt - p.r->computed, 0, p.n);
            const std::int64_t generated = p.n - in_prompt;
            prompt_rows += in_prompt;
            decode_rows += generated;
            step_stats_.recomputed_tokens += generated - (last && generated > 0 ? 1 : 0);
        }
        dec_->forward(std::span<const batch_sequence<view_type>>(batch_), logits_);

        const auto vocab = static_cast<std::size_t>(dec_->config().vocab_size);
        std::size_t row = 0;
        for (const planned& p : plan_) {
            request* r = p.r;
            r->computed += p.n;
            if (pool_->prefix_caching() && r->computed / pool_->block_size() > r->published / pool_->block_size()) {
                pool_->publish(r->seq, r->tokens().first(static_cast<std::size_t>(r->computed)));
                r->published = r->computed;
            }
            if (r->computed != r->total()) continue;
            const std::span<const float> logits(logits_.data() + row * vocab, vocab);
            ++row;
            ++step_stats_.generated_tokens;
            // A request whose logits are non-finite ends with the error; the others go on.
            bool more = false;
            try {
                more = r->next(logits);
            } catch (const error& e) {
                r->fail(e.what());
            }
            if (!more) {
                std::erase(running_, r);
                pool_->release(r->seq);
                r->seq = -1;
                finish_(r, finish_reason::none);
            }
        }
        step_stats_.prompt_tokens += prompt_rows;
        ++step_stats_.steps;
        const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        const double rows = static_cast<double>(prompt_rows + decode_rows);
        step_stats_.prompt_seconds += dt * static_cast<double>(prompt_rows) / rows;
        step_stats_.decode_seconds += dt * static_cast<double>(decode_rows) / rows;
    }

    // r has left running_/waiting_ and holds no blocks: stop it (unless it ended by itself),
    // store its result, forget it.
    void finish_(request* r, finish_reason why) { registry_.finish(r, why); }

    // Copies the step thread's counters where stats() reads them.
    void publish_stats_() {
        step_stats_.peak_used_blocks = pool_->peak_used_blocks();
        registry_.publish(step_stats_, running_.size(), waiting_.size());
    }

    decoder<Scalar>* dec_;
    Pool* pool_;
    const tokenizer* tok_;
    scheduler_options options_;
    std::int64_t capacity_ = 0;

    // Owned by the thread that calls step().
    std::deque<request*> waiting_;   // oldest (or preempted) first
    std::vector<request*> running_;  // in admission order, preempted ones removed
    std::vector<planned> plan_;      // this step's rows
    std::vector<view_type> views_;   // (max_running) reserved: batch_ points into it
    std::vector<batch_sequence<view_type>> batch_;
    std::vector<float> logits_;  // (max_running, vocab_size)
    std::int64_t next_admission_ = 0;
    scheduler_stats step_stats_;  // the step thread's counters; published to registry_ after each step

    // The requests (owned there) and what other threads see, under its mutex.
    detail::request_registry registry_;
};

}  // namespace nexttok
