/* Meaning for the few driver calls whose arguments matter to a diagnosis. Each hook runs after
 * the real call, adds fields to the call's trace line, and never changes what the program sees. */
#include <string.h>

#include "../base/json.h"
#include "../process/state.h"
#include "../trace/trace.h"
#include "../evidence/inventory.h"
#include "../evidence/library_version.h"
#include "../diagnose/diagnose.h"
#include "devcode.h"
#include "../../wrappers/gen/hooks.h"  /* the hooks' signatures, from the API tables */

void cs_hook_cuDriverGetVersion(struct cs_thread *t, struct cs_event *ev, void *version)
{
    if (ev->result == 0 && version) {
        int v = *(int *)version;
        cs_extra(t, "\"driver_version\":%d,\"driver_cuda\":\"%d.%d\"", v, v / 1000, (v % 1000) / 10);
        cs_diagnose_driver_version(v);
        cs_version_seen_value("driver", NULL, v);
    }
}

/* cuInit's result decides 803/804 findings; its success is what makes a later fork unsafe. */
void cs_hook_cuInit(struct cs_thread *t, struct cs_event *ev, uint32_t flags)
{
    (void)t, (void)flags;
    cs_diagnose_init_result(ev->result);
}

void cs_hook_cuDeviceGetCount(struct cs_thread *t, struct cs_event *ev, void *count)
{
    if (ev->result == 0 && count) {
        cs_extra(t, "\"count\":%d", *(int *)count);
        cs_diagnose_device_count(*(int *)count);
    }
}

void cs_hook_cuDeviceGetName(struct cs_thread *t, struct cs_event *ev, void *name, int32_t len, int32_t dev)
{
    cs_extra(t, "\"device\":%d", dev);
    if (ev->result == 0 && name && len > 0) {
        char tmp[256];
        size_t n = strnlen(name, (size_t)len < sizeof tmp ? (size_t)len : sizeof tmp - 1);
        memcpy(tmp, name, n);
        tmp[n] = 0;
        cs_extra_str(t, "name", tmp);
        cs_device_name_saw(tmp);
    }
}

void cs_hook_cuDeviceTotalMem(struct cs_thread *t, struct cs_event *ev, void *bytes, int32_t dev)
{
    cs_extra(t, "\"device\":%d", dev);
    char n[24];
    if (ev->result == 0 && bytes) cs_extra(t, "\"bytes\":%s", cs_num(n, *(size_t *)bytes));
}

void cs_hook_cuDeviceComputeCapability(struct cs_thread *t, struct cs_event *ev, void *major, void *minor,
                                       int32_t dev)
{
    cs_extra(t, "\"device\":%d", dev);
    if (ev->result == 0 && major && minor) {
        cs_extra(t, "\"compute_capability\":\"%d.%d\"", *(int *)major, *(int *)minor);
        cs_devcode_note_cc(*(int *)major * 10 + *(int *)minor);
    }
}

/* Compute capability is the one device attribute every diagnosis needs: write those two. */
enum { ATTR_CC_MAJOR = 75, ATTR_CC_MINOR = 76 };
enum { ATTR_KERNEL_EXEC_TIMEOUT = 17 };
void cs_hook_cuDeviceGetAttribute(struct cs_thread *t, struct cs_event *ev, void *value, uint32_t attr, int32_t dev)
{
    if (attr == ATTR_KERNEL_EXEC_TIMEOUT) {  /* kept for the display-watchdog rules, not written */
        if (ev->result == 0 && value) cs_device_watchdog_saw(dev, *(int *)value != 0);
        return;
    }
    if (attr != ATTR_CC_MAJOR && attr != ATTR_CC_MINOR) return;
    cs_extra(t, "\"device\":%d,\"attribute\":\"%s\"", dev,
             attr == ATTR_CC_MAJOR ? "COMPUTE_CAPABILITY_MAJOR" : "COMPUTE_CAPABILITY_MINOR");
    if (ev->result == 0 && value) {
        static int major;
        cs_extra(t, "\"value\":%d", *(int *)value);
        if (attr == ATTR_CC_MAJOR) major = *(int *)value;
        else if (major) cs_devcode_note_cc(major * 10 + *(int *)value);
    }
    t->force_write = 1;
}

/* Passed through untouched: only the table's identity is logged. */
void cs_hook_cuGetExportTable(struct cs_thread *t, struct cs_event *ev, void *table, void *uuid)
{
    (void)ev, (void)table;
    if (!uuid) return;
    const unsigned char *u = uuid;
    cs_extra(t, "\"uuid\":\"%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x\"", u[0], u[1],
             u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}

/* A context on a device: compute starts there (the display watchdog's info line names it). */
void cs_hook_cuDevicePrimaryCtxRetain(struct cs_thread *t, struct cs_event *ev, void *pctx, int32_t dev)
{
    (void)t, (void)pctx;
    if (ev->result == 0) cs_device_compute_started(dev);
}

void cs_hook_cuCtxCreate_v2(struct cs_thread *t, struct cs_event *ev, void *pctx, uint32_t flags, int32_t dev)
{
    (void)t, (void)pctx, (void)flags;
    if (ev->result == 0) cs_device_compute_started(dev);
}

void cs_hook_cuCtxCreate_v4(struct cs_thread *t, struct cs_event *ev, void *pctx, void *params, uint32_t flags, int32_t dev)
{
    (void)t, (void)pctx, (void)params, (void)flags;
    if (ev->result == 0) cs_device_compute_started(dev);
}
