/* cudashim inspect FILE... [--device sm_XX] [--driver X.Y]: offline, no GPU. Which SASS
 * architectures and PTX versions a shared library, executable, .cubin, .fatbin or .ptx holds;
 * with a device and a driver, whether each device-code container (a module) would run, and why
 * not. Host ELF files are read by their .nv_fatbin and __nv_relfatbin sections. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../shim/base/fatbin.h"
#include "../../shim/base/image_explain.h"
#include "cli.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: cudashim inspect [--device sm_XX] [--driver X.Y] [--all] FILE...\n"
               "  FILE: a shared library or executable (libtorch_cuda.so), a .fatbin, a .cubin or a .ptx file.\n"
               "  Lists the SASS architectures and PTX targets and versions it holds. With --device (sm_120,\n"
               "  12.0) and --driver (12.8, or 12080), says whether each module would run, and why not.\n"
               "  --all    list every module that would not run (default: the first 5)\n"
               "Exit status: 0, or 1 when --device is given and some module would not run; 3 unreadable.\n");
}

#define MAX_MOD_ENTRIES 4096
struct stats {
    int containers, entries, bad;
    char names[256][48];
    int counts[256], nnames;
    int codec[4];
    /* prediction */
    unsigned cc;
    int driver, predict, show_all;
    int runs_sass, runs_jit, fails, shown;
    FILE *why;          /* explanations, printed after the summary */
    char *why_text;
    size_t why_len;
    struct cs_entry mod[MAX_MOD_ENTRIES];
    int nmod;
};

static int collect(const struct cs_entry *e, void *arg)
{
    struct stats *s = arg;
    char name[48], label[64];
    cs_entry_name(e, name, sizeof name);
    if (e->kind == CS_ENTRY_PTX) snprintf(label, sizeof label, "%s (PTX %u.%u)", name, e->ver_major, e->ver_minor);
    else if (e->kind == CS_ENTRY_ELF || e->kind == CS_ENTRY_LTO) snprintf(label, sizeof label, "%s", name);
    else snprintf(label, sizeof label, "unknown kind %u", e->kind);
    int i;
    for (i = 0; i < s->nnames; i++) if (!strcmp(s->names[i], label)) break;
    if (i == s->nnames && s->nnames < 256) snprintf(s->names[s->nnames++], sizeof s->names[0], "%s", label);
    if (i < 256) s->counts[i]++;
    s->codec[e->codec]++;
    s->entries++;
    if (s->nmod < MAX_MOD_ENTRIES) s->mod[s->nmod++] = *e;
    return 0;
}

static void judge_module(struct stats *s, const char *where)
{
    if (!s->predict || !s->nmod) return;
    struct cs_prediction p;
    cs_predict(s->mod, s->nmod, s->cc, s->driver, &p);
    if (p.outcome == CS_RUNS_SASS) s->runs_sass++;
    else if (p.outcome == CS_RUNS_JIT) s->runs_jit++;
    else {
        s->fails++;
        if (s->show_all || s->shown < 5) {
            char text[4096], line[4200];
            cs_explain_prediction(s->mod, s->nmod, s->cc, s->driver, &p, text, sizeof text);
            snprintf(line, sizeof line, "%s: %s", where, text);
            wrap(s->why, "    ", line, CLI_WIDTH);
            s->shown++;
        }
    }
}

static int scan_container(struct stats *s, const unsigned char *b, size_t len, size_t *used, const char *where)
{
    const char *err;
    size_t size = 0;
    s->nmod = 0;
    int n = cs_fatbin_parse(b, len, collect, s, &size, &err);
    if (n < 0) { fprintf(stderr, "cudashim inspect: %s: %s\n", where, err); s->bad++; return -1; }
    s->containers++;
    char label[128];
    snprintf(label, sizeof label, "%s %d", where, s->containers);
    judge_module(s, label);
    *used = size;
    return 0;
}

/* Containers lie back to back in the section, each a multiple of 8 bytes; tolerate zero padding. */
static void scan_section(struct stats *s, const unsigned char *b, size_t len, const char *file)
{
    size_t p = 0;
    while (p + 16 <= len) {
        uint32_t m;
        memcpy(&m, b + p, 4);
        if (m == 0) { p += 8; continue; }
        size_t used = 0;
        if (scan_container(s, b + p, len - p, &used, file) || !used) return;
        p += (used + 7) & ~(size_t)7;
    }
}

