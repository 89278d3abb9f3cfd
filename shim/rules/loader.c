/* What the loader said: a lookup that found nothing in a CUDA library, a symbol or version node
 * a library needs and the loaded copy lacks, a CUDA library not found at all. Each names the
 * stale copy and where it came from, and what to change. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "../base/json.h"
#include "../base/library_names.h"
#include "../base/loader_message.h"
#include "../trace/findings.h"
#include "../evidence/inventory.h"
#include "rules.h"

/* A runtime probing a driver too old for it: driver-too-old's evidence. A runtime probes the
 * driver's functions as it starts, before anyone asked the driver's version: counted too, and
 * said with driver-too-old if the version then shows it. */
static int driver_too_old_for_a_library(const struct cs_evidence *e)
{
    int have = cs_ev_driver_cuda(e);
    if (!have) return 1;
    for (int i = 0; i < e->nlibs; i++) {
        const struct cs_library *l = &e->libs[i];
        int needs = !strcmp(l->kind, "cudart") ? (int)l->code
                  : (!strcmp(l->kind, "cublas") || !strcmp(l->kind, "cublasLt")) && l->code >= 11000 ? (int)l->code
                  : (!strcmp(l->kind, "cudnn") || !strcmp(l->kind, "nccl") || !strcmp(l->kind, "framework")) ? l->built_for_cuda : 0;
        if (needs / 1000 > have / 1000) return 1;
    }
    for (int i = 0; i < e->nruntimes; i++)
        if (e->runtimes[i].cuda / 1000 > have / 1000) return 1;
    return 0;
}

int cs_rule_dlsym_miss(const struct cs_evidence *e, const char *library_path, const char *name)
{
    const struct cs_library *l = cs_ev_path(e, library_path);
    if (!l || !strcmp(l->kind, "framework")) return 0;
    if (!strcmp(l->kind, "driver") && driver_too_old_for_a_library(e)) return 1;
    char summary[2048], fix[1024], ev[2048];
    snprintf(summary, sizeof summary,
             "found a lookup of %s in %s%s%s that failed: this copy does not export it, so the caller expects a "
             "newer %s; load one that has it",
             name, l->path, l->version[0] ? " " : "", l->version, l->kind);
    snprintf(fix, sizeof fix, "Make the loader find a newer %s (this one came from %s), or use a caller built for "
             "this version.", l->kind, l->found_via);
    struct cs_buf jb = { ev, 0, sizeof ev - 1 };
    int first = 1;
    cs_put(&jb, "{");
    cs_put_kv(&jb, "symbol", name, &first);
    cs_put_kv(&jb, "library", l->path, &first);
    cs_put_kv(&jb, "library_version", l->version[0] ? l->version : NULL, &first);
    cs_put_kv(&jb, "found_via", l->found_via, &first);
    cs_put(&jb, "}");
    ev[jb.len] = 0;
    /* Programs probe libcuda for optional entry points: that is information, not a fault. */
    cs_finding(CS_F_MISSING_SYMBOL, !strcmp(l->kind, "driver") ? CS_INFO : CS_WARNING, name, summary, fix, ev);
    return 0;
}

/* The library a symbol belongs to, from its prefix (when the message names no version node). */
static const char *provider_of(const char *sym)
{
    static const struct { const char *prefix, *lib; } map[] = {
        { "__nvJitLink", "libnvJitLink" }, { "nvJitLink", "libnvJitLink" }, { "nvrtc", "libnvrtc" },
        { "cudnn", "libcudnn" }, { "nccl", "libnccl" }, { "cublasLt", "libcublasLt" }, { "cublas", "libcublas" },
        { "cusparse", "libcusparse" }, { "cufft", "libcufft" }, { "curand", "libcurand" },
        { "cusolver", "libcusolver" }, { "cupti", "libcupti" }, { "cuda", "libcudart" }, { "cu", "libcuda.so" },
    };
    for (size_t i = 0; i < sizeof map / sizeof *map; i++)
        if (!strncmp(sym, map[i].prefix, strlen(map[i].prefix))) return map[i].lib;
    return NULL;
}

static int is_cuda_name(const char *base) { return cs_is_cuda_library_name(base, strlen(base)); }

/* "libcuda.so" asked for where only "libcuda.so.1" exists: the unversioned name is a development
 * link that WSL's /usr/lib/wsl/lib and driver-only containers do not ship, while cuDNN 8's
 * sub-libraries and bitsandbytes dlopen it by that name. */
