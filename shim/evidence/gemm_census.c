/* The GEMM census (gemm_census.h). Every table here is fixed-size and written with atomics only:
 * a GEMM hook runs on the program's thread on every call, so it may neither allocate nor take a
 * lock, and a forked child inherits whatever a thread absent from it was half-way through (a slot
 * caught while being claimed is skipped for ever, nothing waits on it). */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/gemm_math.h"
#include "../base/json.h"
#include "../loader/loader.h"
#include "../trace/trace.h"
#include "gemm_census.h"

/* --- the census ----------------------------------------------------------------------------- */

enum { SLOT_EMPTY, SLOT_CLAIMING, SLOT_READY };
#define PROBES 32
#define OVERFLOW_SLOTS 128  /* shape-merged keys once the shaped part is full */

struct slot {
    uint32_t _Atomic state;
    struct cs_gemm_key key;          /* written once, before state becomes READY */
    uint64_t _Atomic count, failed;
    uint64_t _Atomic kflops;         /* overflow slots only: their calls' shapes differ */
};

static struct slot census[CS_GEMM_SLOTS + OVERFLOW_SLOTS];
static uint64_t _Atomic merged_calls, dropped_calls;

static uint64_t key_hash(const struct cs_gemm_key *k)
{
    uint64_t w[sizeof *k / 8], h = 0x9e3779b97f4a7c15ull;
    memcpy(w, k, sizeof w);
    for (size_t i = 0; i < sizeof w / sizeof *w; i++) h = (h ^ w[i]) * 0xff51afd7ed558ccdull, h ^= h >> 29;
    return h;
}

/* The slot holding k among [base, base + n), claimed when absent; NULL when none is free within
 * the probes. A slot another thread is still claiming is passed over: if it was claimed for the
 * same key, the two are merged when the census is read. */
static struct slot *find(const struct cs_gemm_key *k, unsigned base, unsigned n)
{
    uint64_t h = key_hash(k);
    for (unsigned p = 0; p < PROBES; p++) {
        struct slot *s = &census[base + (unsigned)((h + p) % n)];
        uint32_t st = atomic_load_explicit(&s->state, memory_order_acquire);
        if (st == SLOT_READY) {
            if (!memcmp(&s->key, k, sizeof *k)) return s;
            continue;
        }
        if (st == SLOT_CLAIMING) continue;
        uint32_t empty = SLOT_EMPTY;
        if (atomic_compare_exchange_strong_explicit(&s->state, &empty, SLOT_CLAIMING, memory_order_acq_rel,
                                                    memory_order_acquire)) {
            s->key = *k;
            atomic_store_explicit(&s->state, SLOT_READY, memory_order_release);
            return s;
        }
        if (empty == SLOT_READY && !memcmp(&s->key, k, sizeof *k)) return s;
    }
    return NULL;
}

void cs_gemm_count(const struct cs_gemm_key *k, int failed)
{
    struct slot *s = find(k, 0, CS_GEMM_SLOTS);
    if (!s) {
        struct cs_gemm_key merged = *k;
        merged.m = merged.n = merged.k = merged.batch = 0;
        s = find(&merged, CS_GEMM_SLOTS, OVERFLOW_SLOTS);
        if (!s) {
            atomic_fetch_add_explicit(&dropped_calls, 1, memory_order_relaxed);
            return;
        }
        atomic_fetch_add_explicit(&merged_calls, 1, memory_order_relaxed);
        if (!failed)
            atomic_fetch_add_explicit(&s->kflops, (uint64_t)(cs_gemm_flops(k->m, k->n, k->k, k->batch) / 1024.0 + 0.5),
                                      memory_order_relaxed);
    }
    atomic_fetch_add_explicit(failed ? &s->failed : &s->count, 1, memory_order_relaxed);
}

uint64_t cs_gemm_shapes_merged(void) { return atomic_load(&merged_calls) + atomic_load(&dropped_calls); }

static int by_work(const void *a, const void *b)
{
    const struct cs_gemm_row *x = a, *y = b;
    if (x->flops != y->flops) return x->flops < y->flops ? 1 : -1;
    return x->count < y->count ? 1 : x->count > y->count ? -1 : 0;
}


