#include "CByteScan.h"

#include <string.h>

/// The index of the first byte of 0x80 or more in `bytes[index..<count]`, eight bytes a word.
static size_t first_non_ascii_words(const uint8_t *bytes, size_t index, size_t count) {
    while (count - index >= 8) {
        uint64_t word;
        memcpy(&word, bytes + index, 8);
        if ((word & 0x8080808080808080ULL) != 0) break;
        index += 8;
    }
    for (; index < count; index++) {
        if (bytes[index] >= 0x80) return index;
    }
    return count;
}

/// Whether a JSON string holds `byte` as it is.
static inline int is_plain(uint8_t byte, int non_ascii_is_plain) {
    return byte >= 0x20 && byte != '"' && byte != '\\' && (non_ascii_is_plain || byte < 0x80);
}

static size_t skip_plain_bytes(const uint8_t *base, size_t index, size_t count, int non_ascii_is_plain) {
    while (index < count && is_plain(base[index], non_ascii_is_plain)) index++;
    return index;
}

#if defined(__x86_64__)
#include <immintrin.h>

/// Whether the scans use AVX2: whether the CPU has it, read once when the program starts
/// (tests switch it, with the program's other threads running: atomic, relaxed).
static int use_avx2;

static int cpu_has_avx2(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2");
}

__attribute__((constructor)) static void wl_byte_scan_init(void) {
    __atomic_store_n(&use_avx2, cpu_has_avx2(), __ATOMIC_RELAXED);
}

int wl_byte_scan_use_avx2(int use) {
    return __atomic_exchange_n(&use_avx2, use && cpu_has_avx2(), __ATOMIC_RELAXED);
}

/// The bytes after the last whole vector are read as the vector that ends at `count`: its
/// bytes before `index` were read already, and are ASCII.
__attribute__((target("avx2"))) static size_t first_non_ascii_avx2(const uint8_t *bytes, size_t count) {
    if (count < 32) return first_non_ascii_words(bytes, 0, count);
    size_t index = 0;
    // Four vectors OR-ed together, one test of their high bits: 128 bytes in 13 instructions.
    while (count - index >= 128) {
        __m256i any = _mm256_or_si256(
            _mm256_or_si256(_mm256_loadu_si256((const __m256i *)(bytes + index)),
                            _mm256_loadu_si256((const __m256i *)(bytes + index + 32))),
            _mm256_or_si256(_mm256_loadu_si256((const __m256i *)(bytes + index + 64)),
                            _mm256_loadu_si256((const __m256i *)(bytes + index + 96))));
        if (_mm256_movemask_epi8(any) != 0) break;
        index += 128;
    }
    while (count - index >= 32) {
        int high = _mm256_movemask_epi8(_mm256_loadu_si256((const __m256i *)(bytes + index)));
        if (high != 0) return index + (size_t)__builtin_ctz((unsigned)high);
        index += 32;
    }
    if (index == count) return count;
    int high = _mm256_movemask_epi8(_mm256_loadu_si256((const __m256i *)(bytes + count - 32)));
    return high != 0 ? count - 32 + (size_t)__builtin_ctz((unsigned)high) : count;
}

static size_t first_non_ascii_sse2(const uint8_t *bytes, size_t count) {
    if (count < 16) return first_non_ascii_words(bytes, 0, count);
    size_t index = 0;
    while (count - index >= 64) {
        __m128i any = _mm_or_si128(
            _mm_or_si128(_mm_loadu_si128((const __m128i *)(bytes + index)),
                         _mm_loadu_si128((const __m128i *)(bytes + index + 16))),
            _mm_or_si128(_mm_loadu_si128((const __m128i *)(bytes + index + 32)),
                         _mm_loadu_si128((const __m128i *)(bytes + index + 48))));
        if (_mm_movemask_epi8(any) != 0) break;
        index += 64;
    }
    while (count - index >= 16) {
        int high = _mm_movemask_epi8(_mm_loadu_si128((const __m128i *)(bytes + index)));
        if (high != 0) return index + (size_t)__builtin_ctz((unsigned)high);
        index += 16;
    }
    if (index == count) return count;
    int high = _mm_movemask_epi8(_mm_loadu_si128((const __m128i *)(bytes + count - 16)));
    return high != 0 ? count - 16 + (size_t)__builtin_ctz((unsigned)high) : count;
}

/// The lanes of `v` that a JSON string cannot hold as they are, in their high bits: a quote,
/// a backslash, a byte below 0x20 (one that the unsigned minimum with 0x1f leaves unchanged)
/// and, unless `non_ascii_is_plain`, a byte of 0x80 or more (its own high bit).
__attribute__((target("avx2"), always_inline)) static inline __m256i attention_avx2(__m256i v, const int non_ascii_is_plain) {
    __m256i flagged = _mm256_or_si256(
        _mm256_or_si256(_mm256_cmpeq_epi8(v, _mm256_set1_epi8('"')), _mm256_cmpeq_epi8(v, _mm256_set1_epi8('\\'))),
        _mm256_cmpeq_epi8(_mm256_min_epu8(v, _mm256_set1_epi8(0x1f)), v));
    return non_ascii_is_plain ? flagged : _mm256_or_si256(flagged, v);
}

