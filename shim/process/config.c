/* CUDASHIM_* variables: parsed once at first use; garbage gets one warning and the default. */
#include <fcntl.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "process.h"
#include "state.h"

const struct cs_var cs_vars[CS_CFG_COUNT] = {
#define CS_VAR(name, type, def, doc) { #name, CS_##type, def, doc },
#include "config_table.h"
#undef CS_VAR
};

struct cs_config cs_cfg;
int cs_disabled;  /* CUDASHIM_DISABLE, or a failed start: set by init.c */

static void warn(const char *name, const char *val, const char *want)
{
    char line[512];
    int n = snprintf(line, sizeof line, "cudashim: ignoring CUDASHIM_%s=\"%.200s\" (expected %s); using the default\n",
                     name, val, want);
    if (n > 0)
        (void)!write(2, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

int cs_parse_bool(const char *s, int *out)
{
    static const char *yes[] = { "1", "true", "yes", "on" }, *no[] = { "0", "false", "no", "off", "" };
    for (size_t i = 0; i < sizeof yes / sizeof *yes; i++)
        if (!strcasecmp(s, yes[i])) return *out = 1, 1;
    for (size_t i = 0; i < sizeof no / sizeof *no; i++)
        if (!strcasecmp(s, no[i])) return *out = 0, 1;
    return 0;
}

/* AT_SECURE: the kernel says the process gained privileges at exec (setuid, setgid, file
 * capabilities); its environment is its unprivileged caller's, and /etc/ld.so.preload still
 * loads the shim into it. */
int cs_secure(void)
{
    return getauxval(AT_SECURE) != 0;
}

/* CS_CONFIG_FILE, read once: lines CUDASHIM_NAME=value, '#' comments; a node's defaults under
 * the environment's, and a privileged process's only settings. Taken only from a regular file
 * owned by root that no one else may write, so no user can plant it. */
static struct { const char *name, *value; } secure_settings[64];
static int secure_count;
static char secure_text[16384];

static void say(const char *msg)
{
    (void)!write(2, msg, strlen(msg));
}

static void read_secure_config(void)
{
    int fd = open(CS_CONFIG_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return;
    struct stat st;
    ssize_t n = -1;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022))
        say("cudashim: ignoring " CS_CONFIG_FILE ": it must be a regular file owned by root and writable by no one else\n");
    else
        n = read(fd, secure_text, sizeof secure_text - 1);
    close(fd);
    if (n <= 0) return;
    secure_text[n] = 0;
    for (char *line = secure_text, *next; line && secure_count < (int)(sizeof secure_settings / sizeof *secure_settings); line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = 0;
        size_t len = strlen(line);
        while (len && (line[len - 1] == ' ' || line[len - 1] == '\t' || line[len - 1] == '\r')) line[--len] = 0;
        line += strspn(line, " \t");
        char *eq = strchr(line, '=');
        if (*line == '#' || !eq || strncmp(line, "CUDASHIM_", 9)) continue;
        *eq = 0;
        secure_settings[secure_count].name = line;
        secure_settings[secure_count++].value = eq + 1;
    }
}

const char *cs_setting(const char *name)
{
    const char *env = cs_secure() ? NULL : getenv(name);
    if (env) return env;
    static int _Atomic state;  /* 0 unread, 1 being read, 2 read */
    int zero = 0;
    if (atomic_compare_exchange_strong(&state, &zero, 1)) {
        read_secure_config();
        atomic_store(&state, 2);
    }
    /* Another thread is reading it; never wait for ever (a signal handler on the reading thread
     * itself would): after about a second the file counts as absent for this one question. */
    for (int i = 0; atomic_load(&state) != 2 && i < 1000000; i++) sched_yield();
    if (atomic_load(&state) != 2) return NULL;
    const char *v = NULL;
    for (int i = 0; i < secure_count; i++)
        if (!strcmp(secure_settings[i].name, name)) v = secure_settings[i].value;  /* the last one counts */
    return v;
}

int cs_env_disabled(void)
{
    const char *v = cs_setting("CUDASHIM_DISABLE");
    int disabled = 0;
    return v && cs_parse_bool(v, &disabled) && disabled;
}

static int parse_count(const char *s, uint64_t *out)
{
    char *end;
    if (!*s || *s == '-') return 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end || v == 0 || v > (1ULL << 32)) return 0;
    *out = v;
    return 1;
}

static const char *enum_choices(int i)
{
    return i == CS_CFG_CLOCK ? "auto, tsc or monotonic" : i == CS_CFG_UNWINDER ? "auto or backtrace" : "";
}

/* Exactly one of the listed words: "tsc or" is not a choice. */
static int enum_ok(int i, const char *s)
{
    static const char *const clocks[] = { "auto", "tsc", "monotonic", NULL }, *const unwinders[] = { "auto", "backtrace", NULL };
    const char *const *w = i == CS_CFG_CLOCK ? clocks : i == CS_CFG_UNWINDER ? unwinders : NULL;
    for (; w && *w; w++)
        if (!strcmp(s, *w)) return 1;
    return 0;
}

/* A duration in seconds: a plain decimal number from 0.1 to a week. Not "inf", not "1e-12"
 * (a watchdog that reports every call), not negative. */
static int parse_seconds(const char *s, double *out)
{
    char *end;
    if (!*s || strspn(s, "0123456789.") != strlen(s)) return 0;
    double v = strtod(s, &end);
    if (*end || !(v >= 0.1 && v <= 7 * 86400.0)) return 0;
    *out = v;
    return 1;
}

