# NCCLFI_SANITIZE=address|undefined|thread applies to every CPU target. Under LD_PRELOAD the sanitizer
# runtime must come first in the preload list (tests/preload handles that).
if(NCCLFI_SANITIZE)
  if(NOT NCCLFI_SANITIZE MATCHES "^(address|undefined|thread)$")
    message(FATAL_ERROR "NCCLFI_SANITIZE must be address, undefined or thread, got '${NCCLFI_SANITIZE}'")
  endif()
  add_compile_options(-fsanitize=${NCCLFI_SANITIZE} -fno-omit-frame-pointer)
  add_link_options(-fsanitize=${NCCLFI_SANITIZE})
endif()
