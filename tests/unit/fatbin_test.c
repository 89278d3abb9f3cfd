/* The device-code parser and predictor against the test vectors of fatbin-format.md section 12.
 * Like strace's tests, this program states its own expected output: each vector's entries, and
 * its prediction for each (device, driver) column of section 12.2. Usage: fatbin_test DIR */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../shim/base/fatbin.h"

#define MAXE 64
struct mod { struct cs_entry e[MAXE]; int n; };

static int add(const struct cs_entry *e, void *arg)
{
    struct mod *m = arg;
    if (m->n < MAXE) m->e[m->n++] = *e;
    return 0;
}

static unsigned char *slurp(const char *dir, const char *name, size_t *len)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f) { fprintf(stderr, "cannot open %s\n", path); exit(2); }
    unsigned char *b = malloc(1 << 20);
    *len = fread(b, 1, 1 << 20, f);
    fclose(f);
    return b;
}

/* Entries as "sm_90 compute_90:9.0 ..." in file order, codec marked */
static void describe(const struct mod *m, char *out, size_t cap)
{
    size_t w = 0;
    out[0] = 0;
    for (int i = 0; i < m->n; i++) {
        char name[32];
        cs_entry_name(&m->e[i], name, sizeof name);
        int x = m->e[i].kind == CS_ENTRY_PTX
                    ? snprintf(out + w, cap - w, "%s%s:%u.%u", w ? " " : "", name, m->e[i].ver_major, m->e[i].ver_minor)
                    : snprintf(out + w, cap - w, "%s%s", w ? " " : "", name);
        if (m->e[i].codec == CS_CODEC_ZSTD) x += snprintf(out + w + x, cap - w - x, "/zstd");
        if (m->e[i].codec == CS_CODEC_LZ4) x += snprintf(out + w + x, cap - w - x, "/lz4");
        w += (size_t)x;
    }
}

static int load(const char *dir, const char *name, struct mod *m, const char **err)
{
    size_t len, size;
    unsigned char *b = slurp(dir, name, &len);
    memset(m, 0, sizeof *m);
    int r = 0;
    *err = NULL;
    enum cs_image k = cs_image_kind(b, len);
    if (k == CS_IMG_CUBIN) { if (!cs_cubin_entry(b, len, &m->e[0])) m->n = 1; }
    else if (k == CS_IMG_PTX) { if (!cs_ptx_entry((const char *)b, len, &m->e[0])) m->n = 1; }
    else r = cs_fatbin_parse(b, len, add, m, &size, err);
    free(b);
    return r;
}

static const unsigned ccs[] = { 75, 86, 89, 90, 100, 103, 100, 121 };
static const int drivers[] = { 13000, 13000, 13000, 13000, 13000, 13000, 12080, 13000 };

static void predict_row(const struct mod *m, char *out, size_t cap)
{
    size_t w = 0;
    for (int c = 0; c < 8; c++) {
        struct cs_prediction p;
        cs_predict(m->e, m->n, ccs[c], drivers[c], &p);
        char name[32] = "";
        if (p.chosen >= 0) cs_entry_name(&m->e[p.chosen], name, sizeof name);
        int x = p.outcome == CS_RUNS_SASS ? snprintf(out + w, cap - w, "%sSASS:%s", c ? " | " : "", name)
              : p.outcome == CS_RUNS_JIT ? snprintf(out + w, cap - w, "%sJIT:%s", c ? " | " : "", name)
                                         : snprintf(out + w, cap - w, "%s%d", c ? " | " : "", (int)p.outcome);
        w += (size_t)x;
    }
}

