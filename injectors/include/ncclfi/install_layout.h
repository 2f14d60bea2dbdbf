// Where ncclfi's own shared libraries (the preload, the net shim, the verbs wrapper) are under a PREFIX
// (a build tree, a copied one, an install prefix; docs/environment.md). One answer for the harness and
// the workloads, which find the libraries from their own executable.
#pragma once

#include <string>

namespace ncclfi {

// PREFIX/lib/ncclfi when that folder exists: an installed tree and the Debian package keep the libraries
// there, private to ncclfi and out of the dynamic linker's search path (they have no SONAME of their own
// and are only ever loaded by path). Else PREFIX/lib, where a build tree puts them.
std::string private_lib_dir(const std::string& prefix);

}  // namespace ncclfi
