/* What a bug report must never carry: values of variables (or --options) named like secrets,
 * credentials inside URLs, the user's home directory, and (on request) host names. */
#include <ctype.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "redact.h"

static const char *const secret_words[] = { "TOKEN", "KEY", "SECRET", "PASS", "CREDENTIAL", "AUTH", "PRIVATE" };
static const char *const mark = "[redacted]";

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

/* Replace s[start, end) with `with`; returns the (possibly moved) string. */
static char *splice(char *s, size_t start, size_t end, const char *with)
{
    size_t len = strlen(s), wl = strlen(with);
    char *n = malloc(len - (end - start) + wl + 1);
    memcpy(n, s, start);
    memcpy(n + start, with, wl);
    memcpy(n + start + wl, s + end, len - end + 1);
    free(s);
    return n;
}

static int value_char(char c) { return c && !isspace((unsigned char)c) && !strchr("\"'`|,;)", c); }

/* scheme://user:password@host -> scheme://[redacted]@host. A password may hold '/' and '@':
 * the credentials end at the last '@' of the URL, if a ':' comes before it. */
static char *url_credentials(char *s)
{
    for (char *p = strstr(s, "://"); p; p = strstr(s + (p - s) + 3, "://")) {
        size_t at = (size_t)(p - s), start = at + 3, end = start, last_at = 0, colon = 0;
        for (; s[end] && !strchr(" \t\n\"'`|,", s[end]); end++) {
            if (s[end] == '@') last_at = end;
            if (s[end] == ':' && !colon) colon = end;
        }
        if (last_at > start && colon && colon < last_at && strncmp(s + start, mark, strlen(mark)))
            s = splice(s, start, last_at, mark);
        p = s + at;
    }
    return s;
}

/* Tokens recognisable by their shape, wherever they stand (an argument, a header value). */
static int token_at(const char *s, size_t *len)
{
    static const struct { const char *prefix; size_t min; } shapes[] = {
        { "hf_", 20 }, { "ghp_", 20 }, { "gho_", 20 }, { "ghs_", 20 }, { "ghu_", 20 }, { "github_pat_", 20 },
        { "glpat-", 16 }, { "xoxb-", 16 }, { "xoxp-", 16 }, { "sk-", 20 }, { "AKIA", 16 }, { "ASIA", 16 },
    };
    for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++) {
        size_t pl = strlen(shapes[k].prefix), n = 0;
        if (strncmp(s, shapes[k].prefix, pl)) continue;
        while (isalnum((unsigned char)s[pl + n]) || s[pl + n] == '_' || s[pl + n] == '-') n++;
        if (n >= shapes[k].min) { *len = pl + n; return 1; }
    }
    return 0;
}

static char *tokens(char *s)
{
    for (size_t i = 0; s[i]; i++) {
        size_t len;
        if ((i && (isalnum((unsigned char)s[i - 1]) || s[i - 1] == '_')) || !token_at(s + i, &len)) continue;
        s = splice(s, i, i + len, mark);
        i += strlen(mark) - 1;
    }
    return s;
}

/* "Authorization: Bearer X", "Bearer X", "Basic X", and a password given as -p X or -pX. */
static char *schemes_and_flags(char *s)
{
    static const char *const words[] = { "Bearer ", "Basic ", "bearer ", "basic " };
    for (size_t k = 0; k < sizeof words / sizeof *words; k++)
        for (char *p = strstr(s, words[k]); p; p = strstr(s + (p - s) + 1, words[k])) {
            size_t at = (size_t)(p - s), start = at + strlen(words[k]), end = start;
            while (value_char(s[end])) end++;
            if (end > start && strncmp(s + start, mark, strlen(mark))) s = splice(s, start, end, mark);
            p = s + at;
        }
    for (size_t i = 0; s[i] && s[i + 1]; i++) {
        if (s[i] != '-' || s[i + 1] != 'p' || (i && !strchr(" \t\"[,", s[i - 1]))) continue;
        size_t start = i + 2;
        if (s[start] == '"' && s[start + 1] == ',') start += 2;  /* the next argv element */
        while (s[start] == ' ' || s[start] == '"') start++;
        size_t end = start;
        while (value_char(s[end])) end++;
        if (end > start && strncmp(s + start, mark, strlen(mark))) s = splice(s, start, end, mark);
    }
    return s;
}

