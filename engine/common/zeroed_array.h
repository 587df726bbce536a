#pragma once
// A fixed-size array of zero bytes: from calloc, or zeroed by the caller's
// own function (the driver's record of seen mappings shares the writing of a
// large table out over its threads; std::vector would write it on one).
#include <cstddef>
#include <cstdlib>
#include <new>
#include <type_traits>
#include <utility>

namespace mw {

template <typename T> class ZeroedArray {
    // Zero bytes must be a valid T, and T needs no constructor or destructor.
    static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);

  public:
    ZeroedArray() = default;
    explicit ZeroedArray(std::size_t n) : size_(n) {
        if (n > 0 && !(data_ = static_cast<T*>(std::calloc(n, sizeof(T)))))
            throw std::bad_alloc();
    }
    // Uninitialised memory that zero(data, n) must fill with zero bytes.
    template <typename ZeroFn> ZeroedArray(std::size_t n, ZeroFn&& zero) : size_(n) {
        if (n > 0 && !(data_ = static_cast<T*>(std::malloc(n * sizeof(T)))))
            throw std::bad_alloc();
        zero(data_, n);
    }
    ~ZeroedArray() { std::free(data_); }
    ZeroedArray(ZeroedArray&& o) noexcept
        : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}
    ZeroedArray& operator=(ZeroedArray&& o) noexcept {
        std::swap(data_, o.data_);
        std::swap(size_, o.size_);
        return *this;
    }
    ZeroedArray(const ZeroedArray&) = delete;
    ZeroedArray& operator=(const ZeroedArray&) = delete;

    std::size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    T& operator[](std::size_t i) { return data_[i]; }
    const T& operator[](std::size_t i) const { return data_[i]; }
    const T* begin() const { return data_; }
    const T* end() const { return data_ + size_; }

  private:
    T* data_ = nullptr;
    std::size_t size_ = 0;
};

} // namespace mw
