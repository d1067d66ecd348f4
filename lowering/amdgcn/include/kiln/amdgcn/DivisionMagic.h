// DivisionMagic.h: integer division by a constant as a multiply-high and shifts.
//
// GPUs have no integer divider; dividing by a constant d becomes q = mulhi(n, M) (+ n or - n),
// shifted right, plus one when negative (Hacker's Delight, ch. 10, signed division with C's
// truncation). The constants are computed here, on the host, and the same formula is evaluated
// on the CPU by evaluateSigned() so that tests can check it against n / d for many n; the
// AMDGCN generator emits exactly these steps.
#pragma once

#include <cstdint>

namespace kiln::amdgcn {

/// q = (mulhs(n, multiplier) + addend * n) >> shift, then q += (q < 0).
struct SignedMagic {
    std::int64_t multiplier = 0;
    int shift = 0;
    int addend = 0; ///< +1: add n after the multiply, -1: subtract it, 0: neither
};

/// The constants for dividing `bits`-bit (32 or 64) signed integers by `divisor` (|d| >= 2,
/// not a power of two: those are shifts).
SignedMagic signedMagic(std::int64_t divisor, int bits);

/// n / d with the constants, as the generated code computes it (for tests).
std::int64_t evaluateSigned(std::int64_t n, SignedMagic const& magic, int bits);

/// log2(|d|) when |d| is a power of two, else -1.
int powerOfTwo(std::int64_t divisor);

} // namespace kiln::amdgcn
