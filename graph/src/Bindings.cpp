#include "kiln/graph/Bindings.h"

#include "kiln/graph/Error.h"

#include <algorithm>
#include <cmath>
#include <random>

namespace kiln {

std::int64_t HostTensor::elements() const {
    std::int64_t n = 1;
    for (auto s : shape)
        n *= s;
    return n;
}

std::int64_t HostTensor::offset(std::vector<std::int64_t> const& index) const {
    std::int64_t off = 0;
    for (std::size_t k = 0; k < index.size(); ++k)
        off += index[k] * strides[k];
    return off;
}

Value BindingsEnvironment::argument(expr::Argument const& a) const {
    if (auto it = bindings_.sizes.find(a.name); it != bindings_.sizes.end())
        return Value::integer(it->second);
    if (auto it = bindings_.scalars.find(a.name); it != bindings_.scalars.end())
        return it->second;
    fail("argument '{}' has no value: give it in the problem (e.g. --size {}=128)", a.name, a.name);
}

namespace {
// Calls f(multi-index) for every index of `shape`, row-major.
template <class F>
void forEachIndex(std::vector<std::int64_t> const& shape, F&& f) {
    for (auto s : shape)
        if (s <= 0)
            return;
    std::vector<std::int64_t> index(shape.size(), 0);
    while (true) {
        f(index);
        std::size_t k = shape.size();
        while (k > 0) {
            --k;
            if (++index[k] < shape[k])
                break;
            index[k] = 0;
            if (k == 0)
                return;
        }
        if (shape.empty())
            return;
    }
}
} // namespace

std::int64_t problemSize(std::string const& name, double value) {
    // The bound a Command's own "problem" sizes have (CommandJson): 2^40.
    constexpr double kMostSize = double(std::int64_t{1} << 40);
    if (!(value >= 0 && value <= kMostSize) || value != std::floor(value))
        fail("size '{}' must be an integer from 0 to {}, not {}", name, std::int64_t{1} << 40,
             value);
    return static_cast<std::int64_t>(value);
}

Bindings randomBindings(Command const& command, std::map<std::string, double> const& problem,
                        std::uint64_t seed) {
    Bindings b;
    std::mt19937_64 rng(seed);
    for (auto const& size : command.sizes()) {
        auto it = problem.find(size);
        if (it == problem.end())
            fail("size '{}' has no value: give it in the problem (e.g. --size {}=128)", size, size);
        b.sizes[size] = problemSize(size, it->second);
    }
    std::uniform_real_distribution<double> real(-1.0, 1.0);
    std::uniform_int_distribution<int> integer(-8, 8);
    auto draw = [&](DataType type) {
        return isFloat(type) ? roundTo(type, real(rng)) : static_cast<double>(integer(rng));
    };
    for (auto const& s : command.scalars()) {
        auto it = problem.find(s.name);
        double const v = it != problem.end() ? it->second : draw(s.dtype);
        b.scalars[s.name] = isFloat(s.dtype)
                                ? Value::real(roundTo(s.dtype, v), s.dtype)
                                : Value::integer(static_cast<std::int64_t>(v), s.dtype);
    }
    BindingsEnvironment env(b);
    for (auto const& t : command.tensors()) {
        HostTensor h{t.dtype, {}, {}, {}};
        for (auto const& s : t.shape)
            h.shape.push_back(evaluateInt(*s, env));
        for (auto const& s : t.strides)
            h.strides.push_back(evaluateInt(*s, env));
        for (std::size_t k = 0; k < h.shape.size(); ++k) {
            if (h.shape[k] < 0)
                fail("tensor '{}' axis {} has negative size {}", t.name, k, h.shape[k]);
            if (h.strides[k] < 0)
                fail("tensor '{}' axis {} has negative stride {}", t.name, k, h.strides[k]);
        }
        // One past the last offset the strides reach; past int64 is past any bound below.
        std::int64_t span = 1;
        bool overflowed = false;
        for (std::size_t k = 0; k < h.shape.size() && h.shape[k] > 0; ++k) {
            std::int64_t reach = 0;
            overflowed = overflowed ||
                         __builtin_mul_overflow(h.shape[k] - 1, h.strides[k], &reach) ||
                         __builtin_add_overflow(span, reach, &span);
        }
        bool const empty =
            std::any_of(h.shape.begin(), h.shape.end(), [](std::int64_t s) { return s == 0; });
        if (empty)
            span = 0;
        if (!empty && overflowed)
            fail("tensor '{}' has more elements than 2^63; the host reference stops at 2^31",
                 t.name);
        if (span > (std::int64_t{1} << 31))
            fail("tensor '{}' has {} elements; the host reference stops at 2^31", t.name, span);
        h.data.assign(static_cast<std::size_t>(span), 0.0);
        forEachIndex(h.shape, [&](std::vector<std::int64_t> const& index) {
            h.data[static_cast<std::size_t>(h.offset(index))] = draw(t.dtype);
        });
        b.tensors[t.name] = std::move(h);
    }
    return b;
}

double largestMagnitude(HostTensor const& t) {
    double largest = 0;
    forEachIndex(t.shape, [&](std::vector<std::int64_t> const& index) {
        // std::max keeps `largest` where the element is NaN.
        largest = std::max(largest, std::fabs(t.data[static_cast<std::size_t>(t.offset(index))]));
    });
    return largest;
}

double maxRelativeError(HostTensor const& actual, HostTensor const& reference) {
    KILN_ASSERT(actual.shape == reference.shape, "comparing tensors of different shapes");
    double const floor = std::max(1e-2 * largestMagnitude(reference), 1e-300);
    double worst = 0;
    forEachIndex(reference.shape, [&](std::vector<std::int64_t> const& index) {
        double const a = actual.data[static_cast<std::size_t>(actual.offset(index))];
        double const r = reference.data[static_cast<std::size_t>(reference.offset(index))];
        double const error = (std::isnan(a) != std::isnan(r)) ? INFINITY
                             : std::isnan(a)                  ? 0.0
                                             : std::fabs(a - r) / std::max(std::fabs(r), floor);
        worst = std::max(worst, error);
    });
    return worst;
}

} // namespace kiln
