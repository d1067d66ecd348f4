// SchedulerTest.cpp: interleaving streams; cost from the observers; determinism per seed.
#include "AmdTestSupport.h"

#include <gtest/gtest.h>

namespace kiln::amdgcn {
namespace {

Value v(int r, int n = 1) {
    return Value::physical(RegisterKind::Vector, r, n);
}

/// A load into `dst`, then two uses of it.
Stream loadAndUse(int dst) {
    return {
        Instruction::op("global_load_dword", {v(dst)}, {v(40, 2), Value::special(Special::Off)}),
        Instruction::op("v_add_f32", {v(dst + 10)}, {v(dst), v(dst)}),
        Instruction::op("v_mul_f32", {v(dst + 20)}, {v(dst + 10), v(dst)})};
}

std::vector<std::string> mnemonics(Context const& c) {
    std::vector<std::string> out;
    for (Instruction const& i : c.scheduled())
        out.push_back(i.bare());
    return out;
}

TEST(Scheduler, SequentialAndRoundRobin) {
    Context seq = test::makeContext("gfx90a");
    scheduleStreams(seq, {loadAndUse(1), loadAndUse(2)}, SchedulerKind::Sequential);
    EXPECT_EQ(seq.scheduled()[1].bare(), "v_add_f32 v11, v1, v1");
    Context rr = test::makeContext("gfx90a");
    scheduleStreams(rr, {loadAndUse(1), loadAndUse(2)}, SchedulerKind::RoundRobin);
    EXPECT_EQ(rr.scheduled()[1].bare(), "global_load_dword v2, v[40:41], off");
    // Round-robin waits for the first load while the second is in flight: a partial count.
    EXPECT_EQ(rr.scheduled()[2].waitBefore(), (WaitCount{.vmcnt = 1}));
}

TEST(Scheduler, CostBasedIssuesBothLoadsBeforeWaiting) {
    Context c = test::makeContext("gfx90a");
    scheduleStreams(c, {loadAndUse(1), loadAndUse(2), loadAndUse(3)}, SchedulerKind::Cost);
    std::vector<std::string> const got = mnemonics(c);
    for (int k = 0; k < 3; ++k)
        EXPECT_TRUE(got[static_cast<std::size_t>(k)].starts_with("global_load_dword")) << got[k];
    EXPECT_EQ(c.scheduled()[3].waitBefore(), (WaitCount{.vmcnt = 2}));
}

TEST(Scheduler, LockedSequencesAreNotInterleaved) {
    Stream locked = {Instruction::op("s_add_u32", {Value::physical(RegisterKind::Scalar, 4)},
                                     {Value::literal(1), Value::literal(2)}),
                     Instruction::op("s_addc_u32", {Value::physical(RegisterKind::Scalar, 5)},
                                     {Value::literal(0), Value::literal(0)})};
    locked[0].beginsLock();
    locked[1].endsLock();
    Context c = test::makeContext("gfx90a");
    scheduleStreams(c, {locked, loadAndUse(1)}, SchedulerKind::RoundRobin);
    EXPECT_EQ(c.scheduled()[0].mnemonic(), "s_add_u32");
    EXPECT_EQ(c.scheduled()[1].mnemonic(), "s_addc_u32");
}

TEST(Scheduler, SameSeedSameKernelAcrossRuns) {
    auto build = [](SchedulerKind kind, std::uint64_t seed) {
        return test::elementwiseKernel(
                   "gfx942", "sched", DataType::F32, [](ExprPtr a, ExprPtr b) { return a * b + a; },
                   4, kind, seed)
            .assembly;
    };
    for (SchedulerKind kind : {SchedulerKind::Random, SchedulerKind::Cost}) {
        EXPECT_EQ(build(kind, 7), build(kind, 7)) << name(kind);
    }
    EXPECT_NE(build(SchedulerKind::Random, 1), build(SchedulerKind::Random, 2));
}

TEST(Scheduler, Names) {
    EXPECT_EQ(parseScheduler("round-robin"), SchedulerKind::RoundRobin);
    EXPECT_THROW(parseScheduler("greedy"), UserError);
}

} // namespace
} // namespace kiln::amdgcn
