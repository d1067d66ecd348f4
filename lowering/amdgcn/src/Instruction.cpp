// Instruction.cpp: forms, classification and printing of instructions.
#include "kiln/amdgcn/Instruction.h"

#include "kiln/graph/Error.h"

#include <algorithm>
#include <fmt/format.h>

namespace kiln::amdgcn {

namespace {
std::optional<int> stricter(std::optional<int> a, std::optional<int> b) {
    if (!a)
        return b;
    if (!b)
        return a;
    return std::min(*a, *b);
}

bool startsWith(std::string_view s, std::string_view prefix) {
    return s.substr(0, prefix.size()) == prefix;
}
bool contains(std::string_view s, std::string_view part) {
    return s.find(part) != std::string_view::npos;
}
} // namespace

WaitCount WaitCount::combine(WaitCount const& other) const {
    return {stricter(vmcnt, other.vmcnt), stricter(lgkmcnt, other.lgkmcnt),
            stricter(expcnt, other.expcnt), stricter(vscnt, other.vscnt)};
}

std::string WaitCount::str() const {
    std::string out;
    auto add = [&](char const* name, std::optional<int> v) {
        if (v)
            out += fmt::format("{}{}({})", out.empty() ? "" : " ", name, *v);
    };
    add("vmcnt", vmcnt);
    add("expcnt", expcnt);
    add("lgkmcnt", lgkmcnt);
    return out;
}

InstructionClass classify(std::string_view m) {
    if (m == "s_waitcnt" || m == "s_waitcnt_vscnt")
        return InstructionClass::Wait;
    if (m == "s_nop")
        return InstructionClass::Nop;
    if (m == "s_barrier")
        return InstructionClass::Barrier;
    if (startsWith(m, "s_branch") || startsWith(m, "s_cbranch"))
        return InstructionClass::Branch;
    if (m == "s_endpgm" || m == "s_sleep" || m == "s_setprio" || m == "s_sendmsg")
        return InstructionClass::Program;
    if (startsWith(m, "s_load") || startsWith(m, "s_buffer_load"))
        return InstructionClass::Smem;
    if (startsWith(m, "s_"))
        return InstructionClass::Salu;
    // An atomic that returns the value before (the only kind written) counts as a load.
    if (startsWith(m, "global_load") || startsWith(m, "buffer_load") ||
        startsWith(m, "flat_load") || startsWith(m, "global_atomic") ||
        startsWith(m, "buffer_atomic") || startsWith(m, "flat_atomic")) {
        return m.ends_with("_lds") ? InstructionClass::LdsDma : InstructionClass::VmemLoad;
    }
    if (startsWith(m, "global_store") || startsWith(m, "buffer_store") ||
        startsWith(m, "flat_store"))
        return InstructionClass::VmemStore;
    // The cross-lane exchanges return their data through the LDS pipeline (lgkmcnt).
    if (startsWith(m, "ds_read") || startsWith(m, "ds_load") || startsWith(m, "ds_swizzle") ||
        startsWith(m, "ds_bpermute") || startsWith(m, "ds_permute"))
        return InstructionClass::LdsLoad;
    if (startsWith(m, "ds_write") || startsWith(m, "ds_store"))
        return InstructionClass::LdsStore;
    if (startsWith(m, "v_mfma") || startsWith(m, "v_wmma"))
        return InstructionClass::Mfma;
    if (startsWith(m, "v_exp_") || startsWith(m, "v_log_") || startsWith(m, "v_rcp_") ||
        startsWith(m, "v_rsq_") || startsWith(m, "v_sqrt_") || startsWith(m, "v_sin_") ||
        startsWith(m, "v_cos_") || contains(m, "v_rcp_iflag"))
        return InstructionClass::Trans;
    if (startsWith(m, "v_"))
        return InstructionClass::Valu;
    return InstructionClass::Other;
}

bool isVector(InstructionClass c) {
    return c == InstructionClass::Valu || c == InstructionClass::Trans ||
           c == InstructionClass::Mfma;
}

Instruction Instruction::op(std::string mnemonic, std::vector<Value> dsts, std::vector<Value> srcs,
                            std::vector<std::string> modifiers, std::string comment) {
    Instruction i;
    i.form_ = Form::Operation;
    i.class_ = classify(mnemonic);
    // `buffer_load_dword ... lds` writes LDS at M0, not registers.
    if (i.class_ == InstructionClass::VmemLoad &&
        std::find(modifiers.begin(), modifiers.end(), "lds") != modifiers.end())
        i.class_ = InstructionClass::LdsDma;
    i.mnemonic_ = std::move(mnemonic);
    i.dsts_ = std::move(dsts);
    i.srcs_ = std::move(srcs);
    i.modifiers_ = std::move(modifiers);
    i.comment_ = std::move(comment);
    return i;
}

Instruction Instruction::wait(WaitCount count, std::string comment) {
    Instruction i;
    i.form_ = Form::Wait;
    i.class_ = InstructionClass::Wait;
    i.mnemonic_ = "s_waitcnt";
    i.ownWait_ = count;
    i.comment_ = std::move(comment);
    return i;
}

Instruction Instruction::nop(int count, std::string comment) {
    KILN_ASSERT(count >= 1, "s_nop of {} wait states", count);
    Instruction i;
    i.form_ = Form::Nop;
    i.class_ = InstructionClass::Nop;
    i.mnemonic_ = "s_nop";
    i.ownNops_ = count;
    i.comment_ = std::move(comment);
    return i;
}

Instruction Instruction::label(std::string name) {
    Instruction i;
    i.form_ = Form::Label;
    i.mnemonic_ = std::move(name);
    return i;
}

Instruction Instruction::directive(std::string text) {
    Instruction i;
    i.form_ = Form::Directive;
    i.mnemonic_ = std::move(text);
    return i;
}

Instruction Instruction::comment(std::string text) {
    Instruction i;
    i.form_ = Form::Comment;
    i.comment_ = std::move(text);
    return i;
}

Instruction& Instruction::readsImplicitly(Value v) {
    implicitReads_.push_back(std::move(v));
    return *this;
}

Instruction& Instruction::writesImplicitly(Value v) {
    implicitWrites_.push_back(std::move(v));
    return *this;
}

std::vector<PhysicalRegister> Instruction::reads() const {
    std::vector<PhysicalRegister> out;
    for (auto const* list : {&srcs_, &implicitReads_})
        for (Value const& v : *list)
            for (PhysicalRegister const& r : v.registers())
                out.push_back(r);
    return out;
}

std::vector<PhysicalRegister> Instruction::writes() const {
    std::vector<PhysicalRegister> out;
    for (auto const* list : {&dsts_, &implicitWrites_})
        for (Value const& v : *list)
            for (PhysicalRegister const& r : v.registers())
                out.push_back(r);
    return out;
}

int Instruction::waitStates() const {
    switch (form_) {
    case Form::Operation:
    case Form::Wait:
        return 1;
    case Form::Nop:
        return ownNops_;
    case Form::Label:
    case Form::Directive:
    case Form::Comment:
        return 0;
    }
    return 0;
}

Instruction Instruction::released() const {
    Instruction i = *this;
    for (auto* list : {&i.dsts_, &i.srcs_, &i.implicitReads_, &i.implicitWrites_})
        for (Value& v : *list)
            v = v.released();
    return i;
}

namespace {
void waitLines(std::string& out, WaitCount const& w) {
    std::string const counters = w.str();
    if (!counters.empty())
        out += fmt::format("s_waitcnt {}\n", counters);
    if (w.vscnt)
        out += fmt::format("s_waitcnt_vscnt null, 0x{:x}\n", *w.vscnt);
}
void nopLines(std::string& out, int count) {
    while (count > 0) {
        int const n = std::min(count, 16);
        out += fmt::format("s_nop {}\n", n - 1);
        count -= n;
    }
}
} // namespace

int Instruction::maxBytes() const {
    auto lines = [](std::string const& text) {
        return text.empty() ? 0 : static_cast<int>(std::count(text.begin(), text.end(), '\n')) + 1;
    };
    std::string attached;
    waitLines(attached, waitBefore_);
    nopLines(attached, nopsBefore_);
    int bytes = 4 * static_cast<int>(std::count(attached.begin(), attached.end(), '\n'));
    switch (form_) {
    case Form::Operation:
        return bytes + (isVector(class_) || class_ == InstructionClass::Other ? 12 : 8);
    case Form::Wait:
    case Form::Nop:
        return bytes + 4 * lines(bare());
    case Form::Label:
    case Form::Directive:
    case Form::Comment:
        return bytes;
    }
    return bytes;
}

std::string Instruction::bare() const {
    switch (form_) {
    case Form::Operation: {
        std::string out = mnemonic_;
        bool first = true;
        for (auto const* list : {&dsts_, &srcs_}) {
            for (Value const& v : *list) {
                out += first ? " " : ", ";
                out += v.str();
                first = false;
            }
        }
        for (std::string const& m : modifiers_)
            out += " " + m;
        return out;
    }
    case Form::Wait: {
        std::string out;
        waitLines(out, ownWait_);
        if (!out.empty())
            out.pop_back();
        return out;
    }
    case Form::Nop: {
        std::string out;
        nopLines(out, ownNops_);
        out.pop_back();
        return out;
    }
    case Form::Label:
        return mnemonic_ + ":";
    case Form::Directive:
        return mnemonic_;
    case Form::Comment:
        return "// " + comment_;
    }
    return {};
}

std::string Instruction::str() const {
    std::string out;
    waitLines(out, waitBefore_);
    nopLines(out, nopsBefore_);
    std::string text = bare();
    if (form_ != Form::Comment && !comment_.empty())
        text += " // " + comment_;
    return out + text;
}

} // namespace kiln::amdgcn
