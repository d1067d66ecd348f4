#include "kiln/scheduler/CheckProvenance.h"

namespace kiln::scheduler {

std::string checkedBy(std::string const& evaluator, std::map<std::string, double> const& extra) {
    if (evaluator == "measured:interpreter")
        return "interpreter";
    if (evaluator == "measured:cuda") {
        auto const reference = extra.find(kReferenceCublasExtra);
        if (reference == extra.end())
            return "GPU (reference not recorded)";
        return reference->second != 0 ? "GPU against cuBLAS" : "GPU against CPU reference";
    }
    if (evaluator == "model" || evaluator.starts_with("model:"))
        return "unchecked (cost model)";
    return "unknown (evaluator " + evaluator + ")";
}

bool wasChecked(std::string const& provenance) {
    return provenance == "interpreter" || provenance.starts_with("GPU");
}

} // namespace kiln::scheduler
