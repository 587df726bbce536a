#pragma once
// A list of at most N values held where it is declared, never allocated: for
// lists on hot paths whose length a limit of common/limits.h bounds.
#include <cassert>
#include <cstddef>

namespace mw {

template <typename T, std::size_t N> struct ShortList {
    T items[N];
    std::size_t size = 0;
    void push(const T& v) {
        assert(size < N);
        items[size++] = v;
    }
    bool empty() const { return size == 0; }
    void clear() { size = 0; }
    T* begin() { return items; }
    T* end() { return items + size; }
    const T* begin() const { return items; }
    const T* end() const { return items + size; }
};

} // namespace mw
