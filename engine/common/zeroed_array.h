#pragma once
// A fixed-size array of zero bytes: from calloc, or zeroed by the caller's
// own function (the driver's record of seen mappings shares the writing of a
// large table out over its threads; std::vector would write it on one).
// Arrays of several MiB are mapped on huge pages where the system offers them
// (Linux's transparent huge pages on request): the record of seen mappings is
// probed at random, one TLB miss a probe on 4 KiB pages.
#include <cstddef>
#include <cstdlib>
#include <new>
#include <type_traits>
#include <utility>

#ifdef __linux__
#include <sys/mman.h>
#endif

namespace mw {

template <typename T> class ZeroedArray {
    // Zero bytes must be a valid T, and T needs no constructor or destructor.
    static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);

  public:
    ZeroedArray() = default;
    explicit ZeroedArray(std::size_t n) : size_(n) { allocate(true); }
    // Uninitialised memory that zero(data, n) must fill with zero bytes.
    template <typename ZeroFn> ZeroedArray(std::size_t n, ZeroFn&& zero) : size_(n) {
        allocate(false);
        if (n > 0)
            zero(data_, n);
    }
    ~ZeroedArray() { release(); }
    ZeroedArray(ZeroedArray&& o) noexcept
        : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)),
          mapped_(std::exchange(o.mapped_, false)) {}
    ZeroedArray& operator=(ZeroedArray&& o) noexcept {
        std::swap(data_, o.data_);
        std::swap(size_, o.size_);
        std::swap(mapped_, o.mapped_);
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
    static constexpr std::size_t kHugeFrom = std::size_t(4) << 20; // bytes

    void allocate(bool zeroed) {
        if (size_ == 0)
            return;
        if (size_ > std::size_t(-1) / sizeof(T))
            throw std::bad_alloc();
#ifdef __linux__
        if (size_ * sizeof(T) >= kHugeFrom) {
            // (An anonymous mapping reads as zero bytes.)
            void* p = mmap(nullptr, size_ * sizeof(T), PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (p == MAP_FAILED)
                throw std::bad_alloc();
            madvise(p, size_ * sizeof(T), MADV_HUGEPAGE); // (a hint: refused is fine)
            data_ = static_cast<T*>(p);
            mapped_ = true;
            return;
        }
#endif
        data_ = static_cast<T*>(zeroed ? std::calloc(size_, sizeof(T))
                                       : std::malloc(size_ * sizeof(T)));
        if (!data_)
            throw std::bad_alloc();
    }
    void release() {
#ifdef __linux__
        if (mapped_) {
            munmap(data_, size_ * sizeof(T));
            return;
        }
#endif
        std::free(data_);
    }

    T* data_ = nullptr;
    std::size_t size_ = 0;
    bool mapped_ = false;
};

} // namespace mw