static const struct { const char *file, *entries, *predictions; } good[] = {
    { "tv01_basic.fatbin", "sm_80 sm_90 compute_90:9.0/zstd",
      "209 | SASS:sm_80 | SASS:sm_80 | SASS:sm_90 | JIT:compute_90 | JIT:compute_90 | 222 | JIT:compute_90" },
    { "tv03_mode_speed_lz4.fatbin", "sm_80/lz4 sm_90/lz4 compute_90:9.0/lz4",
      "209 | SASS:sm_80 | SASS:sm_80 | SASS:sm_90 | JIT:compute_90 | JIT:compute_90 | 222 | JIT:compute_90" },
    { "tv06_a_f.fatbin", "sm_90a compute_90a:9.0/zstd sm_100a compute_100a:9.0/zstd sm_100f compute_100f:9.0/zstd sm_120 compute_120:9.0/zstd",
      "209 | 209 | 209 | SASS:sm_90a | SASS:sm_100a | SASS:sm_100f | SASS:sm_100a | SASS:sm_120" },
    { "tv07_bw.fatbin", "sm_103 sm_110 sm_121 compute_121:9.0/zstd",
      "209 | 209 | 209 | 209 | 209 | SASS:sm_103 | 209 | SASS:sm_121" },
    { "tv10_handmade.fatbin", "compute_80:7.8/zstd compute_75:8.0/zstd sm_90",
      "JIT:compute_75 | JIT:compute_80 | JIT:compute_80 | SASS:sm_90 | JIT:compute_80 | JIT:compute_80 | JIT:compute_80 | JIT:compute_80" },
    { "tv11_ptx91.fatbin", "compute_80:9.1/zstd", "209 | 222 | 222 | 222 | 222 | 222 | 222 | 222" },
    { "tv12_lto.fatbin", NULL, "209 | 209 | 209 | 209 | 209 | 209 | 209 | 209" },
    { "tv15_sm_120.cubin", "sm_120", "209 | 209 | 209 | 209 | 209 | 209 | 209 | SASS:sm_120" },
    { "tv16_compute80.ptx", "compute_80:9.0",
      "209 | JIT:compute_80 | JIT:compute_80 | JIT:compute_80 | JIT:compute_80 | JIT:compute_80 | 222 | JIT:compute_80" },
    { "tv17_default.fatbin", "sm_75 compute_75:9.0/zstd",
      "SASS:sm_75 | JIT:compute_75 | JIT:compute_75 | JIT:compute_75 | JIT:compute_75 | JIT:compute_75 | 222 | JIT:compute_75" },
};

/* Malformed inputs: rejected with an error, or accepted with the damage contained. */
static const struct { const char *file; int accept, entries; } bad[] = {
    { "bad01_trunc_header.bin", 0, 0 }, { "bad02_fatsize_huge.bin", 0, 0 }, { "bad03_container_hdr_small.bin", 0, 0 },
    { "bad04_entry_hdr_zero.bin", 0, 0 }, { "bad05_entry_payload_huge.bin", 0, 0 }, { "bad06_unknown_kind.bin", 1, 3 },
    { "bad07_truncated_mid_entry.bin", 0, 0 }, { "bad08_old_magic.bin", 0, 0 }, { "bad09_csize_gt_payload.bin", 1, 3 },
    { "bad10_optoff_out_of_header.bin", 1, 3 },
};

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "tests/fixtures/fatbin";
    int fails = 0;
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        struct mod m;
        const char *err;
        char got[1024], pred[1024];
        if (load(dir, good[i].file, &m, &err) < 0) { printf("FAIL %s: %s\n", good[i].file, err); fails++; continue; }
        describe(&m, got, sizeof got);
        if (good[i].entries && strcmp(got, good[i].entries)) {
            printf("FAIL %s entries\n  want %s\n  got  %s\n", good[i].file, good[i].entries, got);
            fails++;
        }
        if (!good[i].entries && (m.n != 1 || m.e[0].kind != CS_ENTRY_LTO || m.e[0].arch != 90)) {
            printf("FAIL %s: expected one lto_90 entry\n", good[i].file);
            fails++;
        }
        predict_row(&m, pred, sizeof pred);
        if (strcmp(pred, good[i].predictions)) {
            printf("FAIL %s predictions (7.5 8.6 8.9 9.0 10.0 10.3 10.0/12.8 12.1)\n  want %s\n  got  %s\n", good[i].file,
                   good[i].predictions, pred);
            fails++;
        }
    }
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        struct mod m;
        const char *err;
        int r = load(dir, bad[i].file, &m, &err);
        if (bad[i].accept ? r != bad[i].entries : r >= 0) {
            printf("FAIL %s: %s (returned %d, %s)\n", bad[i].file, bad[i].accept ? "should be accepted" : "should be rejected",
                   r, err ? err : "no error");
            fails++;
        }
    }
    /* bad09: the damaged entry keeps its header and is flagged. */
    struct mod m;
    const char *err;
    load(dir, "bad09_csize_gt_payload.bin", &m, &err);
    if (m.n != 3 || !m.e[2].bad_compressed_size || m.e[2].arch != 90) { printf("FAIL bad09: entry not flagged\n"); fails++; }
    load(dir, "bad08_old_magic.bin", &m, &err);
    if (!err || !strstr(err, "legacy")) { printf("FAIL bad08: not reported as legacy\n"); fails++; }
    printf("%s: %d failures\n", fails ? "FAIL" : "ok", fails);
    return fails != 0;
}
