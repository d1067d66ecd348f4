// Event.h: a point recorded in a stream, used to time device work (Stream::record).
#pragma once

#include "kiln/runtime/Backend.h"
#include "kiln/runtime/Device.h"
#include "kiln/runtime/Status.h"

#include <memory>

namespace kiln::runtime {

/// A timing event on one device.
class Event {
public:
    /// A new event on `device`.
    static Expected<Event> create(std::shared_ptr<Device> device);

    /// Waits on the host until the event has happened.
    Status synchronize() { return backend_->synchronize(); }
    /// Milliseconds of device time from `start` to this event; both must be recorded and done
    /// (synchronize this one first).
    Expected<float> millisecondsSince(Event const& start) const {
        return backend_->millisecondsSince(*start.backend_);
    }

    /// The platform's event.
    EventBackend& backend() const { return *backend_; }

private:
    Event(std::shared_ptr<Device> device, std::unique_ptr<EventBackend> backend)
        : device_(std::move(device))
        , backend_(std::move(backend)) {}

    std::shared_ptr<Device> device_;
    std::unique_ptr<EventBackend> backend_;
};

} // namespace kiln::runtime
