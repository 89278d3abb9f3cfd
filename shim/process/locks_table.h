/* Every lock the shim owns, in the order a thread may take them: a lock is only ever taken while
 * holding locks above it in this table, never one below (sanitizer builds check each taking).
 * A fork's prepare handler takes them all in this order, waiting a bounded time in all, so a
 * forked child inherits each one free and what it protects whole; one it could not take in time
 * (its holder waits for the forking thread, or the fork comes from a signal handler that
 * interrupted its holder) is made anew in the child and what it protected is dropped there.
 * FENCE stays last: the prepare handler waits for it apart, as long as its holder is inside the
 * loader's lock (loader/loader_lock.c), since a child forked while the loader's write lock is held
 * through it waits for ever in its next dlopen.
 * docs/HACKING.md lists them (tests/t_16_docs.sh checks the list against this table).
 *
 * CS_LOCK(id, kind, file, protects, drop): kind MUTEX or RWLOCK; drop, what the child does when
 * the lock could not be taken (a function of the owning file, or NULL: nothing is kept under it). */
CS_LOCK(SCAN,      MUTEX,  "loader/scanner.c",    "one scan at a time (inventory, library rules, binding)",          NULL)
CS_LOCK(REBIND,    MUTEX,  "loader/rebind.c",     "one binding pass over the loaded objects",                        cs_rebind_needed)
CS_LOCK(INVENTORY, RWLOCK, "evidence/inventory.c", "the loaded libraries' entries and their versions",                cs_inventory_drop)
CS_LOCK(DIAGNOSE,  MUTEX,  "diagnose/diagnose.c", "the runtimes seen through cuGetProcAddress; the rules' order",    cs_diagnose_drop)
CS_LOCK(DEVCODE,   RWLOCK, "hooks/devcode.c",     "the modules' images and the functions' names",                    cs_devcode_drop)
CS_LOCK(MEMORY,    MUTEX,  "hooks/memory.c",      "the live device allocations",                                     cs_memory_drop)
CS_LOCK(COMMS,     MUTEX,  "hooks/hooks_libs.c",  "the NCCL communicators' slots",                                   cs_comms_drop)
CS_LOCK(FINDINGS,  MUTEX,  "trace/findings.c",    "the findings said so far (each said once)",                       cs_findings_after_fork)
CS_LOCK(WRITER,    MUTEX,  "trace/writer.c",      "the trace file's lines (one write each)",                         NULL)
CS_LOCK(CALLS,     MUTEX,  "trace/calls_file.c",  "the ALL-mode calls file's chunks",                                NULL)
CS_LOCK(FENCE,     MUTEX,  "loader/loader_lock.c", "the loader's list of objects while the shim reads it",            NULL)
