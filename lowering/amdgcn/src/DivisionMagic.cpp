// DivisionMagic.cpp: Hacker's Delight, figure 10-1 (magic), for 32 and 64 bits.
#include "kiln/amdgcn/DivisionMagic.h"

#include "kiln/graph/Error.h"

namespace kiln::amdgcn {

namespace {
__extension__ typedef unsigned __int128 U128;
__extension__ typedef __int128 S128;
} // namespace

int powerOfTwo(std::int64_t divisor) {
    std::uint64_t const a =
        divisor < 0 ? std::uint64_t{0} - static_cast<std::uint64_t>(divisor) : divisor;
    if (a == 0 || (a & (a - 1)) != 0)
        return -1;
    int k = 0;
    while ((std::uint64_t{1} << k) != a)
        ++k;
    return k;
}

SignedMagic signedMagic(std::int64_t d, int bits) {
    KILN_ASSERT(bits == 32 || bits == 64, "bits {}", bits);
    KILN_ASSERT(d != 0 && d != 1 && d != -1 && powerOfTwo(d) < 0, "divisor {}", d);
    using U = U128;
    U const two = U{1} << (bits - 1);
    U const mask = (bits == 64) ? ~U{0} >> 64 : (U{1} << 32) - 1;
    U const ad = d < 0 ? U(std::uint64_t{0} - static_cast<std::uint64_t>(d)) : U(d);
    U const t = two + (static_cast<std::uint64_t>(d) >> 63);
    U const anc = t - 1 - (t % ad);
    int p = bits - 1;
    U q1 = two / anc, r1 = two - q1 * anc;
    U q2 = two / ad, r2 = two - q2 * ad;
    U delta;
    do {
        ++p;
        q1 = (2 * q1) & mask;
        r1 = (2 * r1) & mask;
        if (r1 >= anc) {
            q1 = (q1 + 1) & mask;
            r1 = (r1 - anc) & mask;
        }
        q2 = (2 * q2) & mask;
        r2 = (2 * r2) & mask;
        if (r2 >= ad) {
            q2 = (q2 + 1) & mask;
            r2 = (r2 - ad) & mask;
        }
        delta = ad - r2;
    } while (q1 < delta || (q1 == delta && r1 == 0));
    U m = (q2 + 1) & mask;
    // As a signed `bits`-bit number.
    std::int64_t multiplier = bits == 64 ? static_cast<std::int64_t>(static_cast<std::uint64_t>(m))
                                         : static_cast<std::int32_t>(static_cast<std::uint32_t>(m));
    if (d < 0)
        multiplier = bits == 64
                         ? static_cast<std::int64_t>(0 - static_cast<std::uint64_t>(multiplier))
                         : static_cast<std::int32_t>(0u - static_cast<std::uint32_t>(multiplier));
    SignedMagic magic;
    magic.multiplier = multiplier;
    magic.shift = p - bits;
    if (d > 0 && multiplier < 0)
        magic.addend = 1;
    if (d < 0 && multiplier > 0)
        magic.addend = -1;
    return magic;
}

std::int64_t evaluateSigned(std::int64_t n, SignedMagic const& magic, int bits) {
    using S = S128;
    if (bits == 32) {
        auto const n32 = static_cast<std::int32_t>(n);
        std::int32_t q = static_cast<std::int32_t>(
            (static_cast<std::int64_t>(n32) * static_cast<std::int32_t>(magic.multiplier)) >> 32);
        // In unsigned arithmetic, as the hardware wraps: n = INT32_MIN with addend -1 overflows.
        q = static_cast<std::int32_t>(static_cast<std::uint32_t>(q) +
                                      static_cast<std::uint32_t>(magic.addend) *
                                          static_cast<std::uint32_t>(n32));
        q >>= magic.shift;
        q += static_cast<std::int32_t>(static_cast<std::uint32_t>(q) >> 31);
        return q;
    }
    std::int64_t q = static_cast<std::int64_t>((S(n) * S(magic.multiplier)) >> 64);
    q = static_cast<std::int64_t>(static_cast<std::uint64_t>(q) +
                                  static_cast<std::uint64_t>(magic.addend) *
                                      static_cast<std::uint64_t>(n));
    q >>= magic.shift;
    q += static_cast<std::int64_t>(static_cast<std::uint64_t>(q) >> 63);
    return q;
}

} // namespace kiln::amdgcn