static int unversioned_link_missing(const struct cs_evidence *e, const char *name, char *summary, size_t scap, char *fix,
                                    size_t fcap, struct cs_buf *jb, int *first)
{
    size_t n = strlen(name);
    if (n < 4 || strcmp(name + n - 3, ".so")) return 0;
    char have[PATH_MAX] = "", entry[PATH_MAX] = "", prefix[256];
    for (int i = 0; i < e->nlibs && !have[0]; i++)
        if (!strncmp(e->libs[i].name, name, n) && e->libs[i].name[n] == '.')
            snprintf(have, sizeof have, "%s", e->libs[i].path);
    snprintf(prefix, sizeof prefix, "%s.", name);
    if (!have[0] && (!e->find_on_library_path || !e->find_on_library_path(prefix, have, sizeof have, entry, sizeof entry)))
        return 0;
    int wsl = !strncmp(have, "/usr/lib/wsl/", 13);
    snprintf(summary, scap,
             "found a load of %s that failed: the caller asks for the unversioned name, a development link, and the "
             "loader finds none; the library itself is at %s%s", name, have,
             wsl ? " (WSL's /usr/lib/wsl/lib ships only the versioned names)" : "");
    snprintf(fix, fcap,
             "Make the link where the loader looks: ln -s %s DIR/%s, with DIR a directory on LD_LIBRARY_PATH (or the "
             "system library directory, then run ldconfig); or install the development package that provides %s.",
             have, name, name);
    cs_put_kv(jb, "library", name, first);
    cs_put_kv(jb, "versioned_copy", have, first);
    return 1;
}

