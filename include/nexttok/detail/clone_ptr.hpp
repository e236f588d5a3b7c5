// The storage of the type-erased policies (any_processor, any_selector, any_sampler, any_criterion):
// an owning pointer to an Interface whose copies clone the object (Interface::clone() returns a
// std::unique_ptr<Interface> to a copy) and whose moves move the pointer. The four differ only in
// the operations their Interface declares. A moved-from clone_ptr is null: it may only be assigned
// to or destroyed.
#pragma once

#include <memory>
#include <utility>

namespace nexttok::detail {

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

    Interface* operator->() const noexcept { return p_.get(); }
    Interface& operator*() const noexcept { return *p_; }

private:
    std::unique_ptr<Interface> p_;
};

}  // namespace nexttok::detail
