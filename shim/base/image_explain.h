/* Explanations of device-code predictions (image_explain.c). */
#ifndef CS_IMAGE_EXPLAIN_H
#define CS_IMAGE_EXPLAIN_H
#include <stddef.h>
#include "fatbin.h"
void cs_image_contents(const struct cs_entry *e, int n, char *out, size_t cap);
void cs_explain_prediction(const struct cs_entry *e, int n, unsigned cc, int driver, const struct cs_prediction *p,
                           char *out, size_t cap);
#endif
