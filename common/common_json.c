/*
 * common_json.c - gp_json_parse (json_internal.h): cJSON with the checks
 * cJSON does not make.  It reads and reports; what the fields mean is the
 * caller's.
 *
 * It calls alloc.c, escape.c and common.c.
 */
#include "common.h"
#include "json_internal.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Line and column (1-based) of byte off in buf[0..len). */
static void line_col(const char *buf, size_t len, size_t off, int *line, int *col)
{
	*line = 1;
	*col = 1;
	for (size_t i = 0; i < off && i < len; i++) {
		if (buf[i] == '\n') {
			(*line)++;
			*col = 1;
		} else {
			(*col)++;
		}
	}
}

static void at_error(const char *name, const char *buf, size_t len, size_t off,
		     const char *what)
{
	int line, col;

	line_col(buf, len, off, &line, &col);
	gp_error("%s:%d:%d: %s", name, line, col, what);
}

/* The offset of the first "\u0000" escape inside a string of buf[0..len)
 * (or len): cJSON would end the string there and drop the rest. */
static size_t nul_escape(const char *buf, size_t len)
{
	int in_string = 0;

	for (size_t i = 0; i < len; i++) {
		if (!in_string) {
			in_string = buf[i] == '"';
			continue;
		}
		if (buf[i] == '"') {
			in_string = 0;
		} else if (buf[i] == '\\' && i + 1 < len) {
			if (buf[i + 1] == 'u' && i + 5 < len && memcmp(buf + i + 2, "0000", 4) == 0)
				return i;
			i++; /* the escaped character */
		}
	}
	return len;
}

/* Checks the tree below it (at path): every key once per object, every
 * number finite.  Returns 0, or -1 after one message. */
static int check_tree(const char *name, const cJSON *it, char *path, size_t size)
{
	size_t plen = strlen(path);
	int i = 0;

	if (cJSON_IsNumber(it) && !isfinite(it->valuedouble)) {
		gp_error("%s: %s: expected a number of at most 1.8e308 in size, found one beyond "
			 "(read as infinity)", name, *path ? path : ".");
		return -1;
	}
	for (const cJSON *c = it->child; c; c = c->next, i++) {
		if (cJSON_IsObject(it) && c->string) {
			for (const cJSON *d = it->child; d != c; d = d->next)
				if (d->string && strcmp(d->string, c->string) == 0) {
					char e[128];

					gp_error("%s: %s: expected each key once, found \"%s\" again",
						 name, *path ? path : ".",
						 gp_term_escape(e, sizeof(e), c->string));
					return -1;
				}
			snprintf(path + plen, size - plen, ".%s", c->string);
		} else {
			snprintf(path + plen, size - plen, "[%d]", i);
		}
		if (check_tree(name, c, path, size) != 0)
			return -1;
		path[plen] = '\0';
	}
	return 0;
}

/* The byte of text[0..at] where the nesting of arrays and objects first
 * passes CJSON_NESTING_LIMIT, or (size_t)-1 when it does not (strings
 * skipped): cJSON stops there with no word of why. */
static size_t too_deep_at(const char *text, size_t at)
{
	size_t depth = 0;
	int in_str = 0;

	for (size_t i = 0; i <= at && text[i]; i++) {
		char c = text[i];

		if (in_str) {
			if (c == '\\' && text[i + 1])
				i++;
			else if (c == '"')
				in_str = 0;
		} else if (c == '"') {
			in_str = 1;
		} else if (c == '[' || c == '{') {
			if (++depth > CJSON_NESTING_LIMIT)
				return i;
		} else if ((c == ']' || c == '}') && depth) {
			depth--;
		}
	}
	return (size_t)-1;
}

cJSON *gp_json_parse(const char *name, const char *buf, size_t len)
{
	const char *nul = memchr(buf, '\0', len), *end = NULL;
	char *text, path[512] = "";
	size_t off;
	cJSON *root;

	if (nul) {
		at_error(name, buf, len, (size_t)(nul - buf), "expected JSON text, found a NUL byte");
		return NULL;
	}
	off = nul_escape(buf, len);
	if (off < len) {
		at_error(name, buf, len, off,
			 "expected a string without NUL characters, found \\u0000");
		return NULL;
	}
	/* cJSON reads up to a NUL: give it one after the text, and ask for
	 * nothing but white space between the value and it. */
	text = xmalloc(len + 1);
	memcpy(text, buf, len);
	text[len] = '\0';
	root = cJSON_ParseWithLengthOpts(text, len + 1, &end, 1);
	if (!root) {
		size_t at = end && end >= text ? (size_t)(end - text) : 0;
		cJSON *head = cJSON_ParseWithLengthOpts(text, len + 1, &end, 0);

		/* A whole value read without the check: what follows it is the
		 * error, a second document or stray bytes. */
		if (head) {
			char e[48];
			size_t v = (size_t)(end - text);

			cJSON_Delete(head);
			while (v < len && strchr(" \t\r\n", text[v]))
				v++;
			snprintf(path, sizeof(path),
				 "expected the end of the file after the JSON value, found %s",
				 gp_char_describe(e, sizeof(e), text, len, v));
			at_error(name, text, len, v, path);
		} else if (too_deep_at(text, at) != (size_t)-1) {
			size_t deep = too_deep_at(text, at);

			snprintf(path, sizeof(path),
				 "expected arrays and objects nested at most %d deep, found nesting "
				 "deeper than %d at byte %zu", CJSON_NESTING_LIMIT,
				 CJSON_NESTING_LIMIT, deep + 1);
			at_error(name, text, len, deep, path);
		} else {
			at_error(name, text, len, at, "expected valid JSON, found a syntax error");
		}
		free(text);
		return NULL;
	}
	free(text);
	if (check_tree(name, root, path, sizeof(path)) != 0) {
		cJSON_Delete(root);
		return NULL;
	}
	return root;
}
