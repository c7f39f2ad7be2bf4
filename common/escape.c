/*
 * escape.c - text that came from a file is data, never code: the checks a
 * reader applies to a cell or a string before keeping it (printable
 * UTF-8; names from a small safe set), and one escaper per language
 * gpuplan writes (POSIX shell, YAML, gnuplot, the terminal), each used by
 * every writer of that language.  JSON is escaped by cJSON.
 *
 * Readers refuse what the checks refuse; writers escape anyway, so a
 * string that reached memory some other way (a test, a future reader)
 * still cannot end a quote, a comment or a datablock.  Nothing here
 * prints.  It calls only alloc.c (the writers grow their buffers with
 * xrealloc); common.c's logging calls it, never the reverse.
 */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Decodes the UTF-8 sequence at s[0..n): returns its length (1 to 4) and
 * sets *cp, or 0 when the bytes are not well-formed UTF-8 (a stray
 * continuation byte, an overlong form, a surrogate, beyond U+10FFFF, a
 * sequence cut by n). */
static size_t utf8_decode(const unsigned char *s, size_t n, unsigned long *cp)
{
	unsigned long c;
	size_t len;

	if (n == 0)
		return 0;
	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if (s[0] >= 0xC2 && s[0] <= 0xDF) {
		len = 2;
		c = s[0] & 0x1F;
	} else if (s[0] >= 0xE0 && s[0] <= 0xEF) {
		len = 3;
		c = s[0] & 0x0F;
	} else if (s[0] >= 0xF0 && s[0] <= 0xF4) {
		len = 4;
		c = s[0] & 0x07;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3F);
	}
	if ((len == 3 && c < 0x800) || (len == 4 && (c < 0x10000 || c > 0x10FFFF)) ||
	    (c >= 0xD800 && c <= 0xDFFF))
		return 0;
	*cp = c;
	return len;
}

/* A code point that draws nothing, or changes how its neighbours draw,
 * so two strings that differ by it print alike: zero-width spaces and
 * joiners (U+200B-U+200D, U+2060-U+2064), the Arabic letter mark
 * (U+061C), the Mongolian vowel separator (U+180E), the byte-order mark
 * (U+FEFF), tag characters (U+E0000-U+E007F), variation selectors
 * (U+FE00-U+FE0F, U+E0100-U+E01EF), the soft hyphen (U+00AD), and the
 * marks that reorder text (U+200E/F, U+2028/9, U+202A-E, U+2066-9). */
static int cp_invisible(unsigned long c)
{
	return c == 0x00AD || c == 0x061C || c == 0x180E || (c >= 0x200B && c <= 0x200F) ||
	       c == 0x2028 || c == 0x2029 || (c >= 0x202A && c <= 0x202E) ||
	       (c >= 0x2060 && c <= 0x2064) || (c >= 0x2066 && c <= 0x2069) || c == 0xFEFF ||
	       (c >= 0xFE00 && c <= 0xFE0F) || (c >= 0xE0000 && c <= 0xE007F) ||
	       (c >= 0xE0100 && c <= 0xE01EF);
}

/* A space other than U+0020 that prints like one (no-break, en, em,
 * thin, figure, ideographic, ...): in a name it makes a look-alike. */
static int cp_exotic_space(unsigned long c)
{
	return c == 0x00A0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x202F ||
	       c == 0x205F || c == 0x3000;
}

/* A code point a terminal draws as what it is: not a C0 or C1 control,
 * not DEL, and not invisible (cp_invisible). */
static int cp_printable(unsigned long c)
{
	if (c < 0x20 || c == 0x7F || (c >= 0x80 && c < 0xA0))
		return 0;
	return !cp_invisible(c);
}

int gp_text_is_printable(const char *s, size_t len, size_t *bad)
{
	const unsigned char *u = (const unsigned char *)s;

	for (size_t i = 0; i < len;) {
		unsigned long c;
		size_t k = utf8_decode(u + i, len - i, &c);

		if (!k || !cp_printable(c)) {
			if (bad)
				*bad = i;
			return 0;
		}
		i += k;
	}
	return 1;
}

