/* Parsing what a framework wrote about its own build (build_info.h). */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "build_info.h"

int cs_build_info_cuda(const char *text)
{
    static const char key[] = "cuda_version";
    for (const char *at = text ? strstr(text, key) : NULL; at; at = strstr(at + 1, key)) {
        const char *p = at + sizeof key - 1;
        if (*p != '\'' && *p != '"') continue;  /* a longer name (cuda_version_number) */
        /* Between the key and its value: quotes, brackets, separators and blanks only. */
        int gap = 0;
        while (*p && strchr("'\"]):,= \t", *p) && gap < 12) p++, gap++;
        if (!isdigit((unsigned char)*p)) continue;
        int major = 0, minor = 0;
        while (isdigit((unsigned char)*p) && major < 1000) major = major * 10 + (*p++ - '0');
        if (*p == '.') {
            p++;
            while (isdigit((unsigned char)*p) && minor < 1000) minor = minor * 10 + (*p++ - '0');
        }
        if ((*p != '\'' && *p != '"' && *p != '.') || major < 7 || major > 99 || minor > 9) return 0;
        return major * 1000 + minor * 10;
    }
    return 0;
}

/* The quoted value of `name` in an assignment (name = '...', name: Optional[str] = '...'). */
static int assigned(const char *text, const char *name, char *out, size_t cap)
{
    size_t n = strlen(name);
    for (const char *at = text ? strstr(text, name) : NULL; at; at = strstr(at + 1, name)) {
        if (at > text && at[-1] != '\n') continue;  /* at the start of a line */
        const char *p = at + n;
        if (*p != ' ' && *p != ':' && *p != '=') continue;
        const char *eq = strchr(p, '=');
        const char *eol = strchr(p, '\n');
        if (!eq || (eol && eq > eol)) continue;
        p = eq + 1;
        while (*p == ' ') p++;
        if (*p != '\'' && *p != '"') return 0;  /* None: a CPU build */
        char q = *p++;
        size_t k = 0;
        while (*p && *p != q && *p != '\n' && k + 1 < cap) out[k++] = *p++;
        out[k] = 0;
        return *p == q && k > 0;
    }
    return 0;
}

int cs_torch_version_py(const char *text, char *version, size_t cap)
{
    char cuda[16];
    if (!assigned(text, "__version__", version, cap)) return -1;
    if (!assigned(text, "cuda", cuda, sizeof cuda)) return 0;
    int major = 0, minor = 0;
    if (sscanf(cuda, "%d.%d", &major, &minor) < 1 || major < 7 || major > 99 || minor < 0 || minor > 9) return 0;
    return major * 1000 + minor * 10;
}
