/* The shim's own driver calls (driver_ask.c), made only to explain a failure and counted apart
 * from the program's (own_calls in the summary). */
#ifndef CS_DRIVER_ASK_H
#define CS_DRIVER_ASK_H

#include <stddef.h>
#include <stdint.h>


extern uint64_t _Atomic cs_own_calls[CS_API_TOTAL];
void cs_own_count(int idx);
int cs_ask_ctx_device(int *dev);
int cs_ask_attribute(int *v, int attr, int dev);
int cs_ask_driver_version(int *v);
int cs_ask_func_name(const char **name, void *f);
int cs_ask_stream_sync(void *stream);
int cs_ask_mem_info(size_t *free_b, size_t *total_b);

#endif
