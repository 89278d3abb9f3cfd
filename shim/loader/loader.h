/* The dynamic loader and the shim's place in it: the loaded objects read without the loader's
 * lock (elf_sym.c), the real functions (real.c), the link map held still (loader_lock.c), the
 * scanner thread that alone takes the loader's lock (scanner.c), the wrapped names' bindings
 * (rebind.c) and the exported dlopen (dlopen_hook.c). */
#ifndef CS_LOADER_H
#define CS_LOADER_H

#include <stddef.h>
#include <stdint.h>

#include "../process/state.h"

/* real.c: real dl* functions and library handles */
typedef void *(*cs_dlsym_fn)(void *, const char *);
typedef void *(*cs_dlvsym_fn)(void *, const char *, const char *);
cs_dlsym_fn cs_real_dlsym(void);
cs_dlvsym_fn cs_real_dlvsym(void);
int cs_api_bind(struct cs_api *api);
int cs_api_rebind(struct cs_api *api, void *p);  /* the library was loaded again elsewhere */
int cs_api_find(struct cs_api *api, const char *name);  /* global index or -1 */
int cs_api_index_of_ptr(struct cs_api *api, void *p, const char *hint);
struct cs_api *cs_api_of(int idx);
const char *cs_api_name(int idx);
void *cs_real_resolve(struct cs_api *api, int idx);
/* The real function from one named library (an older major's versioned name): that library's
 * own definition when it is loaded, else the API's usual one. Cached in *slot. */
void *cs_real_in(struct cs_api *api, int idx, const char *soname, void *_Atomic *slot);

static inline void *cs_real(struct cs_api *api, int idx)
{
    void *p = atomic_load_explicit(&api->real[idx - api->base], memory_order_relaxed);
    if (cs_unlikely((uintptr_t)p <= (uintptr_t)CS_REAL_MISSING))
        p = cs_real_resolve(api, idx);
    return p == CS_REAL_ABSENT ? NULL : p;
}


/* elf_sym.c: the loaded objects, read without the loader lock */
struct link_map;
void *cs_elf_default(const char *symbol);  /* as RTLD_DEFAULT, lock-free */
void *cs_elf_next(const char *symbol, const void *self);
void *cs_elf_lookup(const struct link_map *m, const char *symbol);
void cs_elf_each_function(const struct link_map *m, void (*fn)(const char *, void *, void *), void *arg);
const char *cs_elf_function_at(const struct link_map *m, const void *addr, uint64_t *offset);
const void *cs_elf_lookup_data(const struct link_map *m, const char *symbol);
const char *cs_elf_soname(const struct link_map *m);
struct link_map *cs_lm_head(void);
struct link_map *cs_lm_self(void);
struct link_map *cs_lm_find_soname(const char *soname);
struct link_map *cs_lm_of_addr(const void *addr);
const char *cs_lm_name_of_addr(const void *addr);
const void *cs_lm_phdrs(const struct link_map *m, size_t *count);  /* its program headers, or NULL */
void cs_exe_path(char *out, size_t cap);
const char *cs_elf_dyn_str(const struct link_map *m, long tag, int nth);

/* loader_lock.c: the link map held still (no dlopen, dlsym, dladdr or dlclose inside), fenced
 * from fork */
struct dl_phdr_info;
void cs_loader_after_fork(void);
void cs_loader_fence_prepare(void);  /* fork's prepare handler, last: the fence, its holder waited for */
void cs_loader_probe(void);  /* the scanner, first: the loader's lock is usable (a forked child) */
void cs_loader_iterate(int (*cb)(struct dl_phdr_info *, size_t, void *), void *arg);
void cs_loader_held(void (*fn)(void *), void *arg);

/* scanner.c: the only code that takes the loader lock or asks a library for its version. What a
 * scan does is filled in by the layers above (init.c). */
void cs_scanner_install(void (*scan_work)(int ask));
void cs_scanner_after_fork(void);
void cs_scan_request(void);  /* lock-free, from any hook */
void cs_scan_wait(int ms);   /* request, and wait for it (bounded) */
void cs_scan_sync(void);     /* from the dlsym/dlerror hooks: no library is asked anything */
void cs_scan_final(void);    /* at exit */

/* rebind.c: the loader's bindings of wrapped names pointed at the wrappers */
void cs_rebind(void);          /* binds objects loaded since the last time; cheap when none */
void cs_rebind_needed(void);   /* the loader may have added objects; also a forked child's drop */
extern int cs_rebind_on;       /* the shim's constructor ran (and the shim is not disabled) */
int cs_rebind_unbound(void);   /* how many lazy references the loaded libraries lack */
void cs_rebind_unbound_at(int i, const char **needer, const char **symbol);

/* dlopen_hook.c: what the program asked the loader to open, and from where */
int cs_dlopen_request(const char *path, char *caller, size_t cap, int *by_name);
const char *cs_dlopen_last(void);  /* the program's last dlopen's file name */

#endif
