// The storage of the type-erased policies (any_processor, any_selector, any_sampler, any_criterion):
// an owning pointer to an Interface whose copies clone the object (Interface::clone() returns a
// std::unique_ptr<Interface> to a copy) and whose moves move the pointer; the base of each wrapper's
// model (erased_holder: the held object and clone()); and what the wrappers' constructors accept
// (erasable). The four differ only in the operations their Interface declares. A moved-from
// clone_ptr is null: it may only be assigned to or destroyed.
#pragma once

#include <concepts>
#include <memory>
#include <type_traits>
#include <utility>

namespace nexttok::detail {

// What a wrapper's converting constructor takes: a copyable T that is not the Wrapper itself.
template <class T, class Wrapper>
concept erasable = !std::same_as<std::remove_cvref_t<T>, Wrapper> && std::copy_constructible<std::remove_cvref_t<T>>;

// The base of a wrapper's Interface: a virtual destructor and the clone() that clone_ptr copies with.
template <class Interface>
struct cloneable {
    virtual ~cloneable() = default;
    virtual std::unique_ptr<Interface> clone() const = 0;
};

// The base of a wrapper's Model (which derives from erased_holder<Interface, Model, T> and forwards
// Interface's other operations to `held`): the wrapped object and the copy that clone() returns.
template <class Interface, class Model, class T>
struct erased_holder : Interface {
    template <class Arg>
    explicit erased_holder(Arg&& arg) : held(std::forward<Arg>(arg)) {}
    std::unique_ptr<Interface> clone() const override {
        return std::make_unique<Model>(static_cast<const Model&>(*this));
    }
    T held;
};

template <class Interface>
class clone_ptr {
public:
    clone_ptr() = default;
    clone_ptr(std::unique_ptr<Interface> p) noexcept : p_(std::move(p)) {}  // NOLINT: from make_unique<Model>
    clone_ptr(const clone_ptr& other) : p_(other.p_ ? other.p_->clone() : nullptr) {}
    clone_ptr(clone_ptr&&) noexcept = default;
    clone_ptr& operator=(const clone_ptr& other) {
        if (this != &other) p_ = other.p_ ? other.p_->clone() : nullptr;
        return *this;
    }
    clone_ptr& operator=(clone_ptr&&) noexcept = default;
    ~clone_ptr() = default;

    // A Model (an erased_holder) made from arg.
    template <class Model, class Arg>
    static clone_ptr make(Arg&& arg) {
        return clone_ptr(std::make_unique<Model>(std::forward<Arg>(arg)));
    }

    Interface* operator->() const noexcept { return p_.get(); }
    Interface& operator*() const noexcept { return *p_; }

private:
    std::unique_ptr<Interface> p_;
};

}  // namespace nexttok::detail
