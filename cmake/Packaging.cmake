# The Debian package (cpack -G DEB, from a configured and built tree): the installed layout under /usr
# (/usr/bin/ncclfi, /usr/lib/libncclfi-preload.so, /usr/share/ncclfi, the man page and the bash
# completion). Depends names Debian packages only: what the CPU parts link dynamically (libfiu and Boost
# are linked statically). The GPU workload also needs the CUDA toolkit's libnccl at run time, which no
# Debian package of main provides: it is found on the GPU host, as for a build tree.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME ncclfi)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "ncclfi maintainers <ncclfi@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "fault injection and resilience tests for NCCL jobs")
set(CPACK_PACKAGE_DESCRIPTION
    "ncclfi injects faults into NCCL jobs (an LD_PRELOAD interposer on the NCCL API and an NCCL net plugin)\n"
    "and judges whether the job and its safety nets detected and recovered as a scenario expects.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libc6 (>= 2.34), libstdc++6 (>= 12), libgcc-s1 (>= 3.0)")
# The launchers other than local and command, and the ddp workload's interpreter.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "python3")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "openmpi-bin, slurm-client")
set(CPACK_STRIP_FILES OFF)
include(CPack)
