// Many prompts at once, with one set of options: a scheduler over a paged pool, run to the end.
// Result i is exactly what generate(dec, cache, tok, prompts[i], options) returns alone (tokens,
// text, log-probabilities; the timings are the batch's). The callback receives the index of the
// prompt with each event, on the calling thread.
#pragma once

#include <nexttok/batching/scheduler.hpp>
#include <nexttok/generation/generation_options.hpp>
#include <nexttok/generation/generation_result.hpp>
#include <nexttok/generation/token_event.hpp>
#include <nexttok/tokenizer/tokenizer.hpp>
#include <nexttok/types.hpp>

#include <cstddef>
#include <functional>
#include <span>
#include <vector>

namespace nexttok {

// Called with the prompt's index and the event; returning false ends that prompt's generation.
using indexed_token_callback = std::function<bool(std::size_t, const token_event&)>;

// Throws invalid_argument_error for bad options or a prompt that does not fit the pool (nothing
// runs then: every prompt is checked before the first is queued).
template <class Scalar, class Pool>
std::vector<generation_result> generate_batch(decoder<Scalar>& dec, Pool& pool, const tokenizer& tok,
                                              std::span<const std::vector<token_id>> prompts,
                                              const generation_options& options, const scheduler_options& schedule = {},
                                              const indexed_token_callback& on_token = {}) {
    scheduler<Scalar, Pool> batch(dec, pool, &tok, schedule);
    options.validate();
    for (const std::vector<token_id>& p : prompts)
        if (p.empty() || static_cast<std::int64_t>(p.size()) > batch.capacity()) {
            batch.submit(p, options);  // throws the message naming the sizes
        }
    std::vector<request_id> ids;
    ids.reserve(prompts.size());
    for (std::size_t i = 0; i < prompts.size(); ++i) {
        token_callback cb;
        if (on_token)
            cb = [&on_token, i](const token_event& e) {
                return on_token(i, e);
            };
        ids.push_back(batch.submit(prompts[i], options, std::move(cb)));
    }
    batch.run();
    std::vector<generation_result> results;
    results.reserve(ids.size());
    for (const request_id id : ids) results.push_back(*batch.take_result(id));
    return results;
}

}  // namespace nexttok
