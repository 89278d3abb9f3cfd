/* What is loaded, against itself: one library loaded twice, a library built for another CUDA
 * major than the runtime, and a framework that never loaded CUDA at all. */
#include <stdio.h>
#include <string.h>

#include "../base/json.h"
#include "../base/library_names.h"
#include "../trace/findings.h"
#include "../evidence/inventory.h"
#include "rules.h"

static void group_key(const struct cs_library *l, char *out, size_t cap)
{
    /* cuDNN sub-libraries are told apart by name (libcudnn_ops, libcudnn_cnn, ...). */
    if (!strcmp(l->kind, "cudnn-sublibrary")) {
        const char *so = strstr(l->name, ".so");
        snprintf(out, cap, "%.*s", so ? (int)(so - l->name) : (int)strlen(l->name), l->name);
    } else {
        snprintf(out, cap, "%s", l->kind);
    }
}

static void describe(const struct cs_library *l, char *out, size_t cap)
{
    snprintf(out, cap, "%s%s%s%s (%s)", l->path, l->version[0] ? " " : "", l->version, "", l->found_via);
}

/* Did a framework (libtorch*, TensorFlow, JAX) ask for this copy? */
static int requester_is_framework(const struct cs_evidence *e, const struct cs_library *l)
{
    const struct cs_library *r = cs_ev_path(e, l->requested_by);
    if (r) return !strcmp(r->kind, "framework");
    const char *b = cs_base_name(l->requested_by);
    return !strncmp(b, "libtorch", 8) || !strncmp(b, "libtensorflow", 13) || !strncmp(b, "libjax", 6) ||
           !strncmp(b, "_pywrap_tensorflow", 18) || !strncmp(b, "xla_extension", 13);
}

void cs_rule_duplicates(const struct cs_evidence *e)
{
    int n = e->nlibs;
    for (int i = 0; i < n; i++) {
        const struct cs_library *a = &e->libs[i];
        if (!strcmp(a->kind, "framework") || !strcmp(a->kind, "nccl-plugin")) continue;
        char ka[64], kb[64];
        group_key(a, ka, sizeof ka);
        for (int j = i + 1; j < n; j++) {
            const struct cs_library *b = &e->libs[j];
            group_key(b, kb, sizeof kb);
            if (strcmp(ka, kb) || !strcmp(a->path, b->path)) continue;
            int same_soname = a->soname[0] && !strcmp(a->soname, b->soname);
            char da[1600], db[1600], summary[4096], fix[2048], ev[4096], key[64];
            describe(a, da, sizeof da);
            describe(b, db, sizeof db);
            snprintf(summary, sizeof summary,
                     "found %s loaded twice: %s and %s; a process needs one copy (calls bind to whichever "
                     "loaded first, data passes between versions); remove one",
                     ka, da, db);
            const struct cs_library *drop = !strncmp(b->found_via, "LD_LIBRARY_PATH", 15) ? b
                                            : !strncmp(a->found_via, "LD_LIBRARY_PATH", 15) ? a : b;
            const struct cs_library *keep = drop == a ? b : a;
            if (!same_soname && a->requested_by[0] && b->requested_by[0]) {
                /* Two majors (libcudart.so.12 and .13), each asked for by name by its own object: a
                 * directory taken out of the search only makes one of them fail to load. The one
                 * to change is the object that is not the framework (an extension built for
                 * another CUDA); without a framework among them, the one needing the older copy. */
                int a_fw = requester_is_framework(e, a), b_fw = requester_is_framework(e, b);
                drop = a_fw && !b_fw ? b : b_fw && !a_fw ? a : strcmp(a->soname, b->soname) < 0 ? a : b;
                keep = drop == a ? b : a;
                snprintf(fix, sizeof fix,
                         "Rebuild %s (it needs %s) for the CUDA of %s, which %s uses (%s); taking %s out of the "
                         "library path would only make %s fail to load.",
                         cs_base_name(drop->requested_by), drop->name, keep->name, cs_base_name(keep->requested_by),
                         keep->path, drop->path, cs_base_name(drop->requested_by));
            } else if (!strncmp(drop->found_via, "LD_LIBRARY_PATH entry ", 22))
                snprintf(fix, sizeof fix, "Remove %s from LD_LIBRARY_PATH so that only %s is loaded.",
                         drop->found_via + 22, keep->path);
            else
                snprintf(fix, sizeof fix,
                         "Make only one copy findable: uninstall one of them, or change what brought %s (%s), so "
                         "that only %s is loaded.", drop->path, drop->found_via, keep->path);
            struct cs_buf jb = { ev, 0, sizeof ev - 1 };
            int first = 1;
            cs_put(&jb, "{");
            cs_put_kv(&jb, "first_path", a->path, &first);
            cs_put_kv(&jb, "first_version", a->version[0] ? a->version : NULL, &first);
            cs_put_kv(&jb, "first_found_via", a->found_via, &first);
            cs_put_kv(&jb, "second_path", b->path, &first);
            cs_put_kv(&jb, "second_version", b->version[0] ? b->version : NULL, &first);
            cs_put_kv(&jb, "second_found_via", b->found_via, &first);
            cs_put_kv(&jb, "first_requested_by", a->requested_by[0] ? a->requested_by : NULL, &first);
            cs_put_kv(&jb, "second_requested_by", b->requested_by[0] ? b->requested_by : NULL, &first);
            cs_put(&jb, "}");
            ev[jb.len] = 0;
            snprintf(key, sizeof key, "%s", ka);
            /* One soname twice: calls bind to the first copy loaded. Harmful when that copy is older
             * or of another CUDA major than the other (what its callers were built against); the
             * same library, not older and for the same major, still splits state: a warning. */
            const struct cs_library *fw = cs_ev_kind(e, "framework", 0);
            char why[300];
            enum cs_severity sev = CS_WARNING;
            if (same_soname && cs_compare_copies(a->version, a->built_for_cuda, b->version, b->built_for_cuda,
                                                 fw ? fw->built_for_cuda : 0, why, sizeof why) != CS_COPIES_COMPATIBLE) {
                sev = CS_ERROR;
                size_t k = strlen(summary);
                snprintf(summary + k, sizeof summary - k, " (the first, which calls bind to: %s)", why);
            }
            cs_finding(CS_F_LIBRARY_LOADED_TWICE, sev, key, summary, fix, ev);
        }
    }
}

