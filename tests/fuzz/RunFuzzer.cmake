# Runs one libFuzzer target for SECONDS over a fresh copy of SEEDS in WORK/corpus; a finding
# (crash, leak, abort, timeout, out of memory) fails the test and leaves its input in
# WORK/artifacts. Usage: cmake -DFUZZER=... -DWORK=... -DSEEDS=a;b -DSECONDS=20 -P RunFuzzer.cmake
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
            -max_len=16384 -print_final_stats=1 -artifact_prefix=${WORK}/artifacts/
    RESULT_VARIABLE result)
if(NOT result EQUAL 0)
    message(FATAL_ERROR "${FUZZER} found a problem (exit ${result}); its input is in ${WORK}/artifacts")
endif()
