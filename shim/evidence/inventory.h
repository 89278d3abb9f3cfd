/* The inventory of loaded CUDA-stack libraries (inventory.c), and what the program's own calls
 * said of the driver and the GPU. */
#ifndef CS_INVENTORY_H
#define CS_INVENTORY_H

#include <stdint.h>

#define CS_MAX_LIBRARIES 128
struct link_map;

struct cs_library {
    char path[1024];       /* real path */
    char name_path[1024];  /* the name the loader recorded */
    char name[256], kind[32], soname[256], build_id[48];
    char version[32], version_api[40], file_version[32];
    char found_via[1200];
    /* Found through LD_LIBRARY_PATH although the object that asked for it has its own copy on its
     * RUNPATH (which the loader searches after LD_LIBRARY_PATH): that copy, and who asked. */
    char shadowed_copy[1024], shadowed_for[1024], shadowed_version[32];
    int shadowed_system;   /* the other copy is the system's (a system directory), not a RUNPATH's */
    int shadowed_built_for;  /* the CUDA the other copy was built for, from its files; 0: not known */
    char requested_by[1024];  /* the object whose DT_NEEDED or dlopen brought it in, when known */
    long code;             /* the version as the library's API reports it */
    int version_rank;      /* CS_VERSION_FILE or CS_VERSION_API (library_version.h) */
    int built_for_cuda;    /* the CUDA it was built for (cudnnGetCudartVersion, a wheel's cuNN) */
    char built_for_how[64];
    int compat, family, asked, written;
    const struct link_map *map;  /* the loader's entry: symbols are read from it, lock-free */
};

int cs_inventory_refresh(int ask_versions);  /* 1: something changed, the library rules should run */
void cs_inventory_after_fork(void);  /* the child's trace gets its own library lines */
void cs_inventory_rdlock(void);      /* around reads of versions (the scanner stores them late) */
void cs_inventory_unlock(void);
int cs_library_count(void);
struct cs_library *cs_library_at(int i);
const struct cs_library *cs_library_find_kind(const char *kind, int nth);
const struct cs_library *cs_library_of_path(const char *path);
const char *cs_kernel_module_version(void);

void cs_inventory_rewrite(void);  /* every library line again, into a new trace part (by the scanner) */

void cs_inventory_drop(void);     /* a forked child whose INVENTORY lock was held elsewhere */
uint64_t cs_inventory_scanned_since(void);  /* CLOCK_MONOTONIC ns at which the latest scan began */
int cs_driver_version_seen(void);   /* the program's cuDriverGetVersion, 0 if none yet */
void cs_driver_version_saw(int v);
int cs_device_cc_seen(void);
void cs_device_watchdog_saw(int dev, int on);     /* the program's KERNEL_EXEC_TIMEOUT query */
uint64_t cs_device_watchdog_mask(uint64_t *asked);  /* devices with the limit (bit N: device N); asked: those queried */
void cs_device_compute_started(int dev);
int cs_kernel_is_wsl(void);                        /* /proc/sys/kernel/osrelease names WSL */           /* a context made on it */
uint64_t cs_device_compute_mask(void);        /* the GPU's compute capability (86), 0 if none yet */
void cs_device_cc_saw(int cc);
void cs_device_name_saw(const char *name);  /* cuDeviceGetName's answer to the program */
const char *cs_device_name_seen(void);      /* NULL until one was seen */

#endif
