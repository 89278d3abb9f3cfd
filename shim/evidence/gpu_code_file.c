/* Reads a library's .nv_fatbin section header by header (a cuBLASLt holds 500 MB of kernels:
 * never all of it), on the scanner's thread or in the command; loads nothing, calls nothing. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../base/reference_data.h"
#include "gpu_code_file.h"

#define FATBIN_MAGIC 0xBA55ED50u
#define MAX_ENTRIES 384    /* entry headers read per file: a container's first ones say it */
#define MAX_SECTIONS 4096

static int read_at(int fd, void *buf, size_t len, uint64_t off) { return pread(fd, buf, len, (off_t)off) == (ssize_t)len; }

/* The file range of the section named .nv_fatbin; 0 when there is none. */
static int fatbin_section(int fd, uint64_t *off, uint64_t *size)
{
    Elf64_Ehdr eh;
    if (!read_at(fd, &eh, sizeof eh, 0) || memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
        eh.e_shentsize != sizeof(Elf64_Shdr) || !eh.e_shnum || eh.e_shnum > MAX_SECTIONS || eh.e_shstrndx >= eh.e_shnum)
        return 0;
    Elf64_Shdr names;
    if (!read_at(fd, &names, sizeof names, eh.e_shoff + (uint64_t)eh.e_shstrndx * sizeof(Elf64_Shdr))) return 0;
    for (unsigned i = 0; i < eh.e_shnum; i++) {
        Elf64_Shdr sh;
        char name[16] = "";
        if (!read_at(fd, &sh, sizeof sh, eh.e_shoff + (uint64_t)i * sizeof sh)) return 0;
        if (sh.sh_type == SHT_NOBITS || sh.sh_name >= names.sh_size) continue;
        if (pread(fd, name, sizeof name - 1, (off_t)(names.sh_offset + sh.sh_name)) <= 0) continue;
        if (!strcmp(name, ".nv_fatbin")) {
            *off = sh.sh_offset, *size = sh.sh_size;
            return 1;
        }
    }
    return 0;
}

int cs_gpu_code_cuda(const char *path, char *how, size_t cap)
{
    if (cap) how[0] = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    uint64_t off, size;
    unsigned best_ptx = 0;  /* 90 is PTX 9.0 */
    int abi8_pre_blackwell = 0, entries = 0;
    if (fatbin_section(fd, &off, &size)) {
        uint64_t pos = off, end = off + size;
        /* containers: {u32 magic, u16 version, u16 header size, u64 entries' size}, entries after */
        while (pos + 16 <= end && entries < MAX_ENTRIES) {
            unsigned char h[16];
            if (!read_at(fd, h, sizeof h, pos)) break;
            uint32_t magic;
            uint16_t hsize;
            uint64_t fsize;
            memcpy(&magic, h, 4), memcpy(&hsize, h + 6, 2), memcpy(&fsize, h + 8, 8);
            if (magic != FATBIN_MAGIC) { pos += 8; continue; }  /* containers are 8-aligned */
            if (hsize < 16 || fsize > end - pos) break;
            uint64_t e = pos + hsize, eend = pos + hsize + fsize;
            while (e + 64 <= eend && entries < MAX_ENTRIES) {
                unsigned char eh[32];
                if (!read_at(fd, eh, sizeof eh, e)) break;
                uint16_t kind, minor, major;
                uint32_t ehsize, arch;
                uint64_t psize;
                memcpy(&kind, eh, 2), memcpy(&ehsize, eh + 4, 4), memcpy(&psize, eh + 8, 8);
                memcpy(&minor, eh + 0x18, 2), memcpy(&major, eh + 0x1A, 2), memcpy(&arch, eh + 0x1C, 4);
                entries++;
                if (kind == 1 && major < 100 && minor < 10 && major * 10u + minor > best_ptx) best_ptx = major * 10u + minor;
                if (kind == 2 && minor == 8 && arch < 100) abi8_pre_blackwell = 1;
                if (ehsize < 64 || psize > eend - e) break;
                e += ehsize + psize;
            }
            pos = eend;
        }
    }
    close(fd);
    int from_ptx = best_ptx ? cs_ref_ptx_to_cuda((int)best_ptx) : 0;
    if (from_ptx >= 13000 || (from_ptx && !abi8_pre_blackwell)) {
        snprintf(how, cap, "its GPU code (PTX %u.%u)", best_ptx / 10, best_ptx % 10);
        return from_ptx;
    }
    if (abi8_pre_blackwell) {
        snprintf(how, cap, "its GPU code (CUDA 13 cubins)");
        return 13000;
    }
    return 0;
}

int cs_gpu_code_cuda_of_kind(const char *kind, const char *path, char *how, size_t cap)
{
    int cuda = cs_gpu_code_cuda(path, how, cap);
    if (cuda || strcmp(kind, "cudnn")) return cuda;
    /* cuDNN 9's dispatcher holds no kernels; its sub-libraries beside it do */
    static const char *const companions[] = { "libcudnn_ops.so", "libcudnn_cnn.so", "libcudnn_adv.so" };
    const char *so = strstr(path, ".so.");
    const char *slash = strrchr(path, '/');
    size_t dir = slash ? (size_t)(slash - path) + 1 : 0;
    for (size_t i = 0; i < sizeof companions / sizeof *companions; i++) {
        char other[PATH_MAX];
        if (snprintf(other, sizeof other, "%.*s%s%s", (int)dir, path, companions[i], so ? so + 3 : "") >= (int)sizeof other)
            continue;
        if ((cuda = cs_gpu_code_cuda(other, how, cap))) {
            size_t n = strlen(how);
            const char *base = strrchr(other, '/');
            snprintf(how + n, cap > n ? cap - n : 0, " in %s", base ? base + 1 : other);
            return cuda;
        }
    }
    return 0;
}
