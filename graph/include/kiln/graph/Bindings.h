// Bindings.h: concrete arguments for running a Command or a KernelGraph on the host.
//
// Sizes (M, N, K...), scalar values and tensors with their elements. Tensors keep elements as
// doubles already rounded to their element type, laid out by their strides, so that the direct
// Command semantics and the KernelGraph interpreter read and write exactly what a GPU would.
#pragma once

#include "kiln/graph/Command.h"
#include "kiln/graph/Evaluate.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kiln {

struct HostTensor {
    DataType dtype;
    std::vector<std::int64_t> shape;
    std::vector<std::int64_t> strides;
    std::vector<double> data; ///< covers every offset the strides reach

    std::int64_t elements() const;
    /// The offset of a multi-index.
    std::int64_t offset(std::vector<std::int64_t> const& index) const;
};

struct Bindings {
    std::map<std::string, std::int64_t> sizes;
    std::map<std::string, Value> scalars;
    std::map<std::string, HostTensor> tensors;
};

/// Answers Argument leaves (sizes and scalars) from bindings.
class BindingsEnvironment : public Environment {
public:
    explicit BindingsEnvironment(Bindings const& bindings)
        : bindings_(bindings) {}
    Value argument(expr::Argument const& a) const override;

private:
    Bindings const& bindings_;
};

/// Problem size `name` of `value`: a whole number from 0 to 2^40 (the bound of a Command's own
/// "problem" sizes), else a UserError naming it and its value.
std::int64_t problemSize(std::string const& name, double value);

/// Bindings for `command` with the sizes and scalars of `problem` (which must name every size;
/// scalars it does not name get random values) and every tensor filled with values drawn
/// uniformly from [-1, 1] (integers from [-8, 8]), rounded to its type, from `seed`.
Bindings randomBindings(Command const& command, std::map<std::string, double> const& problem,
                        std::uint64_t seed);

/// max |x| over the shape's elements (NaNs skipped): the scale maxRelativeError measures by.
double largestMagnitude(HostTensor const& t);

/// The largest relative difference between two tensors of the same shape, each element
/// measured as |a - b| / max(|b|, 1e-2 * max|b| over the tensor): relative where the reference
/// is large, absolute against 1% of the tensor's scale where it is near zero (where a sum of
/// large terms that cancel carries the rounding of its terms, not of its result).
double maxRelativeError(HostTensor const& actual, HostTensor const& reference);

} // namespace kiln
