/*
 * json_internal.h - the strict JSON parse every reader of a gpuplan file
 * (plans, calibrations) goes through.  Included only by *_json.c files,
 * the only files that include <cjson/cJSON.h>.
 */
#ifndef GPUPLAN_JSON_INTERNAL_H
#define GPUPLAN_JSON_INTERNAL_H

#include <stddef.h>

struct cJSON;

/* Parses buf[0..len) (need not be NUL-terminated) as exactly one JSON
 * value, stricter than cJSON: a NUL byte in the text, anything but white
 * space after the value (trailing garbage, a second document), a key
 * given twice in one object (cJSON would keep the first), a \u0000
 * inside a string (cJSON would cut the string there) and a number beyond
 * a double's range (1e400, which cJSON reads as infinity) are each
 * refused.  Returns the tree (free it with cJSON_Delete), or NULL after
 * one message "name:line:col: expected ..., found ..." (or "name: .path:
 * ..." for what is found in the tree). */
struct cJSON *gp_json_parse(const char *name, const char *buf, size_t len);

#endif
