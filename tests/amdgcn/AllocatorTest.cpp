// AllocatorTest.cpp: allocation, alignment, reuse by lifetime, and running out.
#include "AmdTestSupport.h"

#include <gtest/gtest.h>

namespace kiln::amdgcn {
namespace {

TEST(Allocator, FirstFitWithAlignment) {
    Allocator a(RegisterKind::Vector, 16, "gfx90a");
    Value const one = a.allocate(DataType::I32, 1, 1, "x");
    Value const pair = a.allocate(DataType::I64, 2, 2, "y");
    EXPECT_EQ(one.str(), "v0");
    EXPECT_EQ(pair.str(), "v[2:3]");
    Value const next = a.allocate(DataType::I32, 1, 1, "z");
    EXPECT_EQ(next.str(), "v1"); // the hole left by alignment is used
    EXPECT_EQ(a.highWater(), 4);
    EXPECT_EQ(a.inUse(), 4);
}

TEST(Allocator, RegistersComeBackWhenTheLastValueGoes) {
    Allocator a(RegisterKind::Scalar, 8, "gfx942");
    {
        Value const x = a.allocate(DataType::I32, 4, 4, "x");
        Value const part = x.sub(2);
        EXPECT_EQ(part.str(), "s2");
        Value const keep = part;
        (void)keep;
    }
    EXPECT_EQ(a.inUse(), 0);
    EXPECT_EQ(a.allocate(DataType::I32, 1, 1, "again").str(), "s0");
    EXPECT_EQ(a.highWater(), 4);
}

TEST(Allocator, ASubrangeKeepsTheWholeAllocationAlive) {
    Allocator a(RegisterKind::Vector, 8, "gfx90a");
    Value part;
    {
        Value const x = a.allocate(DataType::I32, 4, 1, "x");
        part = x.sub(3);
    }
    EXPECT_EQ(a.inUse(), 4);
    part = Value();
    EXPECT_EQ(a.inUse(), 0);
}

TEST(Allocator, ReservedRegistersStay) {
    Allocator a(RegisterKind::Scalar, 8, "gfx90a");
    Value const kernarg = a.reserve(0, 2, DataType::I64);
    EXPECT_EQ(kernarg.str(), "s[0:1]");
    EXPECT_EQ(a.allocate(DataType::I32, 1, 1, "x").str(), "s2");
}

TEST(Allocator, RunningOutSaysWhatAndWhere) {
    Allocator a(RegisterKind::Vector, 8, "gfx90a");
    Value const big = a.allocate(DataType::I32, 7, 1, "a tile");
    try {
        a.allocate(DataType::I64, 2, 2, "the accumulator");
        FAIL() << "expected OutOfRegisters";
    } catch (OutOfRegisters const& e) {
        EXPECT_EQ(std::string(e.what()),
                  "error: out of VGPRs on gfx90a: the accumulator needs 2 register(s) aligned to "
                  "2, but 7 of the 8 are in use (largest free run: 1); use a smaller tile or "
                  "fewer values in flight");
    }
}

TEST(Allocator, ContextAlignsTuplesAsTheTargetNeeds) {
    Context cdna = test::makeContext("gfx90a");
    Value const one = cdna.allocateVector(DataType::I32, 1, "x");
    EXPECT_EQ(cdna.allocateVector(DataType::I64, 2, "y").str(), "v[2:3]");
    Context rdna = test::makeContext("gfx1100");
    Value const first = rdna.allocateVector(DataType::I32, 1, "x");
    EXPECT_EQ(rdna.allocateVector(DataType::I64, 2, "y").str(), "v[1:2]");
    EXPECT_EQ(rdna.allocateMask("m").str(), "s0"); // wave32: one SGPR
    Value const mask = cdna.allocateMask("m");
    EXPECT_EQ(mask.str(), "s[0:1]");
    EXPECT_EQ(cdna.allocateScalar(DataType::I32, 4, "d").str(), "s[4:7]");
}

TEST(Register, Spelling) {
    EXPECT_EQ(Value::literal(64).str(), "64");
    EXPECT_EQ(Value::literal(65).str(), "0x41");
    EXPECT_EQ(Value::literal(-16).str(), "-16");
    EXPECT_EQ(Value::literal(-17).str(), "0xffffffef");
    EXPECT_EQ(Value::literalF32(1.0f).str(), "1.0");
    EXPECT_EQ(Value::literalF32(-4.0f).str(), "-4.0");
    EXPECT_EQ(Value::literalF32(3.0f).str(), "0x40400000");
    EXPECT_TRUE(Value::literalF32(0.5f).isInlineConstant());
    EXPECT_FALSE(Value::literalF32(3.0f).isInlineConstant());
    EXPECT_EQ(Value::special(Special::Vcc).str(), "vcc");
    EXPECT_EQ(Value::physical(RegisterKind::Accumulator, 4, 4).str(), "a[4:7]");
    EXPECT_EQ(Value::physical(RegisterKind::Vector, 2, 2).negated().str(), "-v[2:3]");
}

} // namespace
} // namespace kiln::amdgcn
