# Runs one libFuzzer target for SECONDS over a fresh copy of SEEDS in WORK/corpus; a finding
# (crash, leak, abort, undefined behaviour, timeout, out of memory) fails the test and leaves
# its input in WORK/artifacts. Usage: cmake -DFUZZER=... -DWORK=... -DSEEDS=a;b -DSECONDS=20 [-DMAX_LEN=16384]
# -P RunFuzzer.cmake
if(NOT MAX_LEN)
    set(MAX_LEN 16384)
endif()
# UBSan reports and goes on unless told to stop: undefined behaviour is a finding too.
if(NOT DEFINED ENV{UBSAN_OPTIONS})
    set(ENV{UBSAN_OPTIONS} "halt_on_error=1:print_stacktrace=1")
endif()
file(REMOVE_RECURSE ${WORK}/corpus)
file(MAKE_DIRECTORY ${WORK}/corpus ${WORK}/artifacts)
set(index 0)
foreach(seed IN LISTS SEEDS)
    get_filename_component(name ${seed} NAME)
    configure_file(${seed} ${WORK}/corpus/${index}-${name} COPYONLY)
    math(EXPR index "${index} + 1")
endforeach()
execute_process(
    COMMAND ${FUZZER} ${WORK}/corpus -max_total_time=${SECONDS} -rss_limit_mb=2048 -timeout=20
            -max_len=${MAX_LEN} -print_final_stats=1 -artifact_prefix=${WORK}/artifacts/
    RESULT_VARIABLE result)
if(NOT result EQUAL 0)
    message(FATAL_ERROR "${FUZZER} found a problem (exit ${result}); its input is in ${WORK}/artifacts")
endif()
