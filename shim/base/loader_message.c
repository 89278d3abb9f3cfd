/* The texts the shim reads from outside and must never trust: the loader's error messages
 * (dlerror) and the kernel module's version file. Pure functions: no I/O, no allocation, every
 * field cut to its buffer; `make fuzz` runs them on arbitrary bytes. */
#include <stdio.h>
#include <string.h>

#include "loader_message.h"

static void copy(char *out, size_t cap, const char *s, size_t n)
{
    if (n >= cap) n = cap - 1;
    memcpy(out, s, n);
    out[n] = 0;
}

/* "/x/libfoo.so: undefined symbol: bar, version libbaz.so.1"
 * "/x/libcublas.so.13: version `libcublasLt.so.13' not found (required by /x/libcublas.so.13)"
 * "libcudnn_cnn_infer.so.8: cannot open shared object file: No such file or directory" */
int cs_loader_message_parse(const char *msg, struct cs_loader_message *m)
{
    memset(m, 0, sizeof *m);
    const char *u = strstr(msg, ": undefined symbol: ");
    if (u) {
        m->kind = CS_LOADER_UNDEFINED_SYMBOL;
        copy(m->object, sizeof m->object, msg, (size_t)(u - msg));
        const char *s = u + strlen(": undefined symbol: ");
        const char *comma = strstr(s, ", version ");
        copy(m->symbol, sizeof m->symbol, s, comma ? (size_t)(comma - s) : strlen(s));
        if (comma) copy(m->version, sizeof m->version, comma + 10, strlen(comma + 10));
        return m->kind;
    }
    const char *vn = strstr(msg, ": version `");
    if (vn) {
        const char *n0 = vn + strlen(": version `"), *n1 = strchr(n0, '\'');
        if (!n1) return m->kind = CS_LOADER_NONE;
        m->kind = CS_LOADER_MISSING_VERSION;
        copy(m->object, sizeof m->object, msg, (size_t)(vn - msg));
        copy(m->version, sizeof m->version, n0, (size_t)(n1 - n0));
        const char *r0 = strstr(n1, "(required by ");
        if (r0) {
            r0 += strlen("(required by ");
            const char *r1 = strrchr(r0, ')');
            copy(m->required_by, sizeof m->required_by, r0, r1 ? (size_t)(r1 - r0) : strlen(r0));
        }
        return m->kind;
    }
    const char *c = strstr(msg, ": cannot open shared object file");
    if (c) {
        m->kind = CS_LOADER_NOT_FOUND;
        copy(m->object, sizeof m->object, msg, (size_t)(c - msg));
        return m->kind;
    }
    return m->kind = CS_LOADER_NONE;
}

/* "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06  Sun Jul 27 ..." -> "580.65.06"
 * (also "Open Kernel Module"). 1 when a version was found. */
int cs_nvrm_version_parse(const char *buf, char *out, size_t cap)
{
    const char *p = strstr(buf, "Kernel Module");
    if (!p || !cap) return 0;
    p += strlen("Kernel Module");
    while (*p == ' ') p++;
    size_t k = 0;
    while ((p[k] >= '0' && p[k] <= '9') || p[k] == '.') k++;
    if (!k || k >= cap) return 0;
    copy(out, cap, p, k);
    return 1;
}
