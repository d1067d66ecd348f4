# kiln_library(NAME SOURCES ... DEPENDS ...): one Kiln library folder = one target kiln::NAME,
# public headers under <folder>/include/kiln/<folder>/, warnings as errors.
function(kiln_warnings target)
    target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
                                             -Wimplicit-fallthrough -Werror
                                             -Wno-missing-field-initializers
                                             # GCC 12 false positive on std::string concatenation (PR105329)
                                             $<$<CXX_COMPILER_ID:GNU>:-Wno-restrict>)
endfunction()

function(kiln_library name)
    cmake_parse_arguments(ARG "" "" "SOURCES;DEPENDS;PRIVATE_DEPENDS" ${ARGN})
    add_library(kiln_${name} STATIC ${ARG_SOURCES})
    add_library(kiln::${name} ALIAS kiln_${name})
    target_include_directories(kiln_${name} PUBLIC
        $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include> $<INSTALL_INTERFACE:include>)
    target_link_libraries(kiln_${name} PUBLIC ${ARG_DEPENDS} PRIVATE ${ARG_PRIVATE_DEPENDS})
    set_target_properties(kiln_${name} PROPERTIES OUTPUT_NAME kiln_${name} POSITION_INDEPENDENT_CODE ON)
    kiln_warnings(kiln_${name})
endfunction()