static void major_mismatch(const struct cs_library *l, int built_for, int runtime, const char *runtime_path,
                           const char *how)
{
    if (!built_for || !runtime || built_for / 1000 == runtime / 1000) return;
    char b[16], r[16], summary[2048], fix[1024], ev[2048];
    cs_cuda_text(b, sizeof b, built_for);
    cs_cuda_text(r, sizeof r, runtime);
    snprintf(summary, sizeof summary,
             "found %s %s at %s, which is built for CUDA %d (%s); the loaded runtime is CUDA %s (%s); install the %s "
             "build for CUDA %d",
             l->kind, l->version, l->path, built_for / 1000, how, r, runtime_path, l->kind, runtime / 1000);
    snprintf(fix, sizeof fix,
             "Install the %s build made for CUDA %d (for pip: the -cu%d package) and remove the CUDA %d copy from "
             "the library path (%s).", l->kind, runtime / 1000, runtime / 1000, built_for / 1000, l->found_via);
    struct cs_buf jb = { ev, 0, sizeof ev - 1 };
    int first = 1;
    cs_put(&jb, "{");
    cs_put_kv(&jb, "library", l->path, &first);
    cs_put_kv(&jb, "library_version", l->version[0] ? l->version : NULL, &first);
    cs_put_kv(&jb, "built_for_cuda", b, &first);
    cs_put_kv(&jb, "seen_by", how, &first);
    cs_put_kv(&jb, "runtime", runtime_path, &first);
    cs_put_kv(&jb, "runtime_cuda", r, &first);
    cs_put(&jb, "}");
    ev[jb.len] = 0;
    cs_finding(CS_F_LIBRARY_CUDA_MAJOR_MISMATCH, CS_WARNING, l->path, summary, fix, ev);
}

void cs_rule_majors(const struct cs_evidence *e)
{
    const struct cs_library *rt = cs_ev_kind(e, "cudart", 0);
    int runtime = rt && rt->code > 0 ? (int)rt->code : 0;
    const char *rt_path = rt ? rt->path : NULL;
    if (!runtime) return;
    /* Only libraries that are the CUDA release's own, linked by whoever needs that major's API. cuDNN
     * 9 and NCCL carry their own runtime (they need no libcudart): their CUDA decides only the
     * driver they need, which driver-too-old says; a mismatch with the process's runtime is none. */
    for (int i = 0; i < e->nlibs; i++) {
        const struct cs_library *l = &e->libs[i];
        /* one the LD_LIBRARY_PATH entry that put others aside brought: library-shadowed says it */
        if (!strncmp(l->found_via, "LD_LIBRARY_PATH entry ", 22) && cs_ev_entry_shadows(e, l->found_via + 22)) continue;
        if (!strcmp(l->kind, "cublas") || !strcmp(l->kind, "cublasLt") || !strcmp(l->kind, "nvrtc") ||
            !strcmp(l->kind, "nvJitLink"))
            major_mismatch(l, (int)l->code, runtime, rt_path, "its version");
    }
}

/* Only a process that imported a framework counts: under `cudashim run` the launcher, shell
 * wrappers (pyenv, conda) and helper processes load no CUDA either, and that is no fault. */
void cs_rule_no_cuda(const struct cs_evidence *e)
{
    if (!e->expect_gpu || cs_ev_kind(e, "driver", 0) || cs_ev_kind(e, "cudart", 0)) return;
    const struct cs_library *fw = cs_ev_kind(e, "framework", 0);
    if (!fw) return;
    char summary[2048], ev[2048];
    snprintf(summary, sizeof summary,
             "found %s (%s) but no CUDA library was ever loaded (no libcuda, no libcudart); the installed build "
             "is CPU-only; install the CUDA build", fw->name, fw->path);
    struct cs_buf jb = { ev, 0, sizeof ev - 1 };
    int first = 1;
    cs_put(&jb, "{");
    cs_put_kv(&jb, "framework", fw ? fw->path : NULL, &first);
    cs_put(&jb, "}");
    ev[jb.len] = 0;
    cs_finding(CS_F_NO_CUDA_LOADED, CS_ERROR, "no-cuda", summary,
               "Install the framework's CUDA build (for PyTorch: pip install torch --index-url "
               "https://download.pytorch.org/whl/cu130, or the cuXXX your driver supports) and check that "
               "`python -c 'import torch; print(torch.version.cuda)'` prints a version.", ev);
}
