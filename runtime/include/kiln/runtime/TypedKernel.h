// TypedKernel.h: a kernel with its C++ parameter types, checked once at load.
//
// TypedKernel<DevicePointer<float const>, DevicePointer<float>, float, std::uint32_t> is
// refused at load (ArgumentMismatch naming the parameter) when the manifest or the loaded code
// disagrees with those types; afterwards Stream::launch checks the argument types at compile
// time, as StreamExecutor's typed kernels do, and each launch only checks limits.
#pragma once

#include "kiln/runtime/ArgumentCheck.h"
#include "kiln/runtime/Kernel.h"
#include "kiln/runtime/KernelArgument.h"

#include <array>
#include <memory>

namespace kiln::runtime {

/// A kernel whose parameters are Params..., in order.
template <class... Params>
class TypedKernel {
public:
    /// Loads the kernel of `spec` and checks Params... against its manifest and layout.
    static Expected<TypedKernel> load(std::shared_ptr<Device> device,
                                      KernelLoaderSpec const& spec) {
        Expected<Kernel> kernel = Kernel::load(std::move(device), spec);
        if (!kernel.ok())
            return kernel.error();
        return create(std::move(kernel).value());
    }
    /// Checks Params... against a loaded kernel's manifest and layout.
    static Expected<TypedKernel> create(Kernel kernel) {
        auto const arguments = descriptors();
        if (Status s = kernel.checkArguments(arguments); !s.ok())
            return s.error();
        return TypedKernel(std::move(kernel));
    }

    /// The descriptors of Params..., in order.
    static std::array<ArgumentDescriptor, sizeof...(Params)> descriptors() {
        return {KernelArgument<Params>::descriptor()...};
    }

    /// The untyped kernel.
    Kernel const& kernel() const { return kernel_; }

private:
    explicit TypedKernel(Kernel kernel)
        : kernel_(std::move(kernel)) {}
    Kernel kernel_;
};

} // namespace kiln::runtime