int cs_gemm_snapshot(struct cs_gemm_row *out, int cap)
{
    int n = 0;
    for (unsigned i = 0; i < CS_GEMM_SLOTS + OVERFLOW_SLOTS; i++) {
        struct slot *s = &census[i];
        if (atomic_load_explicit(&s->state, memory_order_acquire) != SLOT_READY) continue;
        uint64_t c = atomic_load_explicit(&s->count, memory_order_relaxed);
        uint64_t f = atomic_load_explicit(&s->failed, memory_order_relaxed);
        if (!c && !f) continue;
        double flops = i < CS_GEMM_SLOTS ? (double)c * cs_gemm_flops(s->key.m, s->key.n, s->key.k, s->key.batch)
                                         : 1024.0 * (double)atomic_load_explicit(&s->kflops, memory_order_relaxed);
        int j = 0;
        while (j < n && memcmp(&out[j].key, &s->key, sizeof s->key)) j++;
        if (j == n) {
            if (n == cap) continue;
            out[n++] = (struct cs_gemm_row){ .key = s->key };
        }
        out[j].count += c, out[j].failed += f, out[j].flops += flops;
    }
    qsort(out, (size_t)n, sizeof *out, by_work);
    return n;
}

/* --- math mode per handle ------------------------------------------------------------------- */

#define HANDLES 256
static void *_Atomic handle_of[HANDLES];
static uint8_t _Atomic mode_of[HANDLES];

static unsigned pointer_slot(const void *p, unsigned n)
{
    return (unsigned)((((uintptr_t)p >> 4) * 0x9e3779b97f4a7c15ull) >> 40) % n;
}

void cs_gemm_math_set(void *handle, unsigned mode)
{
    if (!handle) return;
    unsigned h = pointer_slot(handle, HANDLES);
    for (unsigned p = 0; p < 8; p++) {
        unsigned i = (h + p) % HANDLES;
        void *x = atomic_load_explicit(&handle_of[i], memory_order_acquire);
        if (!x) {
            void *null = NULL;
            if (!atomic_compare_exchange_strong(&handle_of[i], &null, handle) && null != handle) continue;
            x = handle;
        }
        if (x == handle) {
            atomic_store_explicit(&mode_of[i], (uint8_t)(mode > 254 ? 254 : mode), memory_order_release);
            return;
        }
    }
}

unsigned cs_gemm_math_of(void *handle)
{
    unsigned h = pointer_slot(handle, HANDLES);
    for (unsigned p = 0; p < 8; p++) {
        unsigned i = (h + p) % HANDLES;
        void *x = atomic_load_explicit(&handle_of[i], memory_order_acquire);
        if (!x) break;
        if (x == handle) {
            /* a handle claimed and its mode not yet stored reads 0 (DEFAULT), which it is */
            return atomic_load_explicit(&mode_of[i], memory_order_acquire);
        }
    }
    return CS_MATH_UNKNOWN;
}

/* --- cuBLASLt descriptors and layouts --------------------------------------------------------- */

/* A cache by address, each address in one of LT_WAYS entries from its hash (a GEMM holds a
 * descriptor and three or four layouts at once: direct-mapped, two of them would share an entry
 * one GEMM in forty), each entry under its own sequence number (odd while it is written): a
 * reader that sees the number change or the address differ treats the entry as unknown. Two
 * writers of one entry at once (made on two threads at the same moment) lose one object's facts,
 * never mix them. */
#define LT_SLOTS 512
#define LT_WAYS 4
#define LT_WORDS 5
struct lt_entry {
    uint32_t _Atomic seq;
    const void *_Atomic ptr;
    uint8_t _Atomic kind;  /* 1 descriptor, 2 layout */
    uint64_t _Atomic w[LT_WORDS];
};
static struct lt_entry lt[LT_SLOTS];

/* The entry holding p; with claim, else an empty one of its ways, else the first (evicted). */
static struct lt_entry *lt_find(const void *p, int claim)
{
    unsigned h = pointer_slot(p, LT_SLOTS);
    struct lt_entry *empty = NULL;
    for (unsigned w = 0; w < LT_WAYS; w++) {
        struct lt_entry *e = &lt[(h + w) % LT_SLOTS];
        const void *x = atomic_load_explicit(&e->ptr, memory_order_relaxed);
        if (x == p) return e;
        if (!x && !empty) empty = e;
    }
    return !claim ? NULL : empty ? empty : &lt[h];
}

/* Starts writing p's entry (claim: making it): 1 with the entry held (its number odd), 0 if
 * there is none or another writer has it. */
static int lt_begin(const void *p, int claim, struct lt_entry **out, uint32_t *seq)
{
    struct lt_entry *e = lt_find(p, claim);
    if (!e) return 0;
    uint32_t s = atomic_load_explicit(&e->seq, memory_order_acquire);
    if ((s & 1) || !atomic_compare_exchange_strong_explicit(&e->seq, &s, s + 1, memory_order_acq_rel,
                                                            memory_order_relaxed))
        return 0;
    *out = e, *seq = s;
    return 1;
}

