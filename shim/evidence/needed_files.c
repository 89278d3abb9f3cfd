/* A failed load unloads everything it brought in: the object that needed the missing library is
 * gone from the link map. Its files are still on disk: this replays the loader's search over
 * them (DT_NEEDED, RPATH/RUNPATH with $ORIGIN, LD_LIBRARY_PATH, the system directories), from the
 * file the program asked dlopen for, to the object that lists the missing name. Reads headers and
 * the dynamic section with pread (a framework's library is a gigabyte); loads nothing. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "needed_files.h"

#define MAX_NEEDED 96
struct deps { char needed[MAX_NEEDED][128]; int n; char runpath[1024]; };

static int read_at(int fd, void *buf, size_t len, off_t off) { return pread(fd, buf, len, off) == (ssize_t)len; }

/* The file offset of a virtual address, through the PT_LOAD segments. */
static off_t file_offset(const Elf64_Phdr *ph, int n, uint64_t vaddr)
{
    for (int i = 0; i < n; i++)
        if (ph[i].p_type == PT_LOAD && vaddr >= ph[i].p_vaddr && vaddr < ph[i].p_vaddr + ph[i].p_filesz)
            return (off_t)(vaddr - ph[i].p_vaddr + ph[i].p_offset);
    return -1;
}

static int read_deps(const char *path, struct deps *d)
{
    memset(d, 0, sizeof *d);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    Elf64_Ehdr eh;
    Elf64_Phdr ph[32];
    Elf64_Dyn dyn[256];
    int ok = read_at(fd, &eh, sizeof eh, 0) && !memcmp(eh.e_ident, ELFMAG, SELFMAG) && eh.e_ident[EI_CLASS] == ELFCLASS64 &&
             eh.e_phentsize == sizeof(Elf64_Phdr) && eh.e_phnum <= 32 &&
             read_at(fd, ph, sizeof(Elf64_Phdr) * eh.e_phnum, (off_t)eh.e_phoff);
    int ndyn = 0;
    for (int i = 0; ok && i < eh.e_phnum; i++)
        if (ph[i].p_type == PT_DYNAMIC) {
            size_t len = ph[i].p_filesz < sizeof dyn ? ph[i].p_filesz : sizeof dyn;
            ok = read_at(fd, dyn, len, (off_t)ph[i].p_offset);
            ndyn = (int)(len / sizeof(Elf64_Dyn));
        }
    uint64_t strtab = 0, strsz = 0;
    for (int i = 0; ok && i < ndyn && dyn[i].d_tag != DT_NULL; i++) {
        if (dyn[i].d_tag == DT_STRTAB) strtab = dyn[i].d_un.d_ptr;
        if (dyn[i].d_tag == DT_STRSZ) strsz = dyn[i].d_un.d_val;
    }
    off_t stroff = ok && strtab ? file_offset(ph, eh.e_phnum, strtab) : -1;
    for (int i = 0; stroff >= 0 && i < ndyn && dyn[i].d_tag != DT_NULL; i++) {
        int64_t tag = dyn[i].d_tag;
        if (tag != DT_NEEDED && tag != DT_RUNPATH && tag != DT_RPATH) continue;
        if (dyn[i].d_un.d_val >= strsz) continue;
        char s[1024];
        ssize_t r = pread(fd, s, sizeof s - 1, stroff + (off_t)dyn[i].d_un.d_val);
        if (r <= 0) continue;
        s[r] = 0;
        if (tag == DT_NEEDED && d->n < MAX_NEEDED) snprintf(d->needed[d->n++], sizeof d->needed[0], "%s", s);
        else if (tag != DT_NEEDED && (tag == DT_RUNPATH || !d->runpath[0])) snprintf(d->runpath, sizeof d->runpath, "%s", s);
    }
    close(fd);
    return ok;
}

static const char *const system_dirs[] = { "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64",
                                           "/lib", "/usr/lib" };

/* dir/name exists: its path in out. A link there whose target is missing (the loader passes it
 * by) is noted in dangling, the first one only. */
static int at(const char *dir, const char *name, char *out, size_t cap, char *dangling, size_t dcap)
{
    snprintf(out, cap, "%s/%s", dir, name);
    if (access(out, F_OK) == 0) return 1;
    struct stat st;
    char target[PATH_MAX];
    ssize_t t;
    if (dangling && !dangling[0] && lstat(out, &st) == 0 && S_ISLNK(st.st_mode) &&
        (t = readlink(out, target, sizeof target - 1)) > 0) {
        target[t] = 0;
        snprintf(dangling, dcap, "%s -> %s", out, target);
    }
    return 0;
}

/* The same for each directory of a colon list, $ORIGIN replaced. */
static int in_list(const char *list, const char *origin, const char *name, char *out, size_t cap, char *dangling,
                   size_t dcap)
{
    for (const char *p = list; p && *p;) {
        size_t n = strcspn(p, ":");
        char dir[PATH_MAX];
        if (n >= 7 && !strncmp(p, "$ORIGIN", 7)) snprintf(dir, sizeof dir, "%s%.*s", origin, (int)(n - 7), p + 7);
        else snprintf(dir, sizeof dir, "%.*s", (int)n, p);
        if (n && at(dir, name, out, cap, dangling, dcap)) return 1;
        p += n + (p[n] == ':');
    }
    return 0;
}

int cs_needed_search(const char *name, const char *runpath, const char *origin, char *out, size_t cap, char *dangling,
                     size_t dcap)
{
    if (dangling) dangling[0] = 0;
    if (strchr(name, '/')) { snprintf(out, cap, "%s", name); return access(out, F_OK) == 0; }
    if (in_list(getenv("LD_LIBRARY_PATH"), origin, name, out, cap, dangling, dcap)) return 1;
    if (runpath && in_list(runpath, origin, name, out, cap, dangling, dcap)) return 1;
    for (size_t i = 0; i < sizeof system_dirs / sizeof *system_dirs; i++)
        if (at(system_dirs[i], name, out, cap, dangling, dcap)) return 1;
    return 0;
}

int cs_needed_requester(const char *top, const char *missing, char *out, size_t cap, char *runpath, size_t rcap)
{
    enum { MAX_FILES = 256 };
    static char queue[MAX_FILES][PATH_MAX];  /* the scan's own: one caller at a time (diagnose.c's lock) */
    int head = 0, tail = 0, hits = 0;
    if (!top || !*top) return 0;
    out[0] = 0;
    snprintf(queue[tail++], PATH_MAX, "%s", top);
    while (head < tail) {
        const char *path = queue[head++];
        struct deps d;
        if (!read_deps(path, &d)) continue;
        char origin[PATH_MAX];
        snprintf(origin, sizeof origin, "%s", path);
        char *slash = strrchr(origin, '/');
        if (slash) *slash = 0;
        for (int i = 0; i < d.n; i++) {
            if (!strcmp(d.needed[i], missing)) {  /* each object that lists it, up to four */
                size_t n = strlen(out);
                if (hits < 4) snprintf(out + n, cap - n, "%s%s", n ? ", " : "", path);
                if (runpath && !hits) snprintf(runpath, rcap, "%s", d.runpath);
                hits++;
                continue;
            }
            char found[PATH_MAX];
            if (tail >= MAX_FILES || !cs_needed_search(d.needed[i], d.runpath, origin, found, sizeof found, NULL, 0)) continue;
            int seen = 0;
            for (int k = 0; k < tail && !seen; k++) seen = !strcmp(queue[k], found);
            if (!seen) snprintf(queue[tail++], PATH_MAX, "%s", found);
        }
    }
    return hits > 0;
}
