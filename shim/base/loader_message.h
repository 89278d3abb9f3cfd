/* Parsers of outside texts (loader_message.c). */
#ifndef CS_LOADER_MESSAGE_H
#define CS_LOADER_MESSAGE_H
#include <limits.h>
#include <stddef.h>

enum { CS_LOADER_NONE, CS_LOADER_UNDEFINED_SYMBOL, CS_LOADER_MISSING_VERSION, CS_LOADER_NOT_FOUND };
struct cs_loader_message {
    int kind;
    char object[PATH_MAX];       /* the object named first: the needer, or the library */
    char symbol[512];            /* undefined symbol */
    char version[256];           /* its version node, or the missing version node */
    char required_by[PATH_MAX];  /* missing version node: the object that required it */
};
int cs_loader_message_parse(const char *msg, struct cs_loader_message *m);
int cs_nvrm_version_parse(const char *buf, char *out, size_t cap);
#endif
