# One warnings target, linked by every target of the project.
add_library(ncclfi_warnings INTERFACE)
target_compile_options(ncclfi_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX,C>:-Wall -Wextra -Wshadow -Wconversion -Wsign-conversion -Wnon-virtual-dtor
    -Wold-style-cast -Wcast-align -Woverloaded-virtual -Wnull-dereference -Wformat=2>)
if(NCCLFI_WERROR)
  target_compile_options(ncclfi_warnings INTERFACE $<$<COMPILE_LANGUAGE:CXX,C>:-Werror>)
endif()
# C sources get the C-valid subset only.
target_compile_options(ncclfi_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:C>:-Wno-old-style-cast -Wno-non-virtual-dtor -Wno-overloaded-virtual>)
