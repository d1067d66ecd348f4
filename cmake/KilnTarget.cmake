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

# kiln_install(NAME...): installs the libraries kiln::NAME (static archive and public headers)
# into the export set of the CMake package `kiln`, so that find_package(kiln) after
# `cmake --install` gives the same kiln::NAME targets.
include(GNUInstallDirs)
function(kiln_install)
    foreach(name ${ARGN})
        set_target_properties(kiln_${name} PROPERTIES EXPORT_NAME ${name})
        install(TARGETS kiln_${name} EXPORT kilnTargets
                ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
                INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
        get_target_property(folder kiln_${name} SOURCE_DIR)
        install(DIRECTORY ${folder}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
    endforeach()
endfunction()

# kiln_install_package(): the package files (kilnConfig.cmake, its version file and the
# exported targets) under lib/cmake/kiln.
function(kiln_install_package)
    include(CMakePackageConfigHelpers)
    set(destination ${CMAKE_INSTALL_LIBDIR}/cmake/kiln)
    install(EXPORT kilnTargets NAMESPACE kiln:: DESTINATION ${destination})
    configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/kilnConfig.cmake.in
        ${PROJECT_BINARY_DIR}/kilnConfig.cmake INSTALL_DESTINATION ${destination})
    write_basic_package_version_file(${PROJECT_BINARY_DIR}/kilnConfigVersion.cmake
        VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
    install(FILES ${PROJECT_BINARY_DIR}/kilnConfig.cmake
                  ${PROJECT_BINARY_DIR}/kilnConfigVersion.cmake
            DESTINATION ${destination})
endfunction()
