// POST /v1/completions and /v1/chat/completions: parse the body, build the prompt, submit one
// scheduler request per choice, then answer through a chunked content provider that reads the
// job's events, for both modes:
//   stream      SSE chunks as tokens arrive, each choice's last chunk with its finish_reason, the
//               usage chunk with stream_options.include_usage, then "data: [DONE]"; an SSE comment
//               ": keep-alive" after a second without tokens (a queued request).
//   non-stream  the whole JSON once every choice has finished; while waiting, one space (JSON
//               whitespace before the object) per second of waiting.
// Both write something at least every second, so a client that went away makes a write fail; the
// job is then cancelled and its blocks freed. The resource releaser cancels it too when the
// connection ends before the content is complete. Both assemble the text by concatenating the
// token events' texts, so the streamed and the non-streamed text of a request are the same.
#pragma once

#include "model_context.hpp"
#include "openai_request.hpp"
#include "openai_response.hpp"
#include "server_state.hpp"

#include <nexttok/nexttok.hpp>

#include <httplib.h>

#include <chrono>
#include <cstdint>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

namespace server {

inline void send_error(httplib::Response& res, int status, const std::string& message, const std::string& type,
                       const std::string& param = {}, const std::string& code = {}) {
    res.status = status;
    res.set_content(dump(error_body(message, type, param, code)), "application/json");
}

// The answer being built for one job, shared by the content provider's calls.
class answer_state {
public:
    answer_state(std::shared_ptr<job> j, response_meta meta, const openai_request& r, const nexttok::tokenizer& tok)
            : job_(std::move(j)),
              meta_(std::move(meta)),
              include_usage_(r.include_usage),
              tok_(&tok),
              choices_(static_cast<std::size_t>(r.n)) {
        for (std::size_t i = 0; i < choices_.size(); ++i) choices_[i].index = static_cast<std::int64_t>(i);
        usage_.prompt_tokens = job_->n_prompt();
    }

    const std::shared_ptr<job>& owner() const noexcept { return job_; }

    // The SSE text for the events that arrived within `wait` (first call: the chat role chunks);
    // done: the job has ended and the text ends with [DONE].
    std::string next_stream_text(std::chrono::milliseconds wait, bool& done) {
        std::string out;
        if (!started_ && meta_.kind == endpoint::chat)
            for (const auto& c : choices_) out += sse(chunk_json(meta_, role_chunk_(c.index), include_usage_));
        started_ = true;
        std::vector<choice_event> events;
        done = job_->pop(events, wait);
        for (const choice_event& e : events) {
            chunk_part part;
            part.index = e.choice;
            if (e.finished) {
                part.finish_reason = absorb_(e);
                if (!e.error.empty()) out += sse(generation_error_json(e.error));
            } else {
                const auto logprob = absorb_(e, part.logprobs);
                part.text = e.text;
                if (part.text.empty() && !logprob) continue;
            }
            out += sse(chunk_json(meta_, part, include_usage_));
        }
        if (done) {
            if (include_usage_) out += sse(usage_chunk_json(meta_, usage_));
            out += "data: [DONE]\n\n";
        }
        return out;
    }

    // Non-stream: absorbs the events of `wait`; the whole JSON answer once the job has ended, else "".
    std::string next_body(std::chrono::milliseconds wait) {
        std::vector<choice_event> events;
        const bool done = job_->pop(events, wait);
        std::vector<token_logprob_entry> unused;
        for (const choice_event& e : events) {
            if (e.finished)
                absorb_(e);
            else
                absorb_(e, unused);
        }
        return done ? dump(completion_body(meta_, choices_, usage_)) : std::string();
    }

private:
    static chunk_part role_chunk_(std::int64_t index) {
        chunk_part p;
        p.index = index;
        p.role_only = true;
        return p;
    }

    // A finished event: the choice's reason and token count.
    std::string absorb_(const choice_event& e) {
        choice_output& c = choices_[static_cast<std::size_t>(e.choice)];
        c.finish_reason = openai_finish_reason(e.reason);
        c.error = e.error;
        c.n_tokens = e.n_tokens;
        usage_.completion_tokens += e.n_tokens;
        return c.finish_reason;
    }

    // A token event: its text appended; its log-probability recorded (and appended to `chunk`)
    // when asked. True when it carried a token with logprobs asked.
    bool absorb_(const choice_event& e, std::vector<token_logprob_entry>& chunk) {
        choice_output& c = choices_[static_cast<std::size_t>(e.choice)];
        bool recorded = false;
        if (meta_.logprobs && e.id != nexttok::no_token) {
            token_logprob_entry t{tok_->token_to_piece(e.id), e.logprob, {}, c.text.size()};
            for (const auto& alt : e.top) t.top.emplace_back(tok_->token_to_piece(alt.id), alt.logprob);
            c.logprobs.push_back(t);
            chunk.push_back(std::move(t));
            recorded = true;
        }
        c.text += e.text;
        return recorded;
    }

