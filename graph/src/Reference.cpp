#include "kiln/graph/Reference.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <thread>

namespace kiln {

namespace {

// A value a tag names: row-major elements of its shape.
struct HostValue {
    DataType dtype;
    std::vector<std::int64_t> shape;
    std::vector<double> data;
};

class ElementEnvironment : public BindingsEnvironment {
public:
    ElementEnvironment(Bindings const& bindings, std::map<std::string, HostValue> const& values)
        : BindingsEnvironment(bindings)
        , values_(values) {}
    Value tag(expr::Tag const& t) const override {
        auto const& value = values_.at(t.name);
        // A value of one axis fewer than the result is its rows' values, broadcast along the
        // result's last axis (docs/command.md, Execute).
        std::size_t const at =
            value.shape.size() + 1 == rank && rowLength > 0 ? element / rowLength : element;
        double const v = value.data[at];
        return isFloat(t.type) ? Value::real(v, t.type)
                               : Value::integer(static_cast<std::int64_t>(v), t.type);
    }
    std::size_t element = 0;
    std::size_t rank = 0;      ///< the result's axes
    std::size_t rowLength = 1; ///< the length of the result's last axis

private:
    std::map<std::string, HostValue> const& values_;
};

std::vector<std::int64_t> unflatten(std::int64_t flat, std::vector<std::int64_t> const& shape) {
    std::vector<std::int64_t> index(shape.size());
    for (std::size_t k = shape.size(); k-- > 0;) {
        index[k] = flat % shape[k];
        flat /= shape[k];
    }
    return index;
}

// Runs body(begin, end) over [0, count), split among the host's threads when the work (about
// `work` steps an item) is large enough to pay for them: a GEMM epilogue checked at 4096^3 took
// hours on one thread. Each item is computed exactly as on one thread; the first exception a
// thread throws is thrown here.
template <class Body>
void inParallel(std::int64_t count, double work, Body const& body) {
    std::int64_t const threads =
        static_cast<double>(count) * work < double(1 << 22)
            ? 1
            : std::min<std::int64_t>(count, std::max(1u, std::thread::hardware_concurrency()));
    if (threads <= 1) {
        body(std::int64_t{0}, count);
        return;
    }
    std::int64_t const each = (count + threads - 1) / threads;
    std::vector<std::exception_ptr> failed(static_cast<std::size_t>(threads));
    std::vector<std::thread> pool;
    for (std::int64_t t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
            try {
                body(t * each, std::min(count, (t + 1) * each));
            } catch (...) {
                failed[static_cast<std::size_t>(t)] = std::current_exception();
            }
        });
    for (auto& thread : pool)
        thread.join();
    for (auto const& e : failed)
        if (e)
            std::rethrow_exception(e);
}

// op(A) x op(B) into `out` (m x n, row-major), rounded to `type`. Each sum runs over p in order,
// as the plain triple loop would add it, but row by row: a row of the product accumulates the
// rows of op(B) (made row-major first) scaled by its elements of op(A), so the inner loop runs
// along memory, over blocks of op(B) that stay in cache, and threads take blocks of rows.
void multiply(HostValue const& a, HostValue const& b, bool transA, bool transB, DataType type,
              HostValue& out) {
    std::int64_t const m = out.shape[0], n = out.shape[1], k = a.shape[transA ? 0 : 1];
    std::vector<double> transposed;
    if (transB) {
        transposed.resize(static_cast<std::size_t>(k * n));
        for (std::int64_t j = 0; j < n; ++j)
            for (std::int64_t p = 0; p < k; ++p)
                transposed[static_cast<std::size_t>(p * n + j)] =
                    b.data[static_cast<std::size_t>(j * k + p)];
    }
    double const* rowsOfB = transB ? transposed.data() : b.data.data();
    constexpr std::int64_t kRows = 16, kColumns = 256, kDepth = 256;
    inParallel(
        (m + kRows - 1) / kRows, double(kRows) * double(n) * double(k),
        [&](std::int64_t first, std::int64_t last) {
            std::vector<double> sums(static_cast<std::size_t>(kRows * kColumns));
            for (std::int64_t i0 = first * kRows; i0 < std::min(m, last * kRows); i0 += kRows) {
                std::int64_t const rows = std::min(kRows, m - i0);
                for (std::int64_t j0 = 0; j0 < n; j0 += kColumns) {
                    std::int64_t const columns = std::min(kColumns, n - j0);
                    std::fill(sums.begin(), sums.end(), 0.0);
                    for (std::int64_t p0 = 0; p0 < k; p0 += kDepth)
                        for (std::int64_t i = 0; i < rows; ++i) {
                            double* sum = sums.data() + i * kColumns;
                            for (std::int64_t p = p0; p < std::min(k, p0 + kDepth); ++p) {
                                double const x = a.data[static_cast<std::size_t>(
                                    transA ? p * m + i0 + i : (i0 + i) * k + p)];
                                double const* y = rowsOfB + p * n + j0;
                                for (std::int64_t j = 0; j < columns; ++j)
                                    sum[j] += x * y[j];
                            }
                        }
                    for (std::int64_t i = 0; i < rows; ++i)
                        for (std::int64_t j = 0; j < columns; ++j)
                            out.data[static_cast<std::size_t>((i0 + i) * n + j0 + j)] =
                                roundTo(type, sums[static_cast<std::size_t>(i * kColumns + j)]);
                }
            }
        });
}

} // namespace