/* "password": "value" in JSON text: the quoted value of a secret-looking key. */
static char *json_pairs(char *s)
{
    for (size_t i = 0; s[i]; i++) {
        if (s[i] != '"' || !i) continue;
        size_t n = i;  /* s[i] closes a key? find its opening quote */
        while (n > 0 && s[n - 1] != '"') n--;
        if (!n || !redact_is_secret_name(s + n, i - n)) continue;
        size_t c = i + 1;
        while (s[c] == ' ' || s[c] == '\\') c++;
        if (s[c] != ':') continue;
        c++;
        while (s[c] == ' ' || s[c] == '\\') c++;
        if (s[c] != '"') continue;
        size_t start = c + 1, end = start;
        while (s[end] && s[end] != '"' && s[end] != '\\') end++;
        if (end > start && strncmp(s + start, mark, strlen(mark))) s = splice(s, start, end, mark);
    }
    return s;
}

/* NAME=value and --name=value where NAME looks secret: value -> [redacted]. */
static char *assignments(char *s)
{
    for (size_t i = 0; s[i]; i++) {
        if (s[i] != '=') continue;
        size_t n = i;
        while (n > 0 && (isalnum((unsigned char)s[n - 1]) || s[n - 1] == '_' || s[n - 1] == '-')) n--;
        if (n == i || !redact_is_secret_name(s + n, i - n)) continue;
        size_t ve = i + 1;
        while (value_char(s[ve])) ve++;
        if (ve == i + 1 || !strncmp(s + i + 1, mark, strlen(mark))) continue;
        s = splice(s, i + 1, ve, mark);
    }
    return s;
}

static char *homes(char *s)
{
    const char *home = getenv("HOME");
    if (home && strlen(home) > 1) {
        size_t hl = strlen(home);
        for (char *p = strstr(s, home); p; p = strstr(s + (p - s) + 1, home)) {
            char c = p[hl];
            if (c && c != '/' && value_char(c)) continue;
            size_t at = (size_t)(p - s);
            s = splice(s, at, at + hl, "~");
            p = s + at;
        }
    }
    static const char *const bases[] = { "/home/", "/Users/" };
    for (size_t k = 0; k < 2; k++)
        for (char *p = strstr(s, bases[k]); p; p = strstr(s + (p - s) + 1, bases[k])) {
            size_t at = (size_t)(p - s), end = at + strlen(bases[k]);
            while (s[end] && s[end] != '/' && value_char(s[end])) end++;
            s = splice(s, at, end, "~");
            p = s + at;
        }
    return s;
}

static char *hosts(char *s, const struct redact_opts *o)
{
    for (int h = 0; o && h < o->nhosts; h++) {
        const char *host = o->hosts[h];
        size_t hl = strlen(host);
        if (!hl) continue;
        char repl[32];
        snprintf(repl, sizeof repl, "host-%d", h + 1);
        for (char *p = strstr(s, host); p; p = strstr(s + (p - s) + 1, host)) {
            size_t at = (size_t)(p - s);
            /* whole names only: "vm" must not eat the "vm" inside another word */
            if ((at && (isalnum((unsigned char)s[at - 1]) || s[at - 1] == '.')) || isalnum((unsigned char)s[at + hl])) continue;
            s = splice(s, at, at + hl, repl);
            p = s + at;
        }
    }
    return s;
}

char *redact_text(const char *in, const struct redact_opts *o)
{
    char *s = strdup(in);
    s = url_credentials(s);
    s = tokens(s);
    s = schemes_and_flags(s);
    s = json_pairs(s);
    s = assignments(s);
    s = homes(s);
    return hosts(s, o);
}
