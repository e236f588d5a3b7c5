// A type-erased stopping criterion, for criteria chosen at run time (any_of_criteria). Holds any
// copyable criterion by value on the heap: one allocation at construction, one virtual call per
// check. reset(), hold_back() and text_cut() forward when the criterion has them (concepts.hpp).
// Copying clones the criterion with its state. A moved-from any_criterion may only be assigned to or
// destroyed. Not thread-safe.
#pragma once

#include <nexttok/detail/clone_ptr.hpp>
#include <nexttok/stopping/concepts.hpp>
#include <nexttok/stopping/finish_reason.hpp>
#include <nexttok/stopping/generation_state.hpp>

#include <concepts>
#include <cstddef>
#include <memory>
#include <optional>
#include <string_view>
#include <type_traits>
#include <utility>

namespace nexttok {

class any_criterion {
public:
    template <class S>
    requires(detail::erasable<S, any_criterion> && (stopping_criterion<std::remove_cvref_t<S>>))
        any_criterion(S&& criterion)  // NOLINT: implicit, as std::function
            : self_(detail::clone_ptr<interface_>::make<model_<std::remove_cvref_t<S>>>(std::forward<S>(criterion))) {}

    // Copies clone the held object with its state (detail::clone_ptr); moves move it.

    finish_reason check(const generation_state& state) { return self_->check(state); }
    void reset() { self_->reset(); }
    std::size_t hold_back(std::string_view text) const { return self_->hold_back(text); }
    std::optional<std::size_t> text_cut() const { return self_->text_cut(); }

private:
    struct interface_ : detail::cloneable<interface_> {
        virtual finish_reason check(const generation_state& state) = 0;
        virtual void reset() = 0;
        virtual std::size_t hold_back(std::string_view text) const = 0;
        virtual std::optional<std::size_t> text_cut() const = 0;
    };

    template <class S>
    struct model_ final : detail::erased_holder<interface_, model_<S>, S> {
        using detail::erased_holder<interface_, model_<S>, S>::erased_holder;
        finish_reason check(const generation_state& state) override { return this->held.check(state); }
        void reset() override { detail::reset_criterion_if_supported(this->held); }
        std::size_t hold_back(std::string_view text) const override {
            return detail::hold_back_if_supported(this->held, text);
        }
        std::optional<std::size_t> text_cut() const override { return detail::text_cut_if_supported(this->held); }
    };

    detail::clone_ptr<interface_> self_;
};

}  // namespace nexttok
