#include "shared_library.hpp"

#include <dlfcn.h>
#include <link.h>

namespace optune::backends::cuda {

void* SharedLibrary::symbol(const char* name) const { return handle ? dlsym(handle, name) : nullptr; }

SharedLibrary open_shared_library(const std::string& name) {
  SharedLibrary library;
  library.handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library.handle) {
    const char* error = dlerror();
    library.error = error ? error : name + ": cannot be opened";
    return library;
  }
  // Which file a soname resolved to: reported to the user, and where the toolkit's headers are looked for.
  link_map* map = nullptr;
  if (dlinfo(library.handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && *map->l_name) {
    library.path = map->l_name;
  } else {
    library.path = name;
  }
  return library;
}

}  // namespace optune::backends::cuda
