/* Set while a crash record is being written (crash.c): the writers then take no lock they might
 * wait on and start nothing new (no file rotation, no name lookups). Its own file: every layer
 * that writes reads it. */
int _Atomic cs_crash_active;
