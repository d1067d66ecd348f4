// HazardTest.cpp: the nops the hazard observer inserts, on hand-built streams.
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

Instruction valuWritesSgpr() {
    return Instruction::op("v_readfirstlane_b32", {s(4)}, {v(1)});
}
Instruction vmemReadsSgpr() {
    return Instruction::op("global_load_dword", {v(3)}, {v(2), s(4, 2)});
}
Instruction independentValu(int r) {
    return Instruction::op("v_mov_b32", {v(r)}, {Value::literal(0)});
}

TEST(Hazard, ValuWriteSgprThenVmemReadNeedsFive) {
    for (std::string target : {"gfx90a", "gfx942"}) {
        Context c = test::makeContext(target);
        c.schedule(valuWritesSgpr());
        std::vector<std::string> rules;
        EXPECT_EQ(c.hazards().needed(vmemReadsSgpr(), &rules), 5) << target;
        EXPECT_EQ(rules, std::vector<std::string>{"valu-sgpr-vmem"});
        c.schedule(vmemReadsSgpr());
        EXPECT_EQ(c.scheduled().back().nopsBefore(), 5);
        EXPECT_EQ(c.scheduled().back().str(), "s_nop 4\nglobal_load_dword v3, v2, s[4:5]");
    }
}

TEST(Hazard, IndependentInstructionsCountAsWaitStates) {
    Context c = test::makeContext("gfx90a");
    c.schedule(valuWritesSgpr());
    c.schedule(independentValu(10));
    c.schedule(independentValu(11));
    EXPECT_EQ(c.hazards().needed(vmemReadsSgpr()), 3);
    c.schedule(Instruction::nop(3));
    EXPECT_EQ(c.hazards().needed(vmemReadsSgpr()), 0);
}

TEST(Hazard, OtherSgprIsNoHazard) {
    Context c = test::makeContext("gfx90a");
    c.schedule(valuWritesSgpr());
    EXPECT_EQ(c.hazards().needed(Instruction::op("global_load_dword", {v(3)}, {v(2), s(6, 2)})), 0);
}

TEST(Hazard, VccWriteThenDivFmasNeedsFour) {
    Context c = test::makeContext("gfx90a");
    Value const vcc = Value::special(Special::Vcc);
    c.schedule(Instruction::op("v_div_scale_f32", {v(1), vcc}, {v(2), v(3), v(2)}));
    c.schedule(independentValu(9));
    Instruction fmas = Instruction::op("v_div_fmas_f32", {v(4)}, {v(5), v(6), v(7)});
    fmas.readsImplicitly(vcc);
    EXPECT_EQ(c.hazards().needed(fmas), 3);
}

TEST(Hazard, M0WriteThenLdsDmaNeedsOne) {
    Context c = test::makeContext("gfx90a");
    Value const m0 = Value::special(Special::M0, DataType::I32);
    c.schedule(Instruction::op("s_mov_b32", {m0}, {s(8)}));
    Instruction dma = Instruction::op("buffer_load_dword", {}, {v(1), s(12, 4), Value::literal(0)},
                                      {"offen", "lds"});
    dma.readsImplicitly(m0);
    EXPECT_EQ(c.hazards().needed(dma), 1);
}

TEST(Hazard, WideStoreDataOverwrittenByValu) {
    Instruction store = Instruction::op("global_store_dwordx4", {}, {v(0), v(4, 4), s(2, 2)});
    Instruction overwrite = Instruction::op("v_mov_b32", {v(5)}, {Value::literal(1)});
    Context a = test::makeContext("gfx90a");
    a.schedule(store);
    EXPECT_EQ(a.hazards().needed(overwrite), 1);
    Context b = test::makeContext("gfx942");
    b.schedule(store);
    EXPECT_EQ(b.hazards().needed(overwrite), 2);
    // Eight bytes of data do not have the hazard.
    Context c = test::makeContext("gfx90a");
    c.schedule(Instruction::op("global_store_dwordx2", {}, {v(0), v(4, 2), s(2, 2)}));
    EXPECT_EQ(c.hazards().needed(overwrite), 0);
}

TEST(Hazard, TransThenValuOnlyOnGfx942) {
    Instruction exp = Instruction::op("v_exp_f32", {v(1)}, {v(2)});
    Instruction add = Instruction::op("v_add_f32", {v(3)}, {v(1), v(1)});
    Context a = test::makeContext("gfx90a");
    a.schedule(exp);
    EXPECT_EQ(a.hazards().needed(add), 0);
    Context b = test::makeContext("gfx942");
    b.schedule(exp);
    EXPECT_EQ(b.hazards().needed(add), 1);
}

TEST(Hazard, ValuWriteSgprThenValuReadOnlyOnGfx942) {
    Instruction read = Instruction::op("v_add_f32", {v(3)}, {s(4), v(1)});
    Context a = test::makeContext("gfx90a");
    a.schedule(valuWritesSgpr());
    EXPECT_EQ(a.hazards().needed(read), 0);
    Context b = test::makeContext("gfx942");
    b.schedule(valuWritesSgpr());
    EXPECT_EQ(b.hazards().needed(read), 2);
}

TEST(Hazard, ValuWriteThenMfmaReadNeedsTwo) {
    Context c = test::makeContext("gfx90a");
    c.schedule(Instruction::op("v_mov_b32", {v(1)}, {Value::literal(0)}));
    EXPECT_EQ(c.hazards().needed(Instruction::op(
                  "v_mfma_f32_32x32x2f32", {Value::physical(RegisterKind::Accumulator, 0, 16)},
                  {v(1), v(2), Value::physical(RegisterKind::Accumulator, 0, 16)})),
              2);
}

TEST(Hazard, Gfx1100HasNoSoftwareWaitStates) {
    Context c = test::makeContext("gfx1100");
    c.schedule(valuWritesSgpr());
    EXPECT_EQ(c.hazards().needed(vmemReadsSgpr()), 0);
    EXPECT_TRUE(hazardRules(Target::named("gfx1100")).empty());
}

TEST(Hazard, EveryRuleCitesTheIsaDocument) {
    for (std::string target : {"gfx90a", "gfx942"})
        for (HazardRule const& rule : hazardRules(Target::named(target)))
            EXPECT_NE(rule.citation.find("ISA"), std::string::npos) << rule.name;
}

} // namespace
} // namespace kiln::amdgcn
