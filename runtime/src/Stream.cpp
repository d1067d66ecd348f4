// Stream.cpp: creating streams and events, checked launches, replays, synchronisation.
#include "kiln/runtime/Stream.h"

#include "kiln/runtime/CommandBuffer.h"

namespace kiln::runtime {

Expected<Stream> Stream::create(std::shared_ptr<Device> device) {
    if (!device)
        return Error(ErrorCode::InvalidArgument, "Stream::create: no device");
    KILN_ASSIGN_OR_RETURN(std::unique_ptr<StreamBackend> backend, device->newStream());
    return Stream(std::move(device), std::move(backend));
}

Expected<Event> Event::create(std::shared_ptr<Device> device) {
    if (!device)
        return Error(ErrorCode::InvalidArgument, "Event::create: no device");
    KILN_ASSIGN_OR_RETURN(std::unique_ptr<EventBackend> backend, device->newEvent());
    return Event(std::move(device), std::move(backend));
}

Stream& Stream::launch(Kernel const& kernel, LaunchConfig const& config,
                       KernelArguments const& arguments) {
    if (!status_.ok())
        return *this;
    if (Status checked = kernel.checkArguments(arguments.descriptors()); !checked.ok()) {
        status_ = checked;
        return *this;
    }
    return launchChecked(kernel, config, arguments.pointers());
}

Stream& Stream::launchChecked(Kernel const& kernel, LaunchConfig const& config, void** arguments) {
    status_ =
        checkDevice("kernel '" + kernel.name() + "' is loaded on", kernel.device().description());
    if (status_.ok())
        status_ = kernel.prepareLaunch(config);
    if (status_.ok())
        status_ = backend_->launch(kernel.backend(), config, arguments);
    return *this;
}

Stream& Stream::replay(CommandBuffer const& buffer) {
    return then(checkDevice("the command buffer was recorded on", buffer.device().description()),
                [&] { return backend_->replay(buffer.backend()); });
}

Status Stream::checkDevice(std::string const& what, DeviceDescription const& other) const {
    DeviceDescription const& mine = device_->description();
    if (other.platform == mine.platform && other.ordinal == mine.ordinal)
        return {};
    return Error(ErrorCode::InvalidArgument,
                 what + " " + other.summary() + " but the stream runs on " + mine.summary());
}

Status Stream::checkSizes(char const* what, std::size_t expected, std::size_t given) {
    if (expected == given)
        return {};
    return Error(ErrorCode::InvalidArgument,
                 std::string("Stream ") + what + ": " + std::to_string(given) +
                     " elements where the buffer has " + std::to_string(expected));
}

Status Stream::synchronize() {
    if (recording_) {
        Error const refused(ErrorCode::InvalidArgument,
                            "Stream::synchronize while the stream records a command buffer, "
                            "whose work runs only when it is replayed (replay it, then "
                            "synchronize)");
        if (status_.ok())
            status_ = refused;
        return refused;
    }
    Status result = status_;
    status_ = Status();
    Status const waited = backend_->synchronize();
    return result.ok() ? waited : result;
}

} // namespace kiln::runtime
