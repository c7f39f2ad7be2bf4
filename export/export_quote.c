/*
 * export_quote.c - the text every export is built in, and the quoting of
 * its languages: a growable buffer (export_printf), the trainer's argument
 * list as words, written for a shell (single quotes, gp_shell_quote) or
 * as a YAML block list (double quotes with escapes, gp_yaml_quote).  JSON
 * is cJSON's (export_deepspeed_json.c).  Knows nothing of any trainer or
 * launcher: only how a string from the plan reaches a script or a
 * manifest unharmed.
 */
#include "export_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void export_printf(struct export_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		size_t room = b->cap - b->len;

		va_start(ap, fmt);
		n = vsnprintf(b->s ? b->s + b->len : NULL, room, fmt, ap);
		va_end(ap);
		if (n >= 0 && (size_t)n < room) {
			b->len += (size_t)n;
			return;
		}
		b->cap = b->cap ? 2 * b->cap + (size_t)n : 1024 + (size_t)n;
		b->s = xrealloc(b->s, b->cap);
	}
}

void export_words_push(struct words *ws, int brk, enum word_kind kind, const char *s)
{
	if (ws->n == ws->cap) {
		ws->cap = ws->cap ? 2 * ws->cap : 64;
		ws->w = xrealloc(ws->w, ws->cap * sizeof(*ws->w));
	}
	ws->w[ws->n].s = xstrdup(s);
	ws->w[ws->n].kind = kind;
	ws->w[ws->n].brk = brk;
	ws->n++;
}

/* Plain words, split at blanks, the first starting a new line. */
void export_words_line(struct words *ws, const char *fmt, ...)
{
	char text[512], *save = NULL, *tok;
	va_list ap;
	int first = 1;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	for (tok = strtok_r(text, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		export_words_push(ws, first, WORD_PLAIN, tok);
		first = 0;
	}
}

void export_words_release(struct words *ws)
{
	for (size_t i = 0; ws && i < ws->n; i++)
		free(ws->w[i].s);
	free(ws->w);
}

/* Appends ws as shell words, each line after a backslash-newline. */
void export_words_shell(struct export_buf *b, const struct words *ws)
{
	for (size_t i = 0; i < ws->n; i++) {
		const struct word *w = &ws->w[i];

		export_printf(b, "%s", w->brk ? " \\\n  " : " ");
		if (w->kind == WORD_VAR) {
			export_printf(b, "\"$%s\"", w->s);
		} else if (w->kind == WORD_QUOTED) {
			char *q = gp_shell_quote(w->s);

			export_printf(b, "%s", q);
			free(q);
		} else {
			export_printf(b, "%s", w->s);
		}
	}
}

/* Appends ws as YAML block-list items at indent, one a line, variables as
 * $(NAME), which the kubelet expands in a container's command and args
 * from its env (and nowhere else).  With joined, a flag and the one word
 * after it are one item, --flag=value, as argparse reads it: a TrainJob's
 * args hold at most 128 items (its CRD's maxItems). */
void export_words_yaml(struct export_buf *b, const struct words *ws, int indent, int joined)
{
	for (size_t i = 0; i < ws->n; i++) {
		char item[1024], *q;
		size_t n = 0;
		int take = 1;

		if (joined && ws->w[i].kind == WORD_PLAIN && strncmp(ws->w[i].s, "--", 2) == 0 &&
		    i + 1 < ws->n && !(ws->w[i + 1].kind == WORD_PLAIN &&
				       strncmp(ws->w[i + 1].s, "--", 2) == 0) &&
		    (i + 2 >= ws->n || strncmp(ws->w[i + 2].s, "--", 2) == 0))
			take = 2;
		for (int k = 0; k < take; k++) {
			const struct word *w = &ws->w[i + (size_t)k];

			n += (size_t)snprintf(item + n, sizeof(item) - n,
					      w->kind == WORD_VAR ? "%s$(%s)" : "%s%s",
					      k ? "=" : "", w->s);
			if (n >= sizeof(item))
				n = sizeof(item) - 1;
		}
		i += (size_t)take - 1;
		q = gp_yaml_quote(item);
		export_printf(b, "%*s- %s\n", indent, "", q);
		free(q);
	}
}

/* Appends s to b as a YAML double-quoted scalar (gp_yaml_quote). */
void export_yaml_quote(struct export_buf *b, const char *s)
{
	char *q = gp_yaml_quote(s);

	export_printf(b, "%s", q);
	free(q);
}

/* Returns 1 when s holds a control character, which the run: script
 * cannot carry: the YAML literal block it sits in would fold or end at
 * it. */
int export_has_control(const char *s)
{
	for (const unsigned char *c = (const unsigned char *)s; *c; c++)
		if (*c < 0x20 || *c == 0x7f)
			return 1;
	return 0;
}

/* Appends s to b as one shell word (gp_shell_quote). */
void export_shell_quote(struct export_buf *b, const char *s)
{
	char *q = gp_shell_quote(s);

	export_printf(b, "%s", q);
	free(q);
}
