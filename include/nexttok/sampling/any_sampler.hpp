// A type-erased sampler: what generate() holds when the sampling policy is chosen at run time (from
// sampling_options, a config file, a CLI). Wraps any copyable `sampler` (a sampler_chain, a
// dynamic_chain, a user type) by value on the heap: one allocation at construction, one virtual call
// per sample()/accept(), none per element. Copying clones the wrapped sampler with its state (llama.cpp's
// llama_sampler_clone), e.g. one sampler per sequence from a prototype. A moved-from any_sampler may
// only be assigned to or destroyed. Not thread-safe. distribution(), choose() and has_distribution()
// forward to a wrapped distribution_sampler; for another sampler has_distribution() is false and the
// other two throw unsupported_error.
#pragma once

#include <nexttok/detail/clone_ptr.hpp>
#include <nexttok/error.hpp>
#include <nexttok/sampling/concepts.hpp>
#include <nexttok/sampling/token_distribution.hpp>
#include <nexttok/types.hpp>

#include <concepts>
#include <memory>
#include <span>
#include <type_traits>
#include <utility>

namespace nexttok {

class any_sampler {
public:
    template <class S>
    requires(detail::erasable<S, any_sampler> && (sampler<std::remove_cvref_t<S>>))
        any_sampler(S&& s)  // NOLINT: implicit, as std::function
            : self_(detail::clone_ptr<interface_>::make<model_<std::remove_cvref_t<S>>>(std::forward<S>(s))) {}

    // Copies clone the held object with its state (detail::clone_ptr); moves move it.

    token_id sample(std::span<const float> logits) { return self_->sample(logits); }
    void accept(token_id token) { self_->accept(token); }
    void reset() { self_->reset(); }
    float last_logprob() const { return self_->last_logprob(); }
    bool has_distribution() const { return self_->has_distribution(); }
    token_distribution distribution(std::span<const float> logits) { return self_->distribution(logits); }
    void choose(token_id token) { self_->choose(token); }

private:
    struct interface_ : detail::cloneable<interface_> {
        virtual token_id sample(std::span<const float> logits) = 0;
        virtual void accept(token_id token) = 0;
        virtual void reset() = 0;
        virtual float last_logprob() const = 0;
        virtual bool has_distribution() const = 0;
        virtual token_distribution distribution(std::span<const float> logits) = 0;
        virtual void choose(token_id token) = 0;
    };

    template <class S>
    struct model_ final : detail::erased_holder<interface_, model_<S>, S> {
        using detail::erased_holder<interface_, model_<S>, S>::erased_holder;
        token_id sample(std::span<const float> logits) override { return this->held.sample(logits); }
        void accept(token_id token) override { this->held.accept(token); }
        void reset() override { this->held.reset(); }
        float last_logprob() const override { return static_cast<float>(this->held.last_logprob()); }
        bool has_distribution() const override {
            if constexpr (distribution_sampler<S>)
                return this->held.has_distribution();
            else
                return false;
        }
        token_distribution distribution(std::span<const float> logits) override {
            if constexpr (distribution_sampler<S>)
                return this->held.distribution(logits);
            else
                throw unsupported_error(no_distribution_);
        }
        void choose(token_id token) override {
            if constexpr (distribution_sampler<S>)
                this->held.choose(token);
            else
                throw unsupported_error(no_distribution_);
        }
        static constexpr const char* no_distribution_ =
            "any_sampler: the wrapped sampler cannot state its distribution (no distribution()/choose())";
    };

    detail::clone_ptr<interface_> self_;
};

}  // namespace nexttok