static int scan_host_elf(struct stats *s, const unsigned char *b, size_t len, const char *file)
{
    if (len < sizeof(Elf64_Ehdr) || b[EI_CLASS] != ELFCLASS64 || b[EI_DATA] != ELFDATA2LSB) return -1;
    Elf64_Ehdr eh;
    memcpy(&eh, b, sizeof eh);
    if (!eh.e_shoff || eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shoff > len ||
        (size_t)eh.e_shnum > (len - eh.e_shoff) / sizeof(Elf64_Shdr) || eh.e_shstrndx >= eh.e_shnum)
        return -1;
    Elf64_Shdr strs;
    memcpy(&strs, b + eh.e_shoff + (size_t)eh.e_shstrndx * sizeof strs, sizeof strs);
    if (strs.sh_offset > len || strs.sh_size > len - strs.sh_offset) return -1;
    int found = 0;
    for (unsigned i = 0; i < eh.e_shnum; i++) {
        Elf64_Shdr sh;
        memcpy(&sh, b + eh.e_shoff + (size_t)i * sizeof sh, sizeof sh);
        if (sh.sh_name >= strs.sh_size || sh.sh_type == SHT_NOBITS) continue;
        const char *name = (const char *)b + strs.sh_offset + sh.sh_name;
        size_t maxn = strs.sh_size - sh.sh_name;
        if (strnlen(name, maxn) == maxn) continue;
        if (strcmp(name, ".nv_fatbin") && strcmp(name, "__nv_relfatbin")) continue;
        if (sh.sh_offset > len || sh.sh_size > len - sh.sh_offset) continue;
        scan_section(s, b + sh.sh_offset, sh.sh_size, file);
        found = 1;
    }
    return found ? 0 : 1;
}

/* "8.6", "86", "sm_86", "compute_90a" (the suffix is ignored); 0 when it is none of those. */
static unsigned parse_device(const char *s)
{
    if (!strncmp(s, "sm_", 3) || !strncmp(s, "compute_", 8)) s = strchr(s, '_') + 1;
    unsigned a = 0, b = 0;
    int used = 0;
    if (strchr(s, '.')) {
        if (sscanf(s, "%u.%u%n", &a, &b, &used) != 2 || s[used] || a < 1 || a > 20 || b > 9) return 0;
        return a * 10 + b;
    }
    char *end;
    unsigned long v = strtoul(s, &end, 10);
    if (end == s || (*end && strcmp(end, "a") && strcmp(end, "f")) || v < 10 || v > 209) return 0;
    return (unsigned)v;
}

/* A CUDA version the driver supports: "12.2" or 12020; 0 when it is neither. */
static int parse_driver(const char *s)
{
    unsigned a = 0, b = 0;
    int used = 0;
    if (strchr(s, '.')) {
        if (sscanf(s, "%u.%u%n", &a, &b, &used) != 2 || s[used] || a < 1 || a > 99 || b > 9) return 0;
        return (int)(a * 1000 + b * 10);
    }
    char *end;
    long v = strtol(s, &end, 10);
    return end != s && !*end && v >= 1000 && v < 100000 ? (int)v : 0;
}

