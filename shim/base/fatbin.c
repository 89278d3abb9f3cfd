/* Fatbin containers, cubins and PTX text: the entry headers say everything a diagnosis needs
 * (kind, SM, a/f suffix, PTX ISA version, codec), so nothing is decompressed. Every read is a
 * memcpy into a local after a subtract-before-compare bounds check: input comes from programs
 * and files we do not trust. */
#include <string.h>

#include "fatbin.h"
#include "reference_data.h"

#define MAX_ENTRIES (1u << 16)

static uint16_t u16(const unsigned char *p) { uint16_t v; memcpy(&v, p, 2); return v; }
static uint32_t u32(const unsigned char *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t u64(const unsigned char *p) { uint64_t v; memcpy(&v, p, 8); return v; }

enum { FL_LZ4 = 0x2000, FL_ZSTD = 0x8000, FL_OLD_COMPRESSED = 0x1000, FL_ARCH_SPECIFIC = 0x100000,
       FL_FAMILY = 0x200000 };

int cs_fatbin_parse(const void *buf, size_t len, cs_entry_cb cb, void *arg, size_t *size, const char **err)
{
    const unsigned char *b = buf;
    *err = NULL;
    if (len < 16) { *err = "shorter than a fatbin header (16 bytes)"; return -1; }
    if (u32(b) == CS_LEGACY_MAGIC) { *err = "legacy pre-CUDA-4 fat binary (0x1EE55A01), not supported"; return -1; }
    if (u32(b) != CS_FATBIN_MAGIC) { *err = "not a fatbin container (bad magic)"; return -1; }
    unsigned version = u16(b + 4), hs = u16(b + 6);
    uint64_t fs = u64(b + 8);
    if (version != 1) { *err = "unknown fatbin container version"; return -1; }
    if (hs < 16) { *err = "container header smaller than 16 bytes"; return -1; }
    if (hs > len || fs > len - hs) { *err = "container extends beyond the data"; return -1; }
    size_t end = hs + (size_t)fs, p = hs;
    int n = 0;
    while (p < end) {
        if (end - p < 64) { *err = "trailing bytes shorter than an entry header"; return -1; }
        const unsigned char *h = b + p;
        uint32_t ehs = u32(h + 4);
        uint64_t psz = u64(h + 8);
        if (ehs < 64 || ehs > end - p) { *err = "entry header size out of range"; return -1; }
        if (psz > end - p - ehs) { *err = "entry payload extends beyond the container"; return -1; }
        if ((unsigned)n >= MAX_ENTRIES) { *err = "too many entries"; return -1; }
        struct cs_entry e;
        memset(&e, 0, sizeof e);
        e.kind = u16(h);
        e.ver_minor = u16(h + 0x18);
        e.ver_major = u16(h + 0x1a);
        e.arch = u32(h + 0x1c);
        e.flags = u64(h + 0x28);
        e.suffix = (e.flags & FL_ARCH_SPECIFIC) ? 'a' : (e.flags & FL_FAMILY) ? 'f' : 0;
        e.codec = (e.flags & FL_ZSTD) ? CS_CODEC_ZSTD : (e.flags & FL_LZ4) ? CS_CODEC_LZ4
                  : (e.flags & FL_OLD_COMPRESSED) ? CS_CODEC_OTHER : CS_CODEC_NONE;
        uint32_t csize = u32(h + 0x10);
        if (e.codec != CS_CODEC_NONE && (csize == 0 || csize > psz)) e.bad_compressed_size = 1;
        n++;
        if (cb && cb(&e, arg)) break;
        p += ehs + (size_t)psz;
    }
    if (size) *size = end;
    return n;
}

enum cs_image cs_image_kind(const void *p, size_t len)
{
    const unsigned char *b = p;
    if (len < 4) return CS_IMG_UNKNOWN;
    uint32_t m = u32(b);
    if (m == CS_FATBIN_MAGIC) return CS_IMG_CONTAINER;
    if (m == CS_WRAPPER_MAGIC) return CS_IMG_WRAPPER;
    if (m == CS_LEGACY_MAGIC) return CS_IMG_LEGACY;
    if (!memcmp(b, "\177ELF", 4) && len >= 20 && u16(b + 18) == 190) return CS_IMG_CUBIN;
    struct cs_entry e;
    return cs_ptx_entry(p, len, &e) == 0 ? CS_IMG_PTX : CS_IMG_UNKNOWN;
}

int cs_cubin_entry(const void *p, size_t len, struct cs_entry *e)
{
    const unsigned char *b = p;
    memset(e, 0, sizeof *e);
    if (len < 64 || memcmp(b, "\177ELF", 4) || b[4] != 2 || u16(b + 18) != 190) return -1;
    unsigned abi = b[8];
    uint32_t fl = u32(b + 48);
    e->kind = CS_ENTRY_ELF;
    e->arch = abi >= 8 ? (fl >> 8) & 0xff : fl & 0xff;
    e->suffix = abi < 8 && (fl & 0x800) ? 'a' : 0;
    e->ver_major = 1;
    e->ver_minor = abi;
    return 0;
}

/* Skip // and block comments and whitespace. */
static size_t skip(const char *t, size_t i, size_t n)
{
    for (;;) {
        while (i < n && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r')) i++;
        if (i + 1 < n && t[i] == '/' && t[i + 1] == '/') { while (i < n && t[i] != '\n') i++; continue; }
        if (i + 1 < n && t[i] == '/' && t[i + 1] == '*') {
            i += 2;
            while (i + 1 < n && !(t[i] == '*' && t[i + 1] == '/')) i++;
            i = i + 2 <= n ? i + 2 : n;  /* an unterminated comment ends the text */
            continue;
        }
        return i;
    }
}

static int number(const char *t, size_t *i, size_t n, unsigned *out)
{
    unsigned v = 0;
    size_t s = *i;
    while (*i < n && t[*i] >= '0' && t[*i] <= '9' && *i - s < 6) v = v * 10 + (unsigned)(t[(*i)++] - '0');
    *out = v;
    return *i > s;
}

int cs_ptx_entry(const char *t, size_t len, struct cs_entry *e)
{
    memset(e, 0, sizeof *e);
    size_t n = 0;
    if (len > 65536) len = 65536;
    while (n < len && t[n]) n++;
    size_t i = skip(t, 0, n);
    if (n - i < 9 || memcmp(t + i, ".version", 8)) return -1;
    i = skip(t, i + 8, n);
    if (!number(t, &i, n, &e->ver_major) || i >= n || t[i] != '.') return -1;
    i++;
    if (!number(t, &i, n, &e->ver_minor)) return -1;
    i = skip(t, i, n);
    if (n - i < 8 || memcmp(t + i, ".target", 7)) return -1;
    i = skip(t, i + 7, n);
    if (n - i < 4 || memcmp(t + i, "sm_", 3)) return -1;
    i += 3;
    if (!number(t, &i, n, &e->arch)) return -1;
    if (i < n && (t[i] == 'a' || t[i] == 'f')) e->suffix = t[i];
    e->kind = CS_ENTRY_PTX;
    return 0;
}

void cs_entry_name(const struct cs_entry *e, char *out, size_t cap)
{
    const char *k = e->kind == CS_ENTRY_ELF ? "sm" : e->kind == CS_ENTRY_PTX ? "compute" : e->kind == CS_ENTRY_LTO ? "lto" : NULL;
    char suf[2] = { e->suffix, 0 };
    if (k) {
        size_t w = 0;
        const char *parts[] = { k, "_" };
        for (int j = 0; j < 2; j++) for (const char *s = parts[j]; *s && w + 1 < cap; s++) out[w++] = *s;
        char num[16];
        int m = 0;
        unsigned a = e->arch;
        do num[m++] = (char)('0' + a % 10); while ((a /= 10) && m < 15);
        while (m && w + 1 < cap) out[w++] = num[--m];
        for (const char *s = suf; *s && w + 1 < cap; s++) out[w++] = *s;
        out[w] = 0;
    } else {
        const char *u = "unknown-kind";
        size_t w = 0;
        for (; u[w] && w + 1 < cap; w++) out[w] = u[w];
        out[w] = 0;
    }
}

int cs_ptx_min_cuda(unsigned major, unsigned minor)
{
    return cs_ref_ptx_to_cuda((int)(major * 10 + minor));
}

/* The newest PTX ISA (x10) a driver of this CUDA version reads. */
static unsigned max_ptx_for(int driver)
{
    unsigned best = 0;
    for (int i = 0; i < cs_ref_ptx_count; i++)
        if (cs_ref_ptx[i].cuda <= driver && (unsigned)cs_ref_ptx[i].isa > best) best = (unsigned)cs_ref_ptx[i].isa;
    return best;
}

static int sass_ok(const struct cs_entry *e, unsigned d)
{
    if (e->suffix == 'a') return e->arch == d;
    return e->arch / 10 == d / 10 && e->arch % 10 <= d % 10;
}

static int ptx_ok(const struct cs_entry *e, unsigned d)
{
    if (e->suffix == 'a') return e->arch == d;
    if (e->suffix == 'f') return e->arch / 10 == d / 10 && e->arch % 10 <= d % 10;
    return e->arch <= d;
}

void cs_predict(const struct cs_entry *e, int n, unsigned cc, int driver, struct cs_prediction *p)
{
    p->chosen = p->too_new_ptx = -1;
    p->max_ptx = driver ? max_ptx_for(driver) : 0;
    int newest_known = cs_ref_ptx_count ? cs_ref_ptx[cs_ref_ptx_count - 1].cuda : 0;
    /* SASS first: the highest compatible one. */
    for (int i = 0; i < n; i++)
        if (e[i].kind == CS_ENTRY_ELF && sass_ok(&e[i], cc) && (p->chosen < 0 || e[i].arch > e[p->chosen].arch))
            p->chosen = i;
    if (p->chosen >= 0) {
        p->outcome = e[p->chosen].codec == CS_CODEC_ZSTD && driver && driver < 12040 ? CS_INVALID_IMAGE : CS_RUNS_SASS;
        return;
    }
    for (int i = 0; i < n; i++) {
        if (e[i].kind != CS_ENTRY_PTX || !ptx_ok(&e[i], cc)) continue;
        unsigned v = e[i].ver_major * 10 + e[i].ver_minor;
        int readable = !driver || driver > newest_known || v <= p->max_ptx;
        if (readable && (p->chosen < 0 || e[i].arch > e[p->chosen].arch)) p->chosen = i;
        if (!readable && p->too_new_ptx < 0) p->too_new_ptx = i;
    }
    if (p->chosen >= 0) {
        p->outcome = e[p->chosen].codec == CS_CODEC_ZSTD && driver && driver < 12040 ? CS_INVALID_IMAGE : CS_RUNS_JIT;
        return;
    }
    p->outcome = p->too_new_ptx >= 0 ? CS_PTX_TOO_NEW : CS_NO_IMAGE;
}