int gp_name_is_safe(const char *s, size_t len, size_t *bad)
{
	const unsigned char *u = (const unsigned char *)s;

	for (size_t i = 0; i < len;) {
		unsigned long c;
		size_t k = utf8_decode(u + i, len - i, &c);
		int ok = k && cp_printable(c) && !cp_exotic_space(c);

		if (ok && c < 0x80)
			ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			     (c >= '0' && c <= '9') || strchr(GP_NAME_PUNCT, (int)c) != NULL;
		if (!ok) {
			if (bad)
				*bad = i;
			return 0;
		}
		i += k;
	}
	return 1;
}

char *gp_char_describe(char *buf, size_t size, const char *s, size_t len, size_t at)
{
	const unsigned char *u = (const unsigned char *)s;
	unsigned long c;
	size_t k;

	if (at >= len) {
		snprintf(buf, size, "the end");
		return buf;
	}
	k = utf8_decode(u + at, len - at, &c);
	if (!k)
		snprintf(buf, size, "byte 0x%02x (not UTF-8)", u[at]);
	else if (c == 0)
		snprintf(buf, size, "a NUL byte");
	else if (c == '\n' || c == '\r')
		snprintf(buf, size, "a line break");
	else if (c < 0x20 || c == 0x7F)
		snprintf(buf, size, "control byte 0x%02lx", c);
	else if (!cp_printable(c))
		snprintf(buf, size, "invisible character U+%04lX", c);
	else if (cp_exotic_space(c))
		snprintf(buf, size, "a space other than U+0020: U+%04lX", c);
	else
		snprintf(buf, size, "'%.*s'", (int)k, s + at);
	return buf;
}

/* ---- writers ------------------------------------------------------------ */

struct sb {
	char *s;
	size_t len, cap;
};