static void lt_end(struct lt_entry *e, uint32_t s) { atomic_store_explicit(&e->seq, s + 2, memory_order_release); }

static void lt_make(const void *p, uint8_t kind, const uint64_t w[LT_WORDS])
{
    struct lt_entry *e;
    uint32_t s;
    if (!p || !lt_begin(p, 1, &e, &s)) return;
    atomic_store_explicit(&e->ptr, p, memory_order_relaxed);
    atomic_store_explicit(&e->kind, kind, memory_order_relaxed);
    for (int i = 0; i < LT_WORDS; i++) atomic_store_explicit(&e->w[i], w[i], memory_order_relaxed);
    lt_end(e, s);
}

/* Word i of p's entry set to v (only if the entry is p's, of this kind). */
static void lt_update(const void *p, uint8_t kind, int i, uint64_t mask, uint64_t v)
{
    struct lt_entry *e;
    uint32_t s;
    if (!p || !lt_begin(p, 0, &e, &s)) return;
    if (atomic_load_explicit(&e->ptr, memory_order_relaxed) == p &&
        atomic_load_explicit(&e->kind, memory_order_relaxed) == kind) {
        uint64_t old = atomic_load_explicit(&e->w[i], memory_order_relaxed);
        atomic_store_explicit(&e->w[i], (old & ~mask) | (v & mask), memory_order_relaxed);
    }
    lt_end(e, s);
}

static int lt_read(const void *p, uint8_t kind, uint64_t w[LT_WORDS])
{
    struct lt_entry *e = lt_find(p, 0);
    if (!e) return 0;
    uint32_t s = atomic_load_explicit(&e->seq, memory_order_acquire);
    if (s & 1) return 0;
    if (atomic_load_explicit(&e->ptr, memory_order_relaxed) != p ||
        atomic_load_explicit(&e->kind, memory_order_relaxed) != kind)
        return 0;
    for (int i = 0; i < LT_WORDS; i++) w[i] = atomic_load_explicit(&e->w[i], memory_order_relaxed);
    atomic_thread_fence(memory_order_acquire);
    return atomic_load_explicit(&e->seq, memory_order_relaxed) == s;
}

/* A descriptor's word 0: compute | scale << 8 | transa << 16 | transb << 24 | fast_accum << 32 |
 * a_scale << 40. A layout's: type | order << 8, then rows, cols, ld, batch. */
void cs_lt_desc_made(void *desc, unsigned compute, unsigned scale)
{
    uint64_t w[LT_WORDS] = { (compute & 0xff) | (uint64_t)(scale & 0xff) << 8 };
    lt_make(desc, 1, w);
}

static uint64_t small_value(const void *buf, size_t size)
{
    if (!buf) return 0;
    if (size >= 4) return *(const uint32_t *)buf;  /* the attributes read are int32/uint32 enums */
    if (size == 1) return *(const uint8_t *)buf;
    return 0;
}

void cs_lt_desc_set(void *desc, unsigned attr, const void *buf, size_t size)
{
    switch (attr) {
    case 0: lt_update(desc, 1, 0, 0xff, small_value(buf, size)); break;                    /* COMPUTE_TYPE */
    case 1: lt_update(desc, 1, 0, 0xff00, small_value(buf, size) << 8); break;             /* SCALE_TYPE */
    case 3: lt_update(desc, 1, 0, 0xff0000, small_value(buf, size) << 16); break;          /* TRANSA */
    case 4: lt_update(desc, 1, 0, 0xff000000, small_value(buf, size) << 24); break;        /* TRANSB */
    case 25:                                                                                /* FAST_ACCUM (int8_t) */
        lt_update(desc, 1, 0, 0xffull << 32, (uint64_t)(buf && size >= 1 && *(const int8_t *)buf ? 1 : 0) << 32);
        break;
    case 17:                                                                                /* A_SCALE_POINTER */
        lt_update(desc, 1, 0, 0xffull << 40, (uint64_t)1 << 40);
        break;
    }
}

void cs_lt_layout_made(void *layout, unsigned type, uint64_t rows, uint64_t cols, int64_t ld)
{
    uint64_t w[LT_WORDS] = { type & 0xff, rows, cols, (uint64_t)ld, 1 };
    lt_make(layout, 2, w);
}

