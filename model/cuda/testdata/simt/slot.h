// Slot turns a packed 8-byte kernel argument into the parameter type the
// kernel declares (see main.cpp's launch protocol).
#pragma once
#include <cstdint>
#include <cstring>

struct Slot {
    uint64_t v;
    template <typename T> operator T*() const { return (T*)(uintptr_t)v; }
    operator int() const { return (int)(uint32_t)v; }
    operator float() const { float f; uint32_t u = (uint32_t)v; std::memcpy(&f, &u, 4); return f; }
    operator double() const { double d; std::memcpy(&d, &v, 8); return d; }
    operator long long() const { return (long long)v; }
    operator unsigned long long() const { return (unsigned long long)v; }
};
