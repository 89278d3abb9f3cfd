/* What a bug report must never carry: values of variables (or --options) named like secrets,
 * credentials inside URLs, the user's home directory, and (on request) host names. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "redact.h"

static const char *const secret_words[] = { "TOKEN", "KEY", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH" };

int redact_is_secret_name(const char *name, size_t len)
{
    char up[256];
    if (len >= sizeof up) len = sizeof up - 1;
    for (size_t i = 0; i < len; i++) up[i] = (char)toupper((unsigned char)name[i]);
    up[len] = 0;
    for (size_t i = 0; i < sizeof secret_words / sizeof *secret_words; i++)
        if (strstr(up, secret_words[i])) return 1;
    return 0;
}

/* In place: scheme://user:password@host -> scheme://[redacted]@host */
static void url_credentials(char *s)
{
    for (char *p = strstr(s, "://"); p; p = strstr(p + 3, "://")) {
        char *start = p + 3, *end = start;
        while (*end && !strchr("/@ \t\"'", *end)) end++;
        if (*end != '@' || end == start) continue;
        const char *mark = "[redacted]";
        size_t ml = strlen(mark), old = (size_t)(end - start);
        if (ml <= old) {
            memcpy(start, mark, ml);
            memmove(start + ml, end, strlen(end) + 1);
        } else {
            continue;  /* never grow the buffer: too short to hold a real credential anyway */
        }
    }
}

/* NAME=value and --name=value where NAME looks secret: value -> [redacted] (in place). */
static void assignments(char *s)
{
    for (char *eq = strchr(s, '='); eq; eq = strchr(eq + 1, '=')) {
        char *n = eq;
        while (n > s && (isalnum((unsigned char)n[-1]) || n[-1] == '_' || n[-1] == '-')) n--;
        if (n == eq || !redact_is_secret_name(n, (size_t)(eq - n))) continue;
        char *v = eq + 1, *ve = v;
        while (*ve && !isspace((unsigned char)*ve) && *ve != '"' && *ve != '\'' && *ve != ',') ve++;
        const char *mark = "[redacted]";
        size_t ml = strlen(mark), old = (size_t)(ve - v);
        if (old == 0) continue;
        if (ml <= old) {
            memcpy(v, mark, ml);
            memmove(v + ml, ve, strlen(ve) + 1);
        } else {
            memset(v, '*', old);
        }
    }
}

char *redact_text(const char *in, const struct redact_opts *o)
{
    size_t cap = strlen(in) * 2 + 64;
    char *s = malloc(cap);
    strcpy(s, in);
    url_credentials(s);
    assignments(s);
    /* Home directories: the reader's $HOME, and any /home/NAME or /Users/NAME. */
    const char *home = getenv("HOME");
    const char *prefixes[] = { home && strlen(home) > 1 ? home : NULL, "/home/", "/Users/" };
    for (size_t k = 0; k < 3; k++) {
        if (!prefixes[k]) continue;
        for (char *p = strstr(s, prefixes[k]); p; p = strstr(p + 1, prefixes[k])) {
            char *end = p + strlen(prefixes[k]);
            if (k > 0) while (*end && *end != '/' && !isspace((unsigned char)*end) && *end != '"') end++;
            else if (*end && *end != '/' && !isspace((unsigned char)*end) && *end != '"') continue;
            *p = '~';
            memmove(p + 1, end, strlen(end) + 1);
        }
    }
    for (int h = 0; o && h < o->nhosts; h++) {
        const char *host = o->hosts[h];
        size_t hl = strlen(host);
        if (!hl) continue;
        char repl[32];
        snprintf(repl, sizeof repl, "host-%d", h + 1);
        size_t rl = strlen(repl);
        for (char *p = strstr(s, host); p; p = strstr(p + 1, host)) {
            /* whole names only: "vm" must not eat the "vm" inside another word */
            if ((p > s && (isalnum((unsigned char)p[-1]) || p[-1] == '.')) || isalnum((unsigned char)p[hl])) continue;
            size_t need = strlen(s) - hl + rl + 1;
            if (need > cap) break;
            memmove(p + rl, p + hl, strlen(p + hl) + 1);
            memcpy(p, repl, rl);
        }
    }
    return s;
}