void runReference(Command const& command, Bindings& bindings) {
    std::map<std::string, HostValue> values;
    auto const& infos = command.values();

    for (auto const& op : command.operations()) {
        switch (op.kind) {
        case CommandOpKind::LoadTiled:
        case CommandOpKind::LoadLinear: {
            HostTensor const& t = bindings.tensors.at(op.tensor);
            HostValue v{t.dtype, t.shape, {}};
            if (op.kind == CommandOpKind::LoadLinear)
                v.shape = {t.elements()};
            v.data.resize(static_cast<std::size_t>(t.elements()));
            for (std::int64_t i = 0; i < t.elements(); ++i)
                v.data[static_cast<std::size_t>(i)] =
                    t.data[static_cast<std::size_t>(t.offset(unflatten(i, t.shape)))];
            values[op.tag] = std::move(v);
            break;
        }
        case CommandOpKind::StoreTiled:
        case CommandOpKind::StoreLinear: {
            HostTensor& t = bindings.tensors.at(op.tensor);
            HostValue const& v = values.at(op.inputs[0]);
            for (std::int64_t i = 0; i < t.elements(); ++i)
                t.data[static_cast<std::size_t>(t.offset(unflatten(i, t.shape)))] =
                    roundTo(t.dtype, v.data[static_cast<std::size_t>(i)]);
            break;
        }
        case CommandOpKind::Execute: {
            DataType const type = infos.at(op.tag).dtype;
            std::vector<std::int64_t> shape;
            for (auto const& s : infos.at(op.tag).shape)
                shape.push_back(evaluateInt(*s, BindingsEnvironment(bindings)));
            std::int64_t n = 1;
            for (auto s : shape)
                n *= s;
            HostValue out{type, shape, std::vector<double>(static_cast<std::size_t>(n))};
            inParallel(n, 64, [&](std::int64_t first, std::int64_t last) {
                ElementEnvironment env(bindings, values);
                env.rank = shape.size();
                env.rowLength = shape.empty() ? 1 : static_cast<std::size_t>(shape.back());
                for (auto i = static_cast<std::size_t>(first); i < static_cast<std::size_t>(last);
                     ++i) {
                    env.element = i;
                    out.data[i] = convertValue(type, evaluate(*op.expression, env)).asDouble();
                }
            });
            values[op.tag] = std::move(out);
            break;
        }
        case CommandOpKind::Multiply: {
            HostValue const& a = values.at(op.inputs[0]);
            HostValue const& b = values.at(op.inputs[1]);
            std::int64_t const m = a.shape[op.transposeA ? 1 : 0];
            std::int64_t const n = b.shape[op.transposeB ? 0 : 1];
            DataType const type = infos.at(op.tag).dtype;
            HostValue out{type, {m, n}, std::vector<double>(static_cast<std::size_t>(m * n))};
            multiply(a, b, op.transposeA, op.transposeB, type, out);
            values[op.tag] = std::move(out);
            break;
        }
        case CommandOpKind::Reduce: {
            HostValue const& in = values.at(op.inputs[0]);
            std::int64_t const last = in.shape.back();
            std::int64_t const rows =
                last == 0 ? 0 : static_cast<std::int64_t>(in.data.size()) / last;
            HostValue out{
                in.dtype, std::vector<std::int64_t>(in.shape.begin(), in.shape.end() - 1), {}};
            std::int64_t outElements = 1;
            for (auto s : out.shape)
                outElements *= s;
            out.data.assign(static_cast<std::size_t>(outElements), 0.0);
            for (std::int64_t r = 0; r < rows; ++r) {
                bool const sum = op.combine == Combine::Sum || op.combine == Combine::Mean;
                double acc = sum                          ? 0.0
                             : op.combine == Combine::Max ? -std::numeric_limits<double>::infinity()
                                                          : std::numeric_limits<double>::infinity();
                for (std::int64_t c = 0; c < last; ++c) {
                    double const x = in.data[static_cast<std::size_t>(r * last + c)];
                    acc = sum                          ? acc + x
                          : op.combine == Combine::Max ? std::max(acc, x)
                                                       : std::min(acc, x);
                }
                if (op.combine == Combine::Mean)
                    acc /= static_cast<double>(last);
                out.data[static_cast<std::size_t>(r)] = roundTo(in.dtype, acc);
            }
            values[op.tag] = std::move(out);
            break;
        }
        }
    }
}

} // namespace kiln
