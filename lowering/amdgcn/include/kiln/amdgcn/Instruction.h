// Instruction.h: one line (or a few) of AMDGCN assembly, as Kiln builds and schedules it.
//
// An Instruction is an operation (mnemonic, destinations, sources, modifiers, comment), or one of
// the other forms a kernel's text holds: a wait (s_waitcnt), a nop (s_nop), a label, an assembler
// directive or a comment. Observers attach a wait and nops to an operation when it is scheduled;
// they print before it. Destinations are what the instruction writes and sources what it reads,
// which is all the observers need; registers read or written without being spelt (vcc of
// v_div_fmas, m0 of an LDS DMA) are listed as implicit.
#pragma once

#include "kiln/amdgcn/Register.h"

#include <optional>
#include <string>
#include <vector>

namespace kiln::amdgcn {

/// How far each AMD wait counter must drop before the next instruction issues; an empty field
/// does not wait on that counter.
struct WaitCount {
    std::optional<int> vmcnt, lgkmcnt, expcnt, vscnt;

    /// Whether it waits on nothing.
    bool empty() const { return !vmcnt && !lgkmcnt && !expcnt && !vscnt; }
    /// The stricter of the two on every counter.
    WaitCount combine(WaitCount const& other) const;
    /// "vmcnt(1) lgkmcnt(0)" (without the mnemonic).
    std::string str() const;
    bool operator==(WaitCount const&) const = default;
};

/// What unit executes an instruction; decides counters and hazards.
enum class InstructionClass : std::uint8_t {
    Salu,      ///< scalar ALU (s_add_u32, s_mov_b32, s_cmp, ...)
    Smem,      ///< scalar memory (s_load_*), lgkmcnt, may return out of order
    Valu,      ///< vector ALU
    Trans,     ///< transcendental VALU (v_exp, v_log, v_rcp, v_sqrt, ...)
    Mfma,      ///< matrix (v_mfma_*, v_wmma_*)
    VmemLoad,  ///< global/buffer loads: vmcnt
    VmemStore, ///< global/buffer stores: vmcnt (GFX9) or vscnt (GFX10+)
    LdsDma,    ///< buffer_load ... lds: memory to LDS at M0, vmcnt
    LdsLoad,   ///< ds_read: lgkmcnt, in order with other LDS operations
    LdsStore,  ///< ds_write: lgkmcnt
    Barrier,   ///< s_barrier
    Branch,    ///< s_branch, s_cbranch_*
    Program,   ///< s_endpgm and other SOPP control
    Wait,      ///< s_waitcnt, s_waitcnt_vscnt
    Nop,       ///< s_nop
    Other,     ///< labels, directives, comments
};

/// The class of a mnemonic.
InstructionClass classify(std::string_view mnemonic);
/// Whether the class is a VALU of any kind (Valu, Trans, Mfma).
bool isVector(InstructionClass c);

class Instruction {
public:
    enum class Form : std::uint8_t { Operation, Wait, Nop, Label, Directive, Comment };

    /// An operation.
    static Instruction op(std::string mnemonic, std::vector<Value> dsts, std::vector<Value> srcs,
                          std::vector<std::string> modifiers = {}, std::string comment = {});
    /// An explicit s_waitcnt.
    static Instruction wait(WaitCount count, std::string comment = {});
    /// `s_nop count-1`: `count` wait states (1 to 16 per s_nop; more print several).
    static Instruction nop(int count, std::string comment = {});
    static Instruction label(std::string name);
    static Instruction directive(std::string text);
    static Instruction comment(std::string text);

    Form form() const { return form_; }
    std::string const& mnemonic() const { return mnemonic_; }
    InstructionClass instructionClass() const { return class_; }
    std::vector<Value> const& dsts() const { return dsts_; }
    std::vector<Value> const& srcs() const { return srcs_; }
    std::vector<std::string> const& modifiers() const { return modifiers_; }
    std::string const& commentText() const { return comment_; }

    /// Registers read without being spelt (vcc of v_div_fmas, m0 of an LDS DMA, exec).
    Instruction& readsImplicitly(Value v);
    /// Registers written without being spelt.
    Instruction& writesImplicitly(Value v);
    std::vector<Value> const& implicitReads() const { return implicitReads_; }
    std::vector<Value> const& implicitWrites() const { return implicitWrites_; }
    /// Every register read / written, spelt or implicit.
    std::vector<PhysicalRegister> reads() const;
    std::vector<PhysicalRegister> writes() const;

    /// The count of an explicit wait (Form::Wait).
    WaitCount const& waitCount() const { return ownWait_; }
    /// The wait attached in front of the instruction (observers add to it).
    WaitCount const& waitBefore() const { return waitBefore_; }
    void addWait(WaitCount const& w) { waitBefore_ = waitBefore_.combine(w); }
    /// The wait states (s_nop) attached in front of it.
    int nopsBefore() const { return nopsBefore_; }
    void addNops(int n) { nopsBefore_ = std::max(nopsBefore_, n); }
    /// Wait states this instruction itself takes (1, or N for s_nop N-1; 0 for non-code).
    int waitStates() const;
    /// An upper bound of the bytes its text encodes to, attached waits and nops included: 12 for
    /// a vector operation (VOP3 or VOP3P with a literal on GFX10+), 8 for any other operation
    /// (a scalar one with a literal, or SMEM, VMEM, LDS), 4 for each s_waitcnt or s_nop line, 0
    /// for labels, directives and comments. Branch relaxation lays the kernel out with it.
    int maxBytes() const;

    /// Starts a sequence no scheduler may interleave with other streams (it uses vcc, scc or
    /// exec), ended by the instruction marked with endsLock().
    Instruction& beginsLock() {
        lock_ |= 1;
        return *this;
    }
    Instruction& endsLock() {
        lock_ |= 2;
        return *this;
    }
    bool locks() const { return lock_ & 1; }
    bool unlocks() const { return lock_ & 2; }

    /// The same instruction with every register released to its physical name (what the
    /// scheduled kernel keeps, so that streams give their registers back).
    Instruction released() const;

    /// The text: attached waits and nops, then the instruction, one line each (no newline at
    /// the end). `vscnt` says whether the target has a separate store counter.
    std::string str() const;
    /// The instruction alone, without attached waits and nops or comment.
    std::string bare() const;

private:
    Form form_ = Form::Operation;
    InstructionClass class_ = InstructionClass::Other;
    std::string mnemonic_;
    std::vector<Value> dsts_, srcs_;
    std::vector<std::string> modifiers_;
    std::string comment_;
    std::vector<Value> implicitReads_, implicitWrites_;
    WaitCount waitBefore_;
    WaitCount ownWait_; // the Wait form's count
    int nopsBefore_ = 0;
    int ownNops_ = 0; // the Nop form's count
    int lock_ = 0;
};

} // namespace kiln::amdgcn
