/* Parsing what a framework wrote about its own build (build_info.h). */
#include <ctype.h>
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
