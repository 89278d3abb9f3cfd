/* libFuzzer target for the shim's parsers of outside text: the loader's error messages (read
 * through dlerror), the kernel module's version file, and CUDASHIM_* values. Any bytes: no
 * crash, no read out of bounds, every field terminated within its buffer. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../shim/process/process.h"
#include "../../shim/base/loader_message.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);  /* exactly the bytes given, terminated: over-reads are caught */
    memcpy(s, data, size);
    s[size] = 0;
    struct cs_loader_message m;
    if (cs_loader_message_parse(s, &m)) {
        if (strlen(m.object) >= sizeof m.object || strlen(m.symbol) >= sizeof m.symbol ||
            strlen(m.version) >= sizeof m.version || strlen(m.required_by) >= sizeof m.required_by)
            abort();
    }
    char v[64];
    if (cs_nvrm_version_parse(s, v, sizeof v) && strlen(v) >= sizeof v) abort();
    for (int i = 0; i < CS_CFG_COUNT; i++) (void)cs_config_value_ok(i, s);
    free(s);
    return 0;
}
