// CommandBuffer.cpp: recording a stream, ending the capture whatever happens.
#include "kiln/runtime/CommandBuffer.h"

#include <utility>

namespace kiln::runtime {

Expected<CommandBuffer> CommandBuffer::record(Stream& stream,
                                              std::function<void(Stream&)> const& commands) {
    std::string const context = "recording a command buffer";
    if (stream.recording_) {
        return Error(ErrorCode::InvalidArgument, context +
                                                     ": the stream is recording one already (on " +
                                                     stream.device().description().summary() + ")");
    }
    if (!stream.status_.ok()) {
        return stream.status_.error().withContext(
            context + ": the stream holds a failure, which synchronize() returns and clears");
    }
    if (Status begun = stream.backend_->beginCapture(); !begun.ok())
        return begun.error().withContext(context);

    // From here on the capture must end, however `commands` leaves: a stream left capturing
    // would refuse, or silently record, all later work.
    stream.recording_ = true;
    try {
        commands(stream);
    } catch (...) {
        stream.recording_ = false;
        stream.status_ = Status();
        stream.backend_->abandonCapture();
        throw;
    }
    stream.recording_ = false;
    if (Status recorded = std::exchange(stream.status_, Status()); !recorded.ok()) {
        stream.backend_->abandonCapture();
        return recorded.error().withContext(context);
    }
    Expected<std::unique_ptr<CommandBufferBackend>> ended = stream.backend_->endCapture();
    if (!ended.ok())
        return ended.error().withContext(context);
    return CommandBuffer(stream.device_, std::move(ended).value());
}

} // namespace kiln::runtime
