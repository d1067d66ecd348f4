// A stand-in for `kiln worker` that speaks the same protocol (see Evaluator.h) and misbehaves
// on request, so the tests can show that a crashing, hanging or wrong candidate is recorded as
// that candidate's failure and the sweep goes on. The schedule parameter FAULT picks the fault:
//   1 the measurement crashes the worker (SIGSEGV)    2 the measurement hangs
//   3 the result is wrong (reported as a check failure) 4 the compile hangs
//   5 the compile crashes (abort)                      6 the compile reports an error
//   7 the worker answers with its own median and best (as the CUDA worker does)
// Times are a pure function of the parameters: 100 us + |MT_M - 64| + 10 * STAGES, with a
// deterministic jitter of +-1% over the repetitions. DELAY_MS=N sleeps N ms per measurement.
// A measurement's extra "precision_asked" is the request's precision.
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

namespace {

std::int64_t param(nlohmann::json const& request, char const* name, std::int64_t fallback) {
    auto const& p = request.at("params");
    return p.contains(name) ? p.at(name).get<std::int64_t>() : fallback;
}

[[noreturn]] void hang() {
    while (true)
        std::this_thread::sleep_for(std::chrono::seconds(1));
}

int compile() {
    std::string line;
    if (!std::getline(std::cin, line))
        return 3;
    auto const request = nlohmann::json::parse(line);
    std::int64_t const fault = param(request, "FAULT", 0);
    if (fault == 4)
        hang();
    if (fault == 5) {
        std::fprintf(stderr, "fake compiler: internal failure\n");
        std::abort();
    }
    if (fault == 6) {
        std::cout << R"({"ok": false, "error": "ptxas: too many registers"})" << std::endl;
        return 0;
    }
    std::ofstream(request.at("artifact").get<std::string>()) << request.at("params").dump();
    std::cout << nlohmann::json{{"ok", true}, {"extra", {{"registers", 42}}}}.dump() << std::endl;
    return 0;
}

int measure() {
    std::cout << R"({"ready": true, "device": "fake device"})" << std::endl;
    std::string line;
    while (std::getline(std::cin, line)) {
        auto const request = nlohmann::json::parse(line);
        std::int64_t const fault = param(request, "FAULT", 0);
        if (std::getenv("DELAY_MS"))
            std::this_thread::sleep_for(
                std::chrono::milliseconds(std::atoi(std::getenv("DELAY_MS"))));
        if (fault == 1) {
            // The default action, even where a sanitizer catches SIGSEGV to report it.
            std::signal(SIGSEGV, SIG_DFL);
            std::raise(SIGSEGV);
        }
        if (fault == 2)
            hang();
        nlohmann::json answer{{"id", request.at("id")}};
        if (fault == 3) {
            answer["ok"] = false;
            answer["stage"] = "check";
            answer["error"] = "wrong result: max relative error 0.5 (tolerance 1e-05)";
        } else if (fault == 7) {
            answer["ok"] = true;
            answer["median_us"] = 250.0;
            answer["min_us"] = 245.0;
            answer["samples"] = request.at("repetitions");
        } else {
            double const base = 100.0 + double(std::llabs(param(request, "MT_M", 64) - 64)) +
                                10.0 * double(param(request, "STAGES", 0));
            nlohmann::json samples = nlohmann::json::array();
            int const reps = request.at("repetitions").get<int>();
            for (int i = 0; i < reps; ++i)
                samples.push_back(base * (1.0 + 0.01 * ((i * 7) % 5 - 2) / 2.0));
            answer["ok"] = true;
            answer["samples_us"] = samples;
            answer["extra"] = {{"precision_asked", request.value("precision", 0.0)}};
        }
        std::cout << answer.dump() << std::endl;
    }
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    std::string const mode = argc > 1 ? argv[1] : "";
    if (mode == "compile")
        return compile();
    if (mode == "measure")
        return measure();
    std::fprintf(stderr, "usage: kiln_fake_worker compile|measure\n");
    return 2;
}