/// 128 bytes a step (four vectors, one test), then 32, then the vector that ends at `count`
/// (its bytes before `index` were read already, and are plain); the choice of what is plain is
/// a constant in each of the two copies of the loop.
__attribute__((target("avx2"), always_inline)) static inline size_t skip_plain_avx2(const uint8_t *base, size_t start,
                                                                                    size_t count, const int non_ascii_is_plain) {
    if (count - start < 32) return skip_plain_bytes(base, start, count, non_ascii_is_plain);
    size_t index = start;
    while (count - index >= 128) {
        __m256i a = attention_avx2(_mm256_loadu_si256((const __m256i *)(base + index)), non_ascii_is_plain);
        __m256i b = attention_avx2(_mm256_loadu_si256((const __m256i *)(base + index + 32)), non_ascii_is_plain);
        __m256i c = attention_avx2(_mm256_loadu_si256((const __m256i *)(base + index + 64)), non_ascii_is_plain);
        __m256i d = attention_avx2(_mm256_loadu_si256((const __m256i *)(base + index + 96)), non_ascii_is_plain);
        if (_mm256_movemask_epi8(_mm256_or_si256(_mm256_or_si256(a, b), _mm256_or_si256(c, d))) != 0) break;
        index += 128;
    }
    while (count - index >= 32) {
        int flagged = _mm256_movemask_epi8(
            attention_avx2(_mm256_loadu_si256((const __m256i *)(base + index)), non_ascii_is_plain));
        if (flagged != 0) return index + (size_t)__builtin_ctz((unsigned)flagged);
        index += 32;
    }
    if (index == count) return count;
    int flagged = _mm256_movemask_epi8(
        attention_avx2(_mm256_loadu_si256((const __m256i *)(base + count - 32)), non_ascii_is_plain));
    return flagged != 0 ? count - 32 + (size_t)__builtin_ctz((unsigned)flagged) : count;
}

__attribute__((target("avx2"))) static size_t skip_plain_any_avx2(const uint8_t *base, size_t start, size_t count,
                                                                  int non_ascii_is_plain) {
    return non_ascii_is_plain ? skip_plain_avx2(base, start, count, 1) : skip_plain_avx2(base, start, count, 0);
}

__attribute__((always_inline)) static inline __m128i attention_sse2(__m128i v, const int non_ascii_is_plain) {
    __m128i flagged = _mm_or_si128(
        _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))),
        _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1f)), v));
    return non_ascii_is_plain ? flagged : _mm_or_si128(flagged, v);
}

__attribute__((always_inline)) static inline size_t skip_plain_sse2(const uint8_t *base, size_t start, size_t count,
                                                                    const int non_ascii_is_plain) {
    if (count - start < 16) return skip_plain_bytes(base, start, count, non_ascii_is_plain);
    size_t index = start;
    while (count - index >= 32) {
        __m128i a = attention_sse2(_mm_loadu_si128((const __m128i *)(base + index)), non_ascii_is_plain);
        __m128i b = attention_sse2(_mm_loadu_si128((const __m128i *)(base + index + 16)), non_ascii_is_plain);
        if (_mm_movemask_epi8(_mm_or_si128(a, b)) != 0) break;
        index += 32;
    }
    while (count - index >= 16) {
        int flagged = _mm_movemask_epi8(attention_sse2(_mm_loadu_si128((const __m128i *)(base + index)), non_ascii_is_plain));
        if (flagged != 0) return index + (size_t)__builtin_ctz((unsigned)flagged);
        index += 16;
    }
    if (index == count) return count;
    int flagged = _mm_movemask_epi8(attention_sse2(_mm_loadu_si128((const __m128i *)(base + count - 16)), non_ascii_is_plain));
    return flagged != 0 ? count - 16 + (size_t)__builtin_ctz((unsigned)flagged) : count;
}

static size_t skip_plain_any_sse2(const uint8_t *base, size_t start, size_t count, int non_ascii_is_plain) {
    return non_ascii_is_plain ? skip_plain_sse2(base, start, count, 1) : skip_plain_sse2(base, start, count, 0);
}

size_t wl_first_non_ascii(const uint8_t *bytes, size_t count) {
    return __atomic_load_n(&use_avx2, __ATOMIC_RELAXED) ? first_non_ascii_avx2(bytes, count) : first_non_ascii_sse2(bytes, count);
}

size_t wl_skip_plain(const uint8_t *base, size_t start, size_t count, int non_ascii_is_plain) {
    return __atomic_load_n(&use_avx2, __ATOMIC_RELAXED) ? skip_plain_any_avx2(base, start, count, non_ascii_is_plain)
                                                         : skip_plain_any_sse2(base, start, count, non_ascii_is_plain);
}

#else

size_t wl_first_non_ascii(const uint8_t *bytes, size_t count) { return first_non_ascii_words(bytes, 0, count); }

size_t wl_skip_plain(const uint8_t *base, size_t start, size_t count, int non_ascii_is_plain) {
    return skip_plain_bytes(base, start, count, non_ascii_is_plain);
}

int wl_byte_scan_use_avx2(int use) {
    (void)use;
    return 0;
}

#endif
