// WaitcntTest.cpp: wait counts on hand-built instruction streams with known answers.
#include "AmdTestSupport.h"

#include <gtest/gtest.h>

namespace kiln::amdgcn {
namespace {

Value v(int r, int n = 1) {
    return Value::physical(RegisterKind::Vector, r, n);
}
Value s(int r, int n = 1) {
    return Value::physical(RegisterKind::Scalar, r, n);
}
Instruction load(int dst, int bytes = 4) {
    return Instruction::op(bytes == 4 ? "global_load_dword" : "global_load_dwordx4",
                           {v(dst, bytes / 4)}, {v(40, 2), Value::special(Special::Off)});
}
Instruction use(int r) {
    return Instruction::op("v_add_f32", {v(60)}, {v(r), v(r)});
}

TEST(Waitcnt, PartialWaitForTheOldestOfThreeLoads) {
    Context c = test::makeContext("gfx90a");
    c.schedule(load(1));
    c.schedule(load(2));
    c.schedule(load(3));
    Instruction const first = use(1);
    EXPECT_EQ(c.waitcnt().needed(first), (WaitCount{.vmcnt = 2}));
    c.schedule(first);
    EXPECT_EQ(c.scheduled().back().str(), "s_waitcnt vmcnt(2)\nv_add_f32 v60, v1, v1");
    // After vmcnt(2) two loads remain; the youngest needs all of them.
    EXPECT_EQ(c.waitcnt().outstanding(Counter::Vm), 2);
    EXPECT_EQ(c.waitcnt().needed(use(3)), (WaitCount{.vmcnt = 0}));
    EXPECT_EQ(c.waitcnt().needed(use(2)), (WaitCount{.vmcnt = 1}));
}

TEST(Waitcnt, NoWaitForRegistersNoLoadWrites) {
    Context c = test::makeContext("gfx942");
    c.schedule(load(1));
    EXPECT_TRUE(c.waitcnt().needed(use(7)).empty());
}

TEST(Waitcnt, WideLoadCoversItsWholeRange) {
    Context c = test::makeContext("gfx90a");
    c.schedule(load(4, 16)); // v[4:7]
    c.schedule(load(1));
    EXPECT_EQ(c.waitcnt().needed(use(6)), (WaitCount{.vmcnt = 1}));
}

TEST(Waitcnt, StoresCountWithLoadsOnCdnaAndApartOnGfx11) {
    Instruction const store =
        Instruction::op("global_store_dword", {}, {v(40, 2), v(9), Value::special(Special::Off)});
    Context cdna = test::makeContext("gfx90a");
    cdna.schedule(load(1));
    cdna.schedule(load(2));
    cdna.schedule(store);
    EXPECT_EQ(cdna.waitcnt().needed(use(2)), (WaitCount{.vmcnt = 1}));

    Context rdna = test::makeContext("gfx1100");
    rdna.schedule(
        Instruction::op("global_load_b32", {v(1)}, {v(40, 2), Value::special(Special::Off)}));
    rdna.schedule(
        Instruction::op("global_load_b32", {v(2)}, {v(40, 2), Value::special(Special::Off)}));
    rdna.schedule(
        Instruction::op("global_store_b32", {}, {v(40, 2), v(9), Value::special(Special::Off)}));
    EXPECT_EQ(rdna.waitcnt().needed(use(2)), (WaitCount{.vmcnt = 0}));
    EXPECT_EQ(rdna.waitcnt().outstanding(Counter::Vs), 1);
}

TEST(Waitcnt, ScalarLoadsReturnOutOfOrderSoWaitForZero) {
    Context c = test::makeContext("gfx90a");
    c.schedule(Instruction::op("s_load_dword", {s(4)}, {s(0, 2), Value::literal(0)}));
    c.schedule(Instruction::op("s_load_dword", {s(5)}, {s(0, 2), Value::literal(4)}));
    EXPECT_EQ(c.waitcnt().needed(Instruction::op("s_mov_b32", {s(6)}, {s(4)})),
              (WaitCount{.lgkmcnt = 0}));
}

TEST(Waitcnt, LdsReadsAreInOrder) {
    Context c = test::makeContext("gfx942");
    c.schedule(Instruction::op("ds_read_b32", {v(1)}, {v(30)}));
    c.schedule(Instruction::op("ds_read_b32", {v(2)}, {v(31)}));
    c.schedule(Instruction::op("ds_read_b32", {v(3)}, {v(32)}));
    EXPECT_EQ(c.waitcnt().needed(use(1)), (WaitCount{.lgkmcnt = 2}));
    EXPECT_EQ(c.waitcnt().needed(use(2)), (WaitCount{.lgkmcnt = 1}));
}

TEST(Waitcnt, BarrierWaitsForLdsWritesAndStores) {
    Context c = test::makeContext("gfx90a");
    c.schedule(load(1));
    c.schedule(Instruction::op("ds_write_b32", {}, {v(30), v(5)}));
    c.schedule(
        Instruction::op("global_store_dword", {}, {v(40, 2), v(6), Value::special(Special::Off)}));
    c.schedule(load(2));
    // The store is the second youngest vector memory operation: vmcnt(1) lets the load run on.
    EXPECT_EQ(c.waitcnt().needed(Instruction::op("s_barrier", {}, {})),
              (WaitCount{.vmcnt = 1, .lgkmcnt = 0}));
}

TEST(Waitcnt, OverwritingAPendingLoadDestinationWaits) {
    Context c = test::makeContext("gfx90a");
    c.schedule(load(1));
    c.schedule(load(2));
    EXPECT_EQ(c.waitcnt().needed(Instruction::op("v_mov_b32", {v(1)}, {Value::literal(0)})),
              (WaitCount{.vmcnt = 1}));
}

TEST(Waitcnt, CounterMaximumFromArchDb) {
    Context c = test::makeContext("gfx90a");
    EXPECT_EQ(c.waitcnt().maximum(Counter::Vm), 63);
    EXPECT_EQ(c.waitcnt().maximum(Counter::Lgkm), 15);
    EXPECT_EQ(c.waitcnt().maximum(Counter::Vs), 0);
    // 70 loads: the hardware holds at most 63 outstanding, so the first 7 are complete.
    for (int k = 0; k < 70; ++k)
        c.schedule(load(100 + k));
    EXPECT_EQ(c.waitcnt().outstanding(Counter::Vm), 63);
    EXPECT_TRUE(c.waitcnt().needed(use(100)).empty());
    EXPECT_EQ(c.waitcnt().needed(use(110)), (WaitCount{.vmcnt = 59}));
}

TEST(Waitcnt, ExplicitWaitIsApplied) {
    Context c = test::makeContext("gfx90a");
    c.schedule(load(1));
    c.schedule(load(2));
    c.schedule(Instruction::wait({.vmcnt = 0}));
    EXPECT_EQ(c.waitcnt().outstanding(Counter::Vm), 0);
    EXPECT_TRUE(c.waitcnt().needed(use(1)).empty());
}

TEST(Waitcnt, Gfx11PrintsTheStoreCounterSeparately) {
    Instruction i = Instruction::op("s_endpgm", {}, {});
    i.addWait({.vmcnt = 1, .lgkmcnt = 0, .vscnt = 0});
    EXPECT_EQ(i.str(), "s_waitcnt vmcnt(1) lgkmcnt(0)\ns_waitcnt_vscnt null, 0x0\ns_endpgm");
}

} // namespace
} // namespace kiln::amdgcn
