// A type-erased logits_processor, for chains assembled at run time (dynamic_chain). Holds any
// copyable processor by value on the heap (one allocation at construction, none per token); each call
// is one virtual dispatch, once per token, never per element. accept() and reset() forward when the
// processor has them and do nothing otherwise; draws_random_numbers() reports the processor's trait
// (concepts.hpp), or its own run-time answer when it has one (a chain). Copying clones the processor
// with its state. A moved-from any_processor may only be assigned to or destroyed. Not thread-safe.
#pragma once

#include <nexttok/detail/clone_ptr.hpp>
#include <nexttok/sampling/candidates.hpp>
#include <nexttok/sampling/concepts.hpp>
#include <nexttok/types.hpp>

#include <concepts>
#include <memory>
#include <type_traits>
#include <utility>

namespace nexttok {

class any_processor {
public:
    template <class P>
    requires(detail::erasable<P, any_processor> && (logits_processor<std::remove_cvref_t<P>>))
        any_processor(P&& processor)  // NOLINT: implicit, as std::function, so {top_k{40}, ...} reads well
            : self_(detail::clone_ptr<interface_>::make<model_<std::remove_cvref_t<P>>>(std::forward<P>(processor))) {}

    // Copies clone the held object with its state (detail::clone_ptr); moves move it.

    void apply(candidates& c) { self_->apply(c); }
    void accept(token_id token) { self_->accept(token); }
    void reset() { self_->reset(); }
    bool draws_random_numbers() const noexcept { return self_->draws_random_numbers(); }

private:
    struct interface_ : detail::cloneable<interface_> {
        virtual void apply(candidates& c) = 0;
        virtual bool draws_random_numbers() const noexcept = 0;
        virtual void accept(token_id token) = 0;
        virtual void reset() = 0;
    };

    template <class P>
    struct model_ final : detail::erased_holder<interface_, model_<P>, P> {
        using detail::erased_holder<interface_, model_<P>, P>::erased_holder;
        void apply(candidates& c) override { this->held.apply(c); }
        bool draws_random_numbers() const noexcept override { return detail::draws_random_numbers(this->held); }
        void accept(token_id token) override { detail::accept_if_supported(this->held, token); }
        void reset() override { detail::reset_if_supported(this->held); }
    };

    detail::clone_ptr<interface_> self_;
};

}  // namespace nexttok
