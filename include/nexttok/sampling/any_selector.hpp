// A type-erased token_selector, the last stage of a dynamic_chain. Same ownership and cost as
// any_processor: one heap object per selector, one virtual call per token, copying clones the state
// (for categorical: the RNG position). accept() and reset() forward when the selector has them;
// distribution() when it has one (distribution_selector), else it throws unsupported_error.
#pragma once

#include <nexttok/detail/clone_ptr.hpp>
#include <nexttok/sampling/candidates.hpp>
#include <nexttok/sampling/concepts.hpp>
#include <nexttok/error.hpp>
#include <nexttok/sampling/token_distribution.hpp>
#include <nexttok/types.hpp>

#include <concepts>
#include <memory>
#include <type_traits>
#include <utility>

namespace nexttok {

class any_selector {
public:
    template <class S>
    requires(detail::erasable<S, any_selector> && (token_selector<std::remove_cvref_t<S>>))
        any_selector(S&& selector)  // NOLINT: implicit, as std::function
            : self_(detail::clone_ptr<interface_>::make<model_<std::remove_cvref_t<S>>>(std::forward<S>(selector))) {}

    // Copies clone the held object with its state (detail::clone_ptr); moves move it.

    token_id select(candidates& c) { return self_->select(c); }
    void accept(token_id token) { self_->accept(token); }
    void reset() { self_->reset(); }
    bool has_distribution() const noexcept { return self_->has_distribution(); }
    token_distribution distribution(candidates& c) { return self_->distribution(c); }

private:
    struct interface_ : detail::cloneable<interface_> {
        virtual token_id select(candidates& c) = 0;
        virtual bool has_distribution() const noexcept = 0;
        virtual token_distribution distribution(candidates& c) = 0;
        virtual void accept(token_id token) = 0;
        virtual void reset() = 0;
    };

    template <class S>
    struct model_ final : detail::erased_holder<interface_, model_<S>, S> {
        using detail::erased_holder<interface_, model_<S>, S>::erased_holder;
        token_id select(candidates& c) override { return this->held.select(c); }
        bool has_distribution() const noexcept override { return distribution_selector<S>; }
        token_distribution distribution(candidates& c) override {
            if constexpr (distribution_selector<S>)
                return this->held.distribution(c);
            else
                throw unsupported_error(
                    "any_selector: this selector has no distribution that can be stated without drawing (e.g. "
                    "mirostat)");
        }
        void accept(token_id token) override { detail::accept_if_supported(this->held, token); }
        void reset() override { detail::reset_if_supported(this->held); }
    };

    detail::clone_ptr<interface_> self_;
};

}  // namespace nexttok