void cs_lt_layout_set(void *layout, unsigned attr, const void *buf, size_t size)
{
    if (!buf) return;
    uint64_t v = size >= 8 ? *(const uint64_t *)buf : small_value(buf, size);
    switch (attr) {
    case 0: lt_update(layout, 2, 0, 0xff, v); break;           /* TYPE */
    case 1: lt_update(layout, 2, 0, 0xff00, v << 8); break;    /* ORDER */
    case 2: lt_update(layout, 2, 1, ~0ull, v); break;          /* ROWS (uint64) */
    case 3: lt_update(layout, 2, 2, ~0ull, v); break;          /* COLS (uint64) */
    case 4: lt_update(layout, 2, 3, ~0ull, v); break;          /* LD (int64) */
    case 5: lt_update(layout, 2, 4, ~0ull, small_value(buf, size)); break;  /* BATCH_COUNT (int32) */
    }
}

void cs_lt_forget(void *p)
{
    struct lt_entry *e;
    uint32_t s;
    if (!p || !lt_begin(p, 0, &e, &s)) return;
    if (atomic_load_explicit(&e->ptr, memory_order_relaxed) == p) atomic_store_explicit(&e->ptr, NULL, memory_order_relaxed);
    lt_end(e, s);
}

int cs_lt_desc_get(const void *desc, struct cs_lt_desc *out)
{
    uint64_t w[LT_WORDS];
    if (!desc || !lt_read(desc, 1, w)) return 0;
    *out = (struct cs_lt_desc){ (uint8_t)w[0], (uint8_t)(w[0] >> 8), (uint8_t)(w[0] >> 16), (uint8_t)(w[0] >> 24),
                                (uint8_t)(w[0] >> 32), (uint8_t)(w[0] >> 40) };
    return 1;
}

int cs_lt_layout_get(const void *layout, struct cs_lt_layout *out)
{
    uint64_t w[LT_WORDS];
    if (!layout || !lt_read(layout, 2, w)) return 0;
    *out = (struct cs_lt_layout){ (uint8_t)w[0], (uint8_t)(w[0] >> 8), w[1], w[2], (int64_t)w[3], (int64_t)w[4] };
    return 1;
}

/* --- cuBLASLt algorithms ---------------------------------------------------------------------- */

enum { ALGO_EMPTY, ALGO_CLAIMING, ALGO_READY, ALGO_ASKED };
struct algo {
    uint32_t _Atomic state;
    uint64_t data[8];           /* cublasLtMatmulAlgo_t, written before READY */
    uint64_t _Atomic flags;     /* CUBLASLT_ALGO_CAP_NUMERICAL_IMPL_FLAGS, valid once ASKED */
    uint32_t _Atomic known;
};
static struct algo algos[CS_GEMM_ALGOS];

int cs_lt_algo_index(const void *algo)
{
    if (!algo) return 0;
    uint64_t d[8], h = 0;
    memcpy(d, algo, sizeof d);
    for (int i = 0; i < 8; i++) h = (h ^ d[i]) * 0xff51afd7ed558ccdull, h ^= h >> 31;
    for (unsigned p = 0; p < CS_GEMM_ALGOS; p++) {
        unsigned i = (unsigned)((h + p) % CS_GEMM_ALGOS);
        struct algo *a = &algos[i];
        uint32_t st = atomic_load_explicit(&a->state, memory_order_acquire);
        if (st >= ALGO_READY) {
            if (!memcmp(a->data, d, sizeof d)) return (int)i + 1;
            continue;
        }
        if (st == ALGO_CLAIMING) continue;
        uint32_t empty = ALGO_EMPTY;
        if (atomic_compare_exchange_strong(&a->state, &empty, ALGO_CLAIMING)) {
            memcpy(a->data, d, sizeof d);
            atomic_store_explicit(&a->state, ALGO_READY, memory_order_release);
            return -((int)i + 1);  /* new: the caller asks for a scan, which reads its flags */
        }
        if (empty >= ALGO_READY && !memcmp(a->data, d, sizeof d)) return (int)i + 1;
    }
    return 0;
}

uint64_t cs_lt_algo_flags(int index, int *known)
{
    *known = 0;
    if (index < 1 || index > CS_GEMM_ALGOS) return 0;
    struct algo *a = &algos[index - 1];
    if (atomic_load_explicit(&a->state, memory_order_acquire) != ALGO_ASKED) return 0;
    *known = (int)atomic_load_explicit(&a->known, memory_order_relaxed);
    return atomic_load_explicit(&a->flags, memory_order_relaxed);
}

