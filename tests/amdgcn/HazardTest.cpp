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

// MFMA dependencies (CDNA 2/3 ISA §7.6, "Required Independent Instructions"): the wait states
// follow the first MFMA's passes, 16x16x16 f16 taking 8 on gfx90a and 4 on gfx942 (an XDL op).
Value a(int r, int n = 1) {
    return Value::physical(RegisterKind::Accumulator, r, n);
}
std::string mfma16(std::string const& target) {
    return target == "gfx942" ? "v_mfma_f32_16x16x16_f16" : "v_mfma_f32_16x16x16f16";
}
Instruction mfma(std::string const& target, Value const& d, Value const& c,
                 Value const& srcA = v(20, 2)) {
    return Instruction::op(mfma16(target), {d}, {srcA, v(22, 2), c});
}

TEST(Hazard, MfmaPassesComeFromArchDb) {
    EXPECT_EQ(mfmaPasses(Target::named("gfx90a"), mfma("gfx90a", v(0, 4), v(0, 4))), 8);
    EXPECT_EQ(mfmaPasses(Target::named("gfx942"), mfma("gfx942", v(0, 4), v(0, 4))), 4);
    Instruction const big =
        Instruction::op("v_mfma_f32_32x32x8f16", {v(0, 16)}, {v(20, 2), v(22, 2), v(0, 16)});
    EXPECT_EQ(mfmaPasses(Target::named("gfx90a"), big), 16);
    Instruction const big942 =
        Instruction::op("v_mfma_f32_32x32x8_f16", {v(0, 16)}, {v(20, 2), v(22, 2), v(0, 16)});
    EXPECT_EQ(mfmaPasses(Target::named("gfx942"), big942), 8);
    EXPECT_EQ(mfmaPasses(Target::named("gfx942"), independentValu(1)), 0);
}

TEST(Hazard, MfmaResultThenValuRead) {
    Instruction const add = Instruction::op("v_add_f32", {v(30)}, {v(2), v(31)});
    for (auto [target, states] : {std::pair{"gfx90a", 11}, {"gfx942", 7}}) {
        Context c = test::makeContext(target);
        c.schedule(mfma(target, v(0, 4), v(0, 4)));
        std::vector<std::string> rules;
        EXPECT_EQ(c.hazards().needed(add, &rules), states) << target;
        EXPECT_EQ(rules, std::vector<std::string>{"mfma-valu-read"}) << target;
    }
    // Three independent instructions already count: fewer nops than the maximum.
    Context c = test::makeContext("gfx90a");
    c.schedule(mfma("gfx90a", v(0, 4), v(0, 4)));
    for (int r = 40; r < 43; ++r)
        c.schedule(independentValu(r));
    EXPECT_EQ(c.hazards().needed(add), 8);
    c.schedule(add);
    EXPECT_EQ(c.scheduled().back().nopsBefore(), 8);
    EXPECT_EQ(c.scheduled().back().str(), "s_nop 7\nv_add_f32 v30, v2, v31");
    // Another register is no hazard.
    Context d = test::makeContext("gfx90a");
    d.schedule(mfma("gfx90a", v(0, 4), v(0, 4)));
    EXPECT_EQ(d.hazards().needed(Instruction::op("v_add_f32", {v(30)}, {v(4), v(31)})), 0);
}

TEST(Hazard, LargerMfmaNeedsMore) {
    Instruction const read = Instruction::op("v_mov_b32", {v(30)}, {v(15)});
    Context a = test::makeContext("gfx90a");
    a.schedule(
        Instruction::op("v_mfma_f32_32x32x8f16", {v(0, 16)}, {v(20, 2), v(22, 2), v(0, 16)}));
    EXPECT_EQ(a.hazards().needed(read), 19);
    Context b = test::makeContext("gfx942");
    b.schedule(
        Instruction::op("v_mfma_f32_32x32x8_f16", {v(0, 16)}, {v(20, 2), v(22, 2), v(0, 16)}));
    EXPECT_EQ(b.hazards().needed(read), 11);
}

TEST(Hazard, MfmaAccumulatingIntoTheSameRegistersNeedsNothing) {
    for (std::string target : {"gfx90a", "gfx942"}) {
        Context c = test::makeContext(target);
        c.schedule(mfma(target, v(0, 4), v(0, 4)));
        EXPECT_EQ(c.hazards().needed(mfma(target, v(0, 4), v(0, 4), v(24, 2))), 0) << target;
    }
}

TEST(Hazard, MfmaSrcCOverlappingAnotherResult) {
    for (auto [target, states] : {std::pair{"gfx90a", 8}, {"gfx942", 5}}) {
        Context c = test::makeContext(target);
        c.schedule(mfma(target, v(0, 4), v(0, 4)));
        std::vector<std::string> rules;
        EXPECT_EQ(c.hazards().needed(mfma(target, v(8, 4), v(2, 4)), &rules), states) << target;
        EXPECT_EQ(rules, std::vector<std::string>{"mfma-srcc-overlap"}) << target;
    }
}

TEST(Hazard, MfmaResultThenMfmaSrcA) {
    for (auto [target, states] : {std::pair{"gfx90a", 11}, {"gfx942", 7}}) {
        Context c = test::makeContext(target);
        c.schedule(mfma(target, v(0, 4), v(0, 4)));
        std::vector<std::string> rules;
        EXPECT_EQ(c.hazards().needed(mfma(target, v(8, 4), v(8, 4), v(2, 2)), &rules), states)
            << target;
        EXPECT_EQ(rules, std::vector<std::string>{"mfma-srcab"}) << target;
    }
}

TEST(Hazard, AccvgprReadAfterMfma) {
    Instruction const read = Instruction::op("v_accvgpr_read_b32", {v(30)}, {a(3)});
    for (auto [target, states] : {std::pair{"gfx90a", 11}, {"gfx942", 7}}) {
        Context c = test::makeContext(target);
        c.schedule(mfma(target, a(0, 4), a(0, 4)));
        c.schedule(independentValu(40));
        EXPECT_EQ(c.hazards().needed(read), states - 1) << target;
    }
}

TEST(Hazard, WriteOfAnMfmaResultOrSrcC) {
    // WAW: an LDS read into a register an MFMA still writes.
    Instruction const lds = Instruction::op("ds_read_b32", {v(1)}, {v(40)});
    for (auto [target, states] : {std::pair{"gfx90a", 11}, {"gfx942", 7}}) {
        Context c = test::makeContext(target);
        c.schedule(mfma(target, v(0, 4), v(8, 4)));
        std::vector<std::string> rules;
        EXPECT_EQ(c.hazards().needed(lds, &rules), states) << target;
        EXPECT_EQ(rules, std::vector<std::string>{"mfma-valu-write"}) << target;
    }
    // WAR: a VALU write of a register an MFMA reads as SrcC (its result in AGPRs).
    for (auto [target, states] : {std::pair{"gfx90a", 7}, {"gfx942", 3}}) {
        Context c = test::makeContext(target);
        c.schedule(mfma(target, a(0, 4), v(4, 4)));
        std::vector<std::string> rules;
        EXPECT_EQ(c.hazards().needed(independentValu(5), &rules), states) << target;
        EXPECT_EQ(rules, std::vector<std::string>{"mfma-srcc-war"}) << target;
    }
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
