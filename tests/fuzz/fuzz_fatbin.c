/* libFuzzer target for the device-code parser: every input must parse or be rejected, never
 * crash, hang or read out of bounds. `make fuzz` (FUZZ_SECONDS, default 60) runs it under ASan
 * and UBSan, seeded with tests/fixtures/fatbin. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../shim/base/fatbin.h"
#include "../../shim/base/image_explain.h"

#define MAXE 256
struct mod { struct cs_entry e[MAXE]; int n; };

static int add(const struct cs_entry *e, void *arg)
{
    struct mod *m = arg;
    if (m->n < MAXE) m->e[m->n++] = *e;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* A private copy of exactly `size` bytes, so any over-read is caught by ASan. */
    uint8_t *b = malloc(size ? size : 1);
    memcpy(b, data, size);
    struct mod m = { .n = 0 };
    const char *err;
    size_t used;
    cs_image_kind(b, size);
    cs_fatbin_parse(b, size, add, &m, &used, &err);
    if (m.n == 0 && !cs_cubin_entry(b, size, &m.e[0])) m.n = 1;
    if (m.n == 0 && !cs_ptx_entry((const char *)b, size, &m.e[0])) m.n = 1;
    static const unsigned ccs[] = { 75, 90, 100, 103, 120 };
    for (size_t i = 0; i < sizeof ccs / sizeof *ccs; i++) {
        struct cs_prediction p;
        char text[4096];
        cs_predict(m.e, m.n, ccs[i], 12080, &p);
        cs_explain_prediction(m.e, m.n, ccs[i], 12080, &p, text, sizeof text);
    }
    free(b);
    return 0;
}
