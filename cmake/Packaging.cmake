# The Debian package (cpack -G DEB, from a configured and built tree; scripts/package makes it and runs
# lintian): the installed layout under /usr (/usr/bin/ncclfi, the preload, the net shim and the verbs
# wrapper private in /usr/lib/ncclfi, /usr/share/ncclfi, the man page, the bash completion, the
# copyright file and changelog in /usr/share/doc/ncclfi). Depends names Debian packages only: what the
# CPU parts link dynamically (libfiu, Boost, RE2, yaml-cpp and libcrypto are linked statically). The GPU
# workload also needs the CUDA toolkit's libnccl at run time, which no Debian package of main provides:
# it is found on the GPU host, as for a build tree.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME ncclfi)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
# A Debian revision: lintian expects changelog.Debian.gz, not a native package's changelog.gz.
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_PACKAGE_CONTACT "ncclfi maintainers <ncclfi-maintainers@lists.ncclfi.dev>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "fault injection and resilience tests for NCCL jobs")
# One string: two would be a CMake list, joined by a `;` in the control file.
set(CPACK_PACKAGE_DESCRIPTION
    "ncclfi injects faults into NCCL jobs through an LD_PRELOAD interposer on the\n\
NCCL API and an NCCL net plugin, and judges whether the job and its safety nets\n\
detected and recovered as a scenario expects.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libc6 (>= 2.34), libstdc++6 (>= 12), libgcc-s1 (>= 3.0)")
# The launchers other than local and command, and the ddp workload's interpreter.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "python3")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "openmpi-bin, slurm-client")
# Stripped programs and libraries (installed: 12 MB, against 245 MB with debug information); their debug
# information goes to ncclfi-dbgsym_*.ddeb, found by build id (/usr/lib/debug/.build-id).
set(CPACK_DEBIAN_DEBUGINFO_PACKAGE ON)

# The copyright file and the Debian changelog (gzip -9n: no time stamp, so the package is reproducible).
set(NCCLFI_DEB_VERSION ${PROJECT_VERSION}-${CPACK_DEBIAN_PACKAGE_RELEASE})
configure_file(${CMAKE_CURRENT_LIST_DIR}/debian/changelog.in ${CMAKE_BINARY_DIR}/debian/changelog.Debian @ONLY)
execute_process(COMMAND gzip -9n -c ${CMAKE_BINARY_DIR}/debian/changelog.Debian
  OUTPUT_FILE ${CMAKE_BINARY_DIR}/debian/changelog.Debian.gz COMMAND_ERROR_IS_FATAL ANY)
install(FILES ${CMAKE_CURRENT_LIST_DIR}/debian/copyright ${CMAKE_BINARY_DIR}/debian/changelog.Debian.gz
  DESTINATION share/doc/ncclfi)
include(CPack)