/* A size: digits with an optional K, M or G (powers of 1024), at least 1 MiB, below 1 TiB. */
static int parse_bytes(const char *s, uint64_t *out)
{
    char *end;
    if (!*s || !strchr("0123456789", *s)) return 0;
    unsigned long long v = strtoull(s, &end, 10);
    unsigned long long mul = !*end ? 1 : !strcmp(end, "K") || !strcmp(end, "k") ? 1ULL << 10 :
                             !strcmp(end, "M") || !strcmp(end, "m") ? 1ULL << 20 : !strcmp(end, "G") || !strcmp(end, "g") ? 1ULL << 30 : 0;
    if (!mul || v > (1ULL << 40) / mul || v * mul < (1ULL << 20) || v * mul >= (1ULL << 40)) return 0;
    *out = v * mul;
    return 1;
}

/* Whether s is a value CUDASHIM_<cs_vars[i]> accepts (the same checks as at start-up). */
int cs_config_value_ok(int i, const char *s)
{
    int b;
    uint64_t n;
    double d;
    switch (cs_vars[i].type) {
    case CS_BOOL: return cs_parse_bool(s, &b);
    case CS_COUNT: return parse_count(s, &n);
    case CS_ENUM: return enum_ok(i, s);
    case CS_SECONDS: return !*s || parse_seconds(s, &d);
    case CS_BYTES: return !*s || parse_bytes(s, &n);
    case CS_STRING: return 1;
    }
    return 0;
}

static const char *value(int i)
{
    char name[64];
    snprintf(name, sizeof name, "CUDASHIM_%s", cs_vars[i].name);
    return cs_setting(name);
}

void cs_config_load(void)
{
    for (int i = 0; i < CS_CFG_COUNT; i++) {
        const struct cs_var *v = &cs_vars[i];
        const char *s = value(i), *d = v->def;
        int b = 0;
        uint64_t n = 0;
        if (v->type == CS_BOOL && s && !cs_parse_bool(s, &b)) warn(v->name, s, "0 or 1"), s = NULL;
        if (v->type == CS_COUNT && s && !parse_count(s, &n)) warn(v->name, s, "a positive integer"), s = NULL;
        if (v->type == CS_ENUM && s && !enum_ok(i, s)) warn(v->name, s, enum_choices(i)), s = NULL;
        double secs = 0;
        if (v->type == CS_SECONDS && s && *s && !parse_seconds(s, &secs))
            warn(v->name, s, "a number of seconds from 0.1 to 604800"), s = NULL;
        uint64_t bytes = 0;
        if (v->type == CS_BYTES && s && *s && !parse_bytes(s, &bytes))
            warn(v->name, s, "a size of at least 1M (e.g. 500M or 2G)"), s = NULL;
        if (v->type == CS_STRING && s && !*s) s = NULL;
        if (!s) s = d;
        if (v->type == CS_SECONDS && s == d && *s) parse_seconds(s, &secs);
        if (v->type == CS_BOOL) cs_parse_bool(s, &b);
        if (v->type == CS_COUNT) parse_count(s, &n);
        switch (i) {
        case CS_CFG_DISABLE: cs_cfg.disable = b; break;
        case CS_CFG_TRACE_FILE: cs_cfg.trace_file = s; break;
        /* A privileged process never writes where its caller stands: its trace goes only where
         * the configuration file says, by an absolute directory. */
        case CS_CFG_TRACE_DIR: cs_cfg.trace_dir = cs_secure() && (s == d || *s != '/') ? NULL : s; break;
        case CS_CFG_GROUP_READABLE: cs_cfg.group_readable = b; break;
        case CS_CFG_TRACE_ALL: cs_cfg.trace_all = b; break;
        case CS_CFG_TRACE_MAX: cs_cfg.trace_max = bytes; break;
        case CS_CFG_RING_SIZE: cs_cfg.ring_size = n; break;
        case CS_CFG_SUMMARY: cs_cfg.summary = b; break;
        case CS_CFG_STDERR: cs_cfg.stderr_on = b; break;
        case CS_CFG_MAX_ERRORS_PER_API: cs_cfg.max_errors_per_api = n; break;
        case CS_CFG_MAX_KEY_CALLS_PER_API: cs_cfg.max_key_calls_per_api = n; break;
        case CS_CFG_CLOCK: cs_cfg.clock = s; break;
        case CS_CFG_CRASH_HANDLER: cs_cfg.crash_handler = b; break;
        case CS_CFG_UNWINDER: cs_cfg.unwinder = s; break;
        case CS_CFG_CRASH_SELFTEST: cs_cfg.crash_selftest = b; break;
        case CS_CFG_SYNC_LAUNCHES: cs_cfg.sync_launches = s && *s && strcmp(s, "0") ? s : NULL; break;
        case CS_CFG_EXIT_TIMEOUT: cs_cfg.exit_timeout_s = secs; break;
        case CS_CFG_HANG_TIMEOUT: cs_cfg.hang_timeout = s && *s ? s : NULL; cs_cfg.hang_timeout_s = secs; break;
        case CS_CFG_EXPECT_GPU: cs_cfg.expect_gpu = b; break;
        case CS_CFG_DRIVER_VERSION_FILE: cs_cfg.driver_version_file = s; break;
        case CS_CFG_PROMETHEUS_DIR: cs_cfg.prometheus_dir = s && *s ? s : NULL; break;
        case CS_CFG_JOB: cs_cfg.job = s && *s ? s : NULL; break;
        }
    }
}