int cs_lt_algos_pending(void)
{
    int n = 0;
    for (int i = 0; i < CS_GEMM_ALGOS; i++) n += atomic_load_explicit(&algos[i].state, memory_order_acquire) == ALGO_READY;
    return n;
}

void cs_lt_algos_inquire(cs_lt_algo_cap_fn cap)
{
    for (int i = 0; i < CS_GEMM_ALGOS; i++) {
        struct algo *a = &algos[i];
        if (atomic_load_explicit(&a->state, memory_order_acquire) != ALGO_READY) continue;
        uint64_t flags = 0;
        size_t written = 0;
        int ok = cap && cap(a->data, 15 /* CUBLASLT_ALGO_CAP_NUMERICAL_IMPL_FLAGS */, &flags, sizeof flags, &written) == 0 &&
                 written == sizeof flags;
        atomic_store_explicit(&a->flags, ok ? flags : 0, memory_order_relaxed);
        atomic_store_explicit(&a->known, ok ? 1u : 0u, memory_order_relaxed);
        atomic_store_explicit(&a->state, ALGO_ASKED, memory_order_release);
    }
}

/* --- the trace's gemm lines ----------------------------------------------------------------- */

static const char *op_name(unsigned op) { return op == 0 ? "N" : op == 1 ? "T" : op == 2 ? "C" : "?"; }

void cs_gemm_write_trace(void)
{
    static struct cs_gemm_row rows[CS_GEMM_SLOTS + OVERFLOW_SLOTS];
    int n = cs_gemm_snapshot(rows, (int)(sizeof rows / sizeof *rows));
    for (int i = 0; i < n; i++) {
        const struct cs_gemm_row *r = &rows[i];
        const struct cs_gemm_key *k = &r->key;
        char line[1024];
        struct cs_buf b = { line, 0, sizeof line - 2 };
        cs_put(&b, "{\"type\":\"gemm\",\"api\":"); cs_put_str(&b, cs_api_name(k->api));
        cs_put(&b, ",\"atype\":"); cs_put_str(&b, cs_data_type_name(k->atype));
        cs_put(&b, ",\"btype\":"); cs_put_str(&b, cs_data_type_name(k->btype));
        cs_put(&b, ",\"ctype\":"); cs_put_str(&b, cs_data_type_name(k->ctype));
        cs_put(&b, ",\"compute\":"); cs_put_str(&b, cs_compute_type_name(k->compute));
        cs_put(&b, ",\"math\":"); cs_put_str(&b, cs_math_mode_name(k->math));
        cs_put(&b, ",\"precision\":");
        cs_put_str(&b, cs_precision_name(cs_gemm_precision(k->atype, k->compute, k->math)));
        cs_put(&b, ",\"transa\":"); cs_put_str(&b, op_name(k->trans & 3));
        cs_put(&b, ",\"transb\":"); cs_put_str(&b, op_name(k->trans >> 2 & 3));
        cs_put(&b, k->aligned ? ",\"aligned\":true" : ",\"aligned\":false");
        if (k->cc) { cs_put(&b, ",\"compute_capability\":"); cs_put_i64(&b, k->cc); }
        if (k->m || k->n || k->k) {
            cs_put(&b, ",\"m\":"); cs_put_i64(&b, k->m);
            cs_put(&b, ",\"n\":"); cs_put_i64(&b, k->n);
            cs_put(&b, ",\"k\":"); cs_put_i64(&b, k->k);
            cs_put(&b, ",\"batch\":"); cs_put_i64(&b, k->batch);
        } else {
            cs_put(&b, ",\"shapes_merged\":true");
        }
        if (k->algo) {
            int known;
            uint64_t flags = cs_lt_algo_flags(k->algo, &known);
            if (known) {
                cs_put(&b, ",\"impl_flags\":"); cs_put_u64(&b, flags);
                cs_put(&b, (flags & 0xfe) ? ",\"tensor_cores\":true" : ",\"tensor_cores\":false");
            }
        }
        if (k->fast_accum) cs_put(&b, ",\"fast_accum\":true");
        cs_put(&b, ",\"count\":"); cs_put_u64(&b, r->count);
        if (r->failed) { cs_put(&b, ",\"failed\":"); cs_put_u64(&b, r->failed); }
        char flops[40];  /* an integer below 2^63, else a number with an exponent (readers keep it as a double) */
        snprintf(flops, sizeof flops, r->flops < 9e18 ? "%.0f" : "%.17g", r->flops);
        cs_put(&b, ",\"flops\":"); cs_put(&b, flops);
        cs_put(&b, "}\n");
        cs_write_line(line, b.len);
    }
}