static void sb_put(struct sb *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		while (b->len + n + 1 > b->cap)
			b->cap = b->cap ? 2 * b->cap : 64;
		b->s = xrealloc(b->s, b->cap);
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

static void sb_putc(struct sb *b, char c)
{
	sb_put(b, &c, 1);
}

char *gp_shell_quote(const char *s)
{
	struct sb b = { NULL, 0, 0 };

	sb_putc(&b, '\'');
	for (; *s; s++) {
		if (*s == '\'')
			sb_put(&b, "'\\''", 4);
		else
			sb_putc(&b, *s);
	}
	sb_putc(&b, '\'');
	return b.s;
}

char *gp_yaml_quote(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t len = strlen(s);
	struct sb b = { NULL, 0, 0 };
	char esc[16];

	sb_putc(&b, '"');
	for (size_t i = 0; i < len;) {
		unsigned long c;
		size_t k = utf8_decode(u + i, len - i, &c);

		if (!k) {
			/* YAML is Unicode: a byte that is not UTF-8 cannot be
			 * written, so it reads as the replacement character. */
			sb_put(&b, "\\uFFFD", 6);
			i++;
			continue;
		}
		if (c == '"' || c == '\\') {
			sb_putc(&b, '\\');
			sb_putc(&b, (char)c);
		} else if (!cp_printable(c)) {
			snprintf(esc, sizeof(esc), c < 0x100 ? "\\x%02lX" : "\\u%04lX", c);
			sb_put(&b, esc, strlen(esc));
		} else {
			sb_put(&b, s + i, k);
		}
		i += k;
	}
	sb_putc(&b, '"');
	return b.s;
}

char *gp_term_escape(char *buf, size_t size, const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t len = strlen(s), n = 0;

	if (size == 0)
		return buf;
	for (size_t i = 0; i < len;) {
		char esc[16];
		const char *piece;
		unsigned long c;
		size_t k = utf8_decode(u + i, len - i, &c), pn, adv;

		if (!k) {
			snprintf(esc, sizeof(esc), "\\x%02x", u[i]);
			piece = esc;
			adv = 1;
		} else if (!cp_printable(c)) {
			snprintf(esc, sizeof(esc), c < 0x100 ? "\\x%02lx" : "\\u%04lx", c);
			piece = esc;
			adv = k;
		} else {
			piece = s + i;
			adv = k;
		}
		pn = piece == esc ? strlen(esc) : k;
		/* Room for this piece, and for "..." should the next not fit. */
		if (n + pn + (i + adv < len ? 3 : 0) >= size) {
			if (n + 3 < size) {
				memcpy(buf + n, "...", 3);
				n += 3;
			}
			break;
		}
		memcpy(buf + n, piece, pn);
		n += pn;
		i += adv;
	}
	buf[n] = '\0';
	return buf;
}

char *gp_gnuplot_quote(const char *s)
{
	struct sb b = { NULL, 0, 0 };
	char esc[32];
	size_t len = strlen(s);

	/* Single quotes: gnuplot substitutes `commands` inside double quotes
	 * but not inside single ones, where only '' is special. */
	sb_putc(&b, '\'');
	for (size_t i = 0; i < len;) {
		unsigned long c;
		size_t k = utf8_decode((const unsigned char *)s + i, len - i, &c);

		if (!k || !cp_printable(c)) {
			if (!k)
				snprintf(esc, sizeof(esc), "\\x%02x", (unsigned char)s[i]);
			else
				snprintf(esc, sizeof(esc), c < 0x100 ? "\\x%02lx" : "\\u%04lx", c);
			sb_put(&b, esc, strlen(esc));
			i += k ? k : 1;
			continue;
		}
		if (c == '\'')
			sb_putc(&b, '\'');
		sb_put(&b, s + i, k);
		i += k;
	}
	sb_putc(&b, '\'');
	return b.s;
}

char *gp_gnuplot_field(const char *s)
{
	struct sb b = { NULL, 0, 0 };
	size_t len = strlen(s);

	for (size_t i = 0; i < len;) {
		unsigned long c;
		size_t k = utf8_decode((const unsigned char *)s + i, len - i, &c);

		if (!k || !cp_printable(c) || c == ',' || c == '"' || c == '\'' || c == '`') {
			/* what would split the field, quote it or end the line */
			sb_putc(&b, c == ',' ? ';' : '_');
			i += k ? k : 1;
			continue;
		}
		sb_put(&b, s + i, k);
		i += k;
	}
	if (!b.s)
		sb_put(&b, "", 0);
	return b.s;
}

char *gp_gnuplot_datablock(const char *name, const char *rows, size_t len)
{
	static const char eod[] = GP_GNUPLOT_EOD;
	struct sb b = { NULL, 0, 0 };

	sb_put(&b, "$", 1);
	sb_put(&b, name, strlen(name));
	sb_put(&b, " << " GP_GNUPLOT_EOD "\n", 5 + sizeof(eod) - 1);
	for (size_t i = 0; i < len;) {
		size_t j = i;

		while (j < len && rows[j] != '\n')
			j++;
		/* gnuplot ends the block at the first line that begins with
		 * the terminator: such a line is shifted by a blank, which
		 * gnuplot skips when it splits the fields. */
		if (j - i >= sizeof(eod) - 1 && memcmp(rows + i, eod, sizeof(eod) - 1) == 0)
			sb_putc(&b, ' ');
		for (size_t k = i; k < j; k++) {
			unsigned char c = (unsigned char)rows[k];

			sb_putc(&b, c < 0x20 || c == 0x7F ? '_' : (char)c);
		}
		sb_putc(&b, '\n');
		i = j + 1;
	}
	sb_put(&b, GP_GNUPLOT_EOD "\n", sizeof(eod));
	return b.s;
}
