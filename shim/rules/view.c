/* Reading the evidence: lookups in the loaded libraries, and the texts every rule says the same
 * way (a CUDA version, the driver, the minimum driver for a CUDA). */
#include <stdio.h>
#include <string.h>

#include "../base/json.h"
#include "../base/reference_data.h"
#include "../evidence/inventory.h"
#include "rules.h"

const struct cs_library *cs_ev_kind(const struct cs_evidence *e, const char *kind, int nth)
{
    for (int i = 0; i < e->nlibs; i++)
        if (!strcmp(e->libs[i].kind, kind) && nth-- == 0) return &e->libs[i];
    return NULL;
}

const struct cs_library *cs_ev_path(const struct cs_evidence *e, const char *path)
{
    if (!path || !*path) return NULL;
    for (int i = 0; i < e->nlibs; i++)
        if (!strcmp(e->libs[i].path, path) || !strcmp(e->libs[i].name_path, path)) return &e->libs[i];
    char real[4096];
    if (!e->real_path || !e->real_path(path, real, sizeof real) || !strcmp(real, path)) return NULL;
    for (int i = 0; i < e->nlibs; i++)
        if (!strcmp(e->libs[i].path, real)) return &e->libs[i];
    return NULL;
}

int cs_ev_driver_cuda(const struct cs_evidence *e)
{
    if (e->driver_version) return e->driver_version;
    const struct cs_library *d = cs_ev_kind(e, "driver", 0);
    return d && d->code > 0 ? (int)d->code : 0;
}

void cs_cuda_text(char *out, size_t cap, int code)
{
    snprintf(out, cap, "%d.%d", code / 1000, (code % 1000) / 10);
}

void cs_ev_driver_text(const struct cs_evidence *e, char *out, size_t cap)
{
    char c[16];
    const struct cs_library *d = cs_ev_kind(e, "driver", 0);
    cs_cuda_text(c, sizeof c, cs_ev_driver_cuda(e));
    if (d && d->file_version[0]) snprintf(out, cap, "CUDA %s (libcuda %s)", c, d->file_version);
    else snprintf(out, cap, "CUDA %s", c);
}

/* "Linux >= 580.65.06; no Windows driver" for the major of `cuda` (or its exact toolkit row). */
void cs_min_driver_text(char *out, size_t cap, int cuda, int exact, const char **lin, const char **win)
{
    const struct cs_ref_driver *r = exact ? cs_ref_toolkit_for(cuda) : NULL;
    if (!r) r = cs_ref_floor_for(cuda);
    char c[16];
    cs_cuda_text(c, sizeof c, cuda);
    *lin = r ? r->linux_min : NULL;
    *win = r ? r->windows_min : NULL;
    if (!r) snprintf(out, cap, "a driver for CUDA %s or later", c);
    else snprintf(out, cap, "Linux >= %s; %s%s", r->linux_min ? r->linux_min : "?",
                  r->windows_min ? "Windows >= " : "no Windows driver", r->windows_min ? r->windows_min : "");
}

void cs_put_kv(struct cs_buf *b, const char *k, const char *v, int *first)
{
    if (!*first) cs_put(b, ",");
    *first = 0;
    cs_put_str(b, k);
    cs_put(b, ":");
    if (v) cs_put_str(b, v); else cs_put(b, "null");
}

void cs_lines_joined(char *out, size_t cap, const char *lines)
{
    size_t n = 0;
    out[0] = 0;
    for (const char *p = lines; p && *p && n + 1 < cap;) {
        size_t k = strcspn(p, "\n");
        n += (size_t)snprintf(out + n, cap - n, "%s%.*s", n ? ", " : "", (int)k, p);
        if (n >= cap) { out[cap - 1] = 0; break; }
        p += k + (p[k] == '\n');
    }
}
