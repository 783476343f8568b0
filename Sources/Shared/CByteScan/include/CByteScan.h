#ifndef WATCHLINK_CBYTESCAN_H
#define WATCHLINK_CBYTESCAN_H

#include <stddef.h>
#include <stdint.h>

/// Scans of long byte runs in the widest vectors the CPU has (AVX2 where it is, chosen once at
/// start; SSE2, which every x86-64 has, otherwise; eight-byte words elsewhere). Property-list
/// and JSON strings are mostly plain ASCII and can be long: these loops are most of what a
/// 16 KiB dictionary costs on the control path and at its receiver (docs/performance.md).

/// The index of the first byte of 0x80 or more in `bytes[0..<count]`, or `count`.
size_t wl_first_non_ascii(const uint8_t *bytes, size_t count);

/// The index of the first byte at or after `start` that a JSON string cannot hold as it is (a
/// quote, a backslash, a control character below 0x20 and, unless `non_ascii_is_plain`, a
/// byte of 0x80 or more), or `count`.
size_t wl_skip_plain(const uint8_t *base, size_t start, size_t count, int non_ascii_is_plain);

/// For tests of both paths: uses AVX2 if `use` and the CPU has it, else SSE2; returns whether
/// AVX2 was in use before. (x86-64 only; elsewhere it does nothing and returns 0.)
int wl_byte_scan_use_avx2(int use);

#endif