int cmd_inspect(int argc, char **argv)
{
    static struct stats s;
    unsigned cc = 0;
    int driver = 0, show_all = 0, rc = EXIT_CLEAN, nfiles = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) { usage(stdout); return EXIT_CLEAN; }
        else if (!strcmp(argv[i], "--device") || !strcmp(argv[i], "--driver")) {
            int dev = !strcmp(argv[i], "--device");
            if (i + 1 >= argc) { fprintf(stderr, "cudashim inspect: %s needs a value\n", argv[i]); return EXIT_USAGE; }
            const char *v = argv[++i];
            if (dev && !(cc = parse_device(v))) {
                fprintf(stderr, "cudashim inspect: --device wants a compute capability (8.6, 86 or sm_86), not '%s'\n", v);
                return EXIT_USAGE;
            }
            if (!dev && !(driver = parse_driver(v))) {
                fprintf(stderr, "cudashim inspect: --driver wants the CUDA version the driver supports (12.2 or "
                                "12020), not '%s'\n", v);
                return EXIT_USAGE;
            }
        }
        else if (!strcmp(argv[i], "--all")) show_all = 1;
        else if (argv[i][0] == '-') { fprintf(stderr, "cudashim inspect: unknown option %s\n", argv[i]); return EXIT_USAGE; }
        else nfiles++;
    }
    if (!nfiles) { usage(stderr); return EXIT_USAGE; }
    if (driver && !cc) { fprintf(stderr, "cudashim inspect: --driver needs --device\n"); return EXIT_USAGE; }
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--device") || !strcmp(argv[i], "--driver")) { i++; continue; }
        if (argv[i][0] == '-') continue;
        const char *file = argv[i];
        int fd = open(file, O_RDONLY | O_CLOEXEC);
        struct stat st;
        if (fd < 0 || fstat(fd, &st)) { fprintf(stderr, "cudashim inspect: %s: %s\n", file, strerror(errno)); rc = EXIT_BAD_TRACE; if (fd >= 0) close(fd); continue; }
        size_t len = (size_t)st.st_size;
        const unsigned char *b = len ? mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
        close(fd);
        if (len && b == MAP_FAILED) { fprintf(stderr, "cudashim inspect: %s: %s\n", file, strerror(errno)); rc = EXIT_BAD_TRACE; continue; }
        memset(&s, 0, sizeof s);
        s.why = open_memstream(&s.why_text, &s.why_len);
        s.cc = cc, s.driver = driver ? driver : 0, s.predict = cc != 0, s.show_all = show_all;
        if (s.predict && !s.driver) s.driver = 99000;  /* no driver given: judge the architecture only */
        const char *what = "?";
        char tmp[1024];
        printf("%s%s%s\n", c_bold(), home_tilde(file, tmp, sizeof tmp), c_reset());
        enum cs_image kind = cs_image_kind(b, len);
        size_t used = 0;
        if (kind == CS_IMG_CONTAINER) {
            what = "fatbin";
            /* the first container must parse; anything after it is scanned like a section */
            if (!scan_container(&s, b, len, &used, "module") && used < len) scan_section(&s, b + used, len - used, "module");
        }
        else if (kind == CS_IMG_CUBIN || kind == CS_IMG_PTX) {
            struct cs_entry e;
            int ok = kind == CS_IMG_CUBIN ? cs_cubin_entry(b, len, &e) : cs_ptx_entry((const char *)b, len, &e);
            what = kind == CS_IMG_CUBIN ? "cubin" : "PTX";
            if (!ok) { s.nmod = 0; collect(&e, &s); s.containers = 1; judge_module(&s, what); }
        } else if (kind == CS_IMG_LEGACY) {
            fprintf(stderr, "cudashim inspect: %s: legacy pre-CUDA-4 fat binary (0x1EE55A01), not supported\n", file);
            s.bad++;
        } else if (len >= 4 && !memcmp(b, "\177ELF", 4)) {
            what = "ELF file";
            if (scan_host_elf(&s, b, len, "module") < 0) { fprintf(stderr, "cudashim inspect: %s: unreadable ELF\n", file); s.bad++; }
        } else {
            fprintf(stderr, "cudashim inspect: %s: not a fatbin, cubin, PTX or ELF file\n", file);
            s.bad++;
        }
        if (len) munmap((void *)b, len);
        if (s.bad) rc = EXIT_BAD_TRACE;
        printf("  %s: %d device-code container%s, %d entr%s\n", what, s.containers, s.containers == 1 ? "" : "s", s.entries,
               s.entries == 1 ? "y" : "ies");
        for (int k = 0; k < 3; k++) {
            char line[8192];
            size_t w = 0;
            for (int j = 0; j < s.nnames; j++) {
                int is_sass = !strncmp(s.names[j], "sm_", 3), is_ptx = !strncmp(s.names[j], "compute_", 8);
                if ((k == 0 && !is_sass) || (k == 1 && !is_ptx) || (k == 2 && (is_sass || is_ptx))) continue;
                int x = snprintf(line + w, sizeof line - w, "%s%s x%d", w ? ", " : "", s.names[j], s.counts[j]);
                if (x > 0 && (size_t)x < sizeof line - w) w += (size_t)x;
            }
            if (w) wrap(stdout, k == 0 ? "  SASS   " : k == 1 ? "  PTX    " : "  other  ", line, CLI_WIDTH);
        }
        if (s.entries)
            printf("  codec  none %d, zstd %d, lz4 %d%s\n", s.codec[CS_CODEC_NONE], s.codec[CS_CODEC_ZSTD],
                   s.codec[CS_CODEC_LZ4], s.codec[CS_CODEC_OTHER] ? ", other" : "");
        fclose(s.why);
        if (s.predict && s.containers) {
            char d[64] = "any driver";
            if (driver) snprintf(d, sizeof d, "a CUDA %d.%d driver", driver / 1000, driver % 1000 / 10);
            printf("  on sm_%u with %s: %d module%s would run SASS, %d would JIT-compile PTX, %s%d cannot run%s\n", cc,
                   d, s.runs_sass, s.runs_sass == 1 ? "" : "s", s.runs_jit, s.fails ? c_red() : "", s.fails, c_reset());
            fputs(s.why_text, stdout);
            if (s.fails > s.shown) printf("    (%d more not shown: --all lists them)\n", s.fails - s.shown);
            if (s.fails && s.runs_sass + s.runs_jit)
                wrap(stdout, "  note: ", "libraries that ship one module per architecture (cuBLAS, cuDNN, NCCL) always "
                     "carry modules for other GPUs; a failure matters when the module a kernel lives in is one of "
                     "those that cannot run.", CLI_WIDTH);
            if (s.fails && rc == EXIT_CLEAN) rc = EXIT_FINDINGS;
        }
        free(s.why_text);
    }
    return rc;
}
