# Every dependency comes from a Debian package (scripts/setup installs them) or with the CUDA toolkit.
find_package(Threads REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 REQUIRED)
# Static Boost: the GPU host has no Boost, and a copied build/ must run there.
set(Boost_USE_STATIC_LIBS ON)
find_package(Boost 1.74 REQUIRED COMPONENTS filesystem)
# HMAC-SHA256 and random bytes for the node agents' handshake (harness/agents/agent_protocol.cc) and the
# injection channel's records (injectors/src/injection_channel.cc: static, so the injectors need no libcrypto).
set(OPENSSL_USE_STATIC_LIBS TRUE)  # a copied build/ runs where no libssl-dev is installed
find_package(OpenSSL 3 REQUIRED COMPONENTS Crypto)
# RE2 (found through pkg-config, linked statically like Boost so a copied build/ runs on the GPU host):
# the harness's regular expressions on rank output (harness/model/line_regex.h says why).
find_package(PkgConfig REQUIRED)
pkg_check_modules(RE2 REQUIRED re2)
find_library(RE2_STATIC_LIBRARY NAMES libre2.a HINTS ${RE2_LIBRARY_DIRS} REQUIRED)
add_library(re2_static STATIC IMPORTED GLOBAL)
set_target_properties(re2_static PROPERTIES IMPORTED_LOCATION ${RE2_STATIC_LIBRARY}
  INTERFACE_INCLUDE_DIRECTORIES "${RE2_INCLUDE_DIRS}"
  INTERFACE_LINK_LIBRARIES Threads::Threads)
if(NCCLFI_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
if(NCCLFI_BUILD_BENCH)
  find_package(benchmark REQUIRED)
endif()

# libfiu ships only a static, PIC archive: it links into our shared objects, so a copied build/ needs
# nothing from Debian on the GPU host.
find_path(FIU_INCLUDE_DIR fiu.h REQUIRED)
find_library(FIU_STATIC_LIBRARY NAMES libfiu.a REQUIRED)
add_library(fiu_static STATIC IMPORTED GLOBAL)
set_target_properties(fiu_static PROPERTIES IMPORTED_LOCATION ${FIU_STATIC_LIBRARY}
  INTERFACE_INCLUDE_DIRECTORIES ${FIU_INCLUDE_DIR}
  INTERFACE_COMPILE_DEFINITIONS FIU_ENABLE=1
  INTERFACE_LINK_LIBRARIES "Threads::Threads;${CMAKE_DL_LIBS}")

# yaml-cpp (YAML scenarios), linked statically for the same reason.
find_path(YAML_CPP_INCLUDE_DIR yaml-cpp/yaml.h REQUIRED)
find_library(YAML_CPP_STATIC_LIBRARY NAMES libyaml-cpp.a REQUIRED)
add_library(yaml_cpp_static STATIC IMPORTED GLOBAL)
set_target_properties(yaml_cpp_static PROPERTIES IMPORTED_LOCATION ${YAML_CPP_STATIC_LIBRARY}
  INTERFACE_INCLUDE_DIRECTORIES ${YAML_CPP_INCLUDE_DIR})

# NCCL and CUDA: found with the CUDA toolkit. The preload and the net shim need only nccl.h; the GPU
# workload needs nvcc, the CUDA runtime and libnccl.
set(NCCLFI_CUDA_HOME "/usr/local/cuda" CACHE PATH "CUDA toolkit root")
find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${NCCLFI_CUDA_HOME}/include ENV NCCL_HOME PATH_SUFFIXES include)
find_library(NCCL_LIBRARY nccl HINTS ${NCCLFI_CUDA_HOME}/lib64 ENV NCCL_HOME PATH_SUFFIXES lib lib64)
if(NCCL_INCLUDE_DIR)
  message(STATUS "ncclfi: nccl.h found in ${NCCL_INCLUDE_DIR}: building the preload and the net shim")
  set(NCCLFI_HAVE_NCCL_H ON)
else()
  message(STATUS "ncclfi: nccl.h not found: skipping the preload, the net shim and the GPU workload")
  set(NCCLFI_HAVE_NCCL_H OFF)
endif()
include(CheckLanguage)
check_language(CUDA)
if(CMAKE_CUDA_COMPILER AND NCCL_LIBRARY AND NCCLFI_HAVE_NCCL_H)
  set(NCCLFI_HAVE_CUDA ON)
  message(STATUS "ncclfi: nvcc and libnccl found: building ncclfi-workload")
else()
  set(NCCLFI_HAVE_CUDA OFF)
  message(STATUS "ncclfi: nvcc or libnccl not found: skipping ncclfi-workload")
endif()