void cs_rule_loader_message(const struct cs_evidence *e, const char *msg, int lazy_reference)
{
    static __thread struct cs_loader_message m;  /* 8 KiB: not on a hook's stack */
    int kind = cs_loader_message_parse(msg, &m);
    char summary[3072], fix[2048], ev[3072];
    struct cs_buf jb = { ev, 0, sizeof ev - 1 };
    int first = 1;
    cs_put(&jb, "{");
    cs_put_kv(&jb, "loader_message", msg, &first);
    if (kind == CS_LOADER_UNDEFINED_SYMBOL) {
        const char *needer = m.object, *sym = m.symbol, *vernode = m.version;
        if (!is_cuda_name(cs_base_name(needer)) && !provider_of(sym)) return;
        const char *prov = vernode[0] ? vernode : provider_of(sym);
        if (!prov || !is_cuda_name(prov)) return;
        /* A lookup that found nothing ("libcuda.so.1: undefined symbol: cuFoo", from dlsym) names
         * the library searched, which is the provider itself; a failed load names the library
         * that needed the symbol. Lookups are probes (see cs_diagnose_dlsym_miss), and the shim's
         * own next-definition lookups are not the program's. */
        if (!strncmp(cs_base_name(needer), prov, strlen(prov)) || !strncmp(cs_base_name(needer), "libcudashim", 11)) return;
        /* The stale copy: the loaded library that should have provided the symbol. */
        const struct cs_library *stale = NULL;
        for (int i = 0; i < e->nlibs; i++) {
            const struct cs_library *l = &e->libs[i];
            if (!strncmp(l->name, prov, strlen(prov)) || (l->soname[0] && !strncmp(l->soname, prov, strlen(prov)))) {
                stale = l;
                break;
            }
        }
        char lp_path[PATH_MAX], lp_entry[PATH_MAX];
        int on_path = !stale && e->find_on_library_path && e->find_on_library_path(prov, lp_path, sizeof lp_path, lp_entry, sizeof lp_entry);
        if (on_path)
            snprintf(summary, sizeof summary,
                     "found %s needing %s from %s, but the %s the loader finds first, %s (LD_LIBRARY_PATH entry "
                     "%s), lacks it; load the %s that matches %s",
                     cs_base_name(needer), sym, prov, prov, lp_path, lp_entry, prov, cs_base_name(needer));
        else if (stale)
            snprintf(summary, sizeof summary,
                     "found %s needing %s from %s, but the loaded %s (%s%s%s, %s) lacks it; load the %s that "
                     "matches %s",
                     cs_base_name(needer), sym, prov, stale->name, stale->path, stale->version[0] ? " " : "",
                     stale->version, stale->found_via, prov, cs_base_name(needer));
        else
            snprintf(summary, sizeof summary, "found %s needing %s from %s, which no loaded library provides; "
                     "install the %s that matches %s", cs_base_name(needer), sym, prov, prov, cs_base_name(needer));
        if (!strncmp(prov, "libcuda.so", 10))
            snprintf(fix, sizeof fix, "%s is part of the NVIDIA driver: install a driver that provides %s (a newer "
                     "one), or use a build of %s made for the installed driver.", prov, sym, cs_base_name(needer));
        else if (on_path)
            snprintf(fix, sizeof fix, "Remove %s from LD_LIBRARY_PATH: it brings an older %s, and the copy installed "
                     "beside %s provides %s.", lp_entry, prov, cs_base_name(needer), sym);
        else if (stale && !strncmp(stale->found_via, "LD_LIBRARY_PATH entry ", 22))
            snprintf(fix, sizeof fix, "Remove %s from LD_LIBRARY_PATH: it brings the older %s, and the copy installed "
                     "beside %s provides %s.", stale->found_via + 22, stale->name, cs_base_name(needer), sym);
        else
            snprintf(fix, sizeof fix, "Install matching versions of %s and %s (for pip: upgrade both nvidia-* "
                     "packages together).", cs_base_name(needer), prov);
        if (lazy_reference) {
            size_t n = strlen(summary);
            snprintf(summary + n, sizeof summary - n, "; the reference is bound lazily, so the first call of %s "
                     "ends the process with the loader's \"symbol lookup error\" (exit status 127)", sym);
            cs_put_kv(&jb, "binding", "lazy: the first call ends the process", &first);
        }
        cs_put_kv(&jb, "needed_by", needer, &first);
        cs_put_kv(&jb, "symbol", sym, &first);
        cs_put_kv(&jb, "provider", prov, &first);
        cs_put_kv(&jb, "stale_copy", stale ? stale->path : on_path ? lp_path : NULL, &first);
        cs_put_kv(&jb, "stale_found_via", stale ? stale->found_via : on_path ? "LD_LIBRARY_PATH" : NULL, &first);
        cs_put(&jb, "}");
        ev[jb.len] = 0;
        cs_finding(CS_F_MISSING_SYMBOL, CS_ERROR, sym, summary, fix, ev);
        return;
    }
    /* "/x/libcublas.so.13: version `libcublasLt.so.13' not found (required by /x/libcublas.so.13)":
     * the copy at /x (the first path) lacks a whole version node the requester was linked against. */
    if (kind == CS_LOADER_MISSING_VERSION) {
        const char *lib = m.object, *node = m.version, *req = m.required_by;
        if (!is_cuda_name(cs_base_name(lib)) && !is_cuda_name(node)) return;
        const struct cs_library *l = cs_ev_path(e, lib);
        char where[PATH_MAX + 64];
        if (l) snprintf(where, sizeof where, "%s%s%s, %s", lib, l->version[0] ? " " : "", l->version, l->found_via);
        else snprintf(where, sizeof where, "%s", lib);
        snprintf(summary, sizeof summary,
                 "found %s needing version %s of %s, but the copy the loader found, %s, lacks it; load the %s that "
                 "matches %s", req[0] ? cs_base_name(req) : "a library", node, cs_base_name(lib), where, cs_base_name(lib),
                 req[0] ? cs_base_name(req) : "it");
        snprintf(fix, sizeof fix,
                 "Make the loader find the %s that %s was built with: remove the directory of %s from "
                 "LD_LIBRARY_PATH if it brings an older copy, or install matching versions of both (for pip: "
                 "upgrade the nvidia-* packages together).", cs_base_name(lib), req[0] ? cs_base_name(req) : "the caller", lib);
        cs_put_kv(&jb, "library", lib, &first);
        cs_put_kv(&jb, "version_node", node, &first);
        cs_put_kv(&jb, "required_by", req[0] ? req : NULL, &first);
        cs_put_kv(&jb, "library_found_via", l ? l->found_via : NULL, &first);
        cs_put(&jb, "}");
        ev[jb.len] = 0;
        cs_finding(CS_F_MISSING_SYMBOL, CS_ERROR, node, summary, fix, ev);
        return;
    }
    if (kind == CS_LOADER_NOT_FOUND) {
        const char *b = cs_base_name(m.object);
        if (!is_cuda_name(b) || !strncmp(b, "libnccl-", 8)) return;  /* NCCL probes for optional plugins */
        const char *llp = e->ld_library_path;
        if (unversioned_link_missing(e, b, summary, sizeof summary, fix, sizeof fix, &jb, &first)) {
            cs_put(&jb, "}");
            ev[jb.len] = 0;
            cs_finding(CS_F_LIBRARY_NOT_FOUND, CS_WARNING, b, summary, fix, ev);
            return;
        }
        /* Needed by an object of the load (a DT_NEEDED): the whole load failed, the program's
         * import with it. Asked for directly: perhaps a probe for an optional library. */
        const char *req = e->missing_requester, *dangling = e->missing_dangling;
        char copies[1400] = "";
        if (e->missing_copies) cs_lines_joined(copies, sizeof copies, e->missing_copies);
        if (req || dangling) {
            char what[PATH_MAX + 64];
            if (dangling) snprintf(what, sizeof what, "the link %s points at a file that is not there", dangling);
            else snprintf(what, sizeof what, "no %s on LD_LIBRARY_PATH=%s, %s's RUNPATH or the system directories", b,
                          llp ? llp : "(unset)", req ? cs_base_name(req) : "the caller");
            char needers[1024] = "";  /* base names of the requesters */
            for (const char *p = req; p && *p;) {
                size_t n = strcspn(p, ","), k = strlen(needers);
                char one[PATH_MAX];
                snprintf(one, sizeof one, "%.*s", (int)n, p);
                snprintf(needers + k, sizeof needers - k, "%s%s", k ? " and " : "", cs_base_name(one));
                p += n;
                while (*p == ',' || *p == ' ') p++;
            }
            snprintf(summary, sizeof summary, "found %s needing %s, which the loader cannot open: %s%s%s; %s",
                     req ? needers : "a load", b, what, copies[0] ? "; copies elsewhere: " : "",
                     copies, req ? "the load of everything that needs it failed with it" : "install it or fix the library path");
            if (dangling)
                snprintf(fix, sizeof fix, "Restore the file the link points at (reinstall the package that provides %s; "
                         "Debian's nvidia-cudnn downloads cuDNN when it is installed, and a failed download leaves the "
                         "link dangling)%s%s%s.", b, copies[0] ? ", or put the directory of a matching copy first on "
                         "LD_LIBRARY_PATH (" : "", copies, copies[0] ? ") if it is built for the same CUDA major" : "");
            else
                snprintf(fix, sizeof fix, "Install the package that provides %s%s%s%s.", b,
                         copies[0] ? ", or put the directory of a matching copy first on LD_LIBRARY_PATH (" : "", copies,
                         copies[0] ? ")" : "");
            cs_put_kv(&jb, "library", b, &first);
            cs_put_kv(&jb, "needed_by", req, &first);
            cs_put_kv(&jb, "dangling_link", dangling, &first);
            cs_put_kv(&jb, "copies", e->missing_copies, &first);
            cs_put(&jb, "}");
            ev[jb.len] = 0;
            cs_finding(CS_F_LIBRARY_NOT_FOUND, req ? CS_ERROR : CS_WARNING, b, summary, fix, ev);
            return;
        }
        snprintf(summary, sizeof summary,
                 "found a load of %s that failed (not found on LD_LIBRARY_PATH=%s, RUNPATH or ld.so.cache); the "
                 "caller needs it; install it or fix the library path%s%s", b, llp ? llp : "(unset)",
                 copies[0] ? "; copies elsewhere: " : "", copies);
        const struct cs_library *other = NULL;
        for (int i = 0; i < e->nlibs && !other; i++) {
            const struct cs_library *l = &e->libs[i];
            size_t k = strcspn(b, "_.");
            if (!strncmp(l->name, b, k) && strcmp(l->name, b)) other = l;
        }
        if (other)
            snprintf(fix, sizeof fix, "%s is loaded (%s), but not %s: the caller wants another version. Install the "
                     "version the caller was built for, or a caller built for the loaded one.", other->name,
                     other->path, b);
        else
            snprintf(fix, sizeof fix, "Install the package that provides %s, or add its directory to LD_LIBRARY_PATH.", b);
        cs_put_kv(&jb, "library", b, &first);
        cs_put_kv(&jb, "similar_loaded", other ? other->path : NULL, &first);
        cs_put_kv(&jb, "copies", e->missing_copies, &first);
        cs_put(&jb, "}");
        ev[jb.len] = 0;
        cs_finding(CS_F_LIBRARY_NOT_FOUND, CS_WARNING, b, summary, fix, ev);
    }
}