    std::shared_ptr<job> job_;
    response_meta meta_;
    bool include_usage_ = false;
    const nexttok::tokenizer* tok_;
    std::vector<choice_output> choices_;
    usage_counts usage_;
    bool started_ = false;
};

// The prompt of a parsed request; request_error when it cannot be built.
inline std::vector<nexttok::token_id> request_prompt(const server_state& s, openai_request& r) {
    if (r.kind == endpoint::completions)
        return r.prompt_text ? encode_text_prompt(*s.model, *r.prompt_text) : r.prompt_ids;
    if (!s.model->chat)
        throw request_error("the model " + s.model->name +
                                " has no chat template: start the server with --chat-template chatml "
                                "(or --chat-template FILE, a Jinja template), or use /v1/completions",
                            "messages");
    try {
        std::vector<nexttok::token_id> prompt = encode_chat_prompt(*s.model, r.messages);
        r.options.eos_ids = s.model->end_of_turn;  // stop at the end of the assistant's turn
        return prompt;
    } catch (const nexttok::chat_template_error& e) {
        throw request_error(std::string("the chat template failed on these messages: ") + e.what(), "messages");
    }
}

inline void handle_generation(server_state& s, endpoint kind, const httplib::Request& req, httplib::Response& res) {
    openai_request r;
    std::vector<nexttok::token_id> prompt;
    try {
        r = parse_openai_request(req.body, kind, s.defaults, static_cast<std::int64_t>(s.model->tok->vocab_size()));
        prompt = request_prompt(s, r);
    } catch (const request_error& e) {
        return send_error(res, 400, e.what(), "invalid_request_error", e.param());
    }
    std::vector<nexttok::generation_options> choices;
    for (std::int64_t i = 0; i < r.n; ++i) choices.push_back(choice_options(r, i));
    std::shared_ptr<job> j;
    try {
        j = s.eng->submit(prompt, choices);
    } catch (const nexttok::invalid_argument_error& e) {
        return send_error(res, 400, e.what(), "invalid_request_error", kind == endpoint::chat ? "messages" : "prompt");
    }
    if (!j) {
        res.set_header("Retry-After", "1");
        return send_error(
            res, 503, "the server is busy (all --parallel slots and the --queue are taken) or stopping: retry later",
            "server_busy");
    }

    response_meta meta;
    meta.kind = kind;
    meta.id = std::string(kind == endpoint::chat ? "chatcmpl-" : "cmpl-") + std::to_string(s.started) + "-" +
              std::to_string(s.next_id++);
    meta.created = static_cast<std::int64_t>(std::time(nullptr));
    meta.model = r.model.empty() ? s.model->name : r.model;
    meta.logprobs = r.logprobs;
    auto st = std::make_shared<answer_state>(j, meta, r, *s.model->tok);
    ++s.open_responses;
    auto release = [&s, st](bool) {
        if (!st->owner()->finished()) s.eng->cancel(*st->owner());  // the connection ended first
        --s.open_responses;
    };
    // Both answers are written by one provider: every 200 ms it takes what `next` has (the text to
    // send and whether the answer is complete); after a second with nothing to send it writes
    // `heartbeat` (an SSE comment, or a space that JSON parsers skip), so that a client that went
    // away is noticed by a failed write, which cancels its request.
    auto provider = [&s, st](auto next, std::string heartbeat) {
        auto last_write = std::make_shared<std::chrono::steady_clock::time_point>(std::chrono::steady_clock::now());
        return [&s, st, next, heartbeat, last_write](std::size_t, httplib::DataSink& sink) {
            bool done = false;
            std::string out = next(std::chrono::milliseconds(200), done);
            const auto now = std::chrono::steady_clock::now();
            if (out.empty() && !done && now - *last_write >= std::chrono::seconds(1)) out = heartbeat;
            if (!out.empty()) {
                if (!sink.write(out.data(), out.size())) {
                    s.eng->cancel(*st->owner());
                    return false;
                }
                *last_write = now;
            }
            if (done) sink.done();
            return true;
        };
    };
    if (r.stream) {
        res.set_header("Cache-Control", "no-cache");
        res.set_header("X-Accel-Buffering", "no");  // nginx: pass the events through unbuffered
        auto next = [st](std::chrono::milliseconds wait, bool& done) {
            return st->next_stream_text(wait, done);
        };
        res.set_chunked_content_provider("text/event-stream", provider(next, ": keep-alive\n\n"), release);
    } else {
        auto next = [st](std::chrono::milliseconds wait, bool& done) {
            std::string body = st->next_body(wait);
            done = !body.empty();
            return body;
        };
        res.set_chunked_content_provider("application/json", provider(next, " "), release);
    }
}

}  // namespace server
