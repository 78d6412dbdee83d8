/*
 * diffrules.c: the --fail-if rules of `opscope diff` (diff.h): parsing
 * `KIND[:GLOB] (>|<) [+|-]NUMBER(%|ns|us|ms|s)` and judging a diff row by one.
 *
 * Invariants: a parsed rule always has a kind, a glob ("*" when the rule names none) and a
 * finite amount; a rule never fires on a row whose change is within noise unless the caller
 * turns the noise check off, and an unknown noise (fewer than two steps a side) does not
 * hold a rule back: CI asked for a gate, and without a spread the change is all there is.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fnmatch.h>

#include "analyze/diff.h"

static void rule_err(char *err, size_t size, const char *s, const char *why)
{
	snprintf(err, size, "bad rule '%s': %s", s, why);
}

int diff_rule_parse(const char *s, struct diff_rule *r, char *err, size_t errsize)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->text, sizeof(r->text), "%s", s);
	/* the last '<' or '>': the amount has none, a module path ("Net > Linear") may */
	const char *op = NULL;
	for (const char *p = s; *p; p++)
		if (*p == '<' || *p == '>')
			op = p;
	if (!op) {
		rule_err(err, errsize, s, "no '>' or '<' (e.g. 'kernel:* > +10%')");
		return -1;
	}
	/* the selector: KIND or KIND:GLOB, blanks around it ignored */
	const char *b = s, *e = op;
	while (b < e && isspace((unsigned char)*b))
		b++;
	while (e > b && isspace((unsigned char)e[-1]))
		e--;
	const char *colon = memchr(b, ':', (size_t)(e - b));
	const char *kend = colon ? colon : e;
	enum diff_kind k;
	if (!diff_kind_parse(b, (size_t)(kend - b), &k)) {
		rule_err(err, errsize, s,
			 "the kind is not one of step, phase, op, module, kernel, nvtx, user");
		return -1;
	}
	r->kind = (uint8_t)k;
	if (colon) {
		size_t n = (size_t)(e - colon - 1);
		if (n == 0) {
			rule_err(err, errsize, s, "nothing after ':' (a name or glob, e.g. '*')");
			return -1;
		}
		if (n >= sizeof(r->glob)) {
			rule_err(err, errsize, s, "the name is too long");
			return -1;
		}
		memcpy(r->glob, colon + 1, n);
		r->glob[n] = '\0';
	} else {
		strcpy(r->glob, "*");
	}
	r->greater = *op == '>';
	/* the amount: a signed number and its unit */
	const char *p = op + 1;
	while (isspace((unsigned char)*p))
		p++;
	if (*p != '+' && *p != '-' && !isdigit((unsigned char)*p) && *p != '.') {
		rule_err(err, errsize, s, "no amount after the comparison (e.g. +5% or +2ms)");
		return -1;
	}
	/* plain decimal only: [+-]digits[.digits] (strtod alone would take "inf", hex) */
	const char *q = p + (*p == '+' || *p == '-');
	size_t digits = 0;
	for (; isdigit((unsigned char)*q); q++)
		digits++;
	if (*q == '.')
		for (q++; isdigit((unsigned char)*q); q++)
			digits++;
	char *end;
	double v = strtod(p, &end);
	if (digits == 0 || end != q || !isfinite(v)) {
		rule_err(err, errsize, s, "the amount is not a number");
		return -1;
	}
	const char *u = end;
	while (isspace((unsigned char)*u))
		u++;
	size_t ulen = strlen(u);
	while (ulen && isspace((unsigned char)u[ulen - 1]))
		ulen--;
	static const struct {
		const char *name;
		double ns;
	} units[] = { { "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 } };
	if (ulen == 1 && *u == '%') {
		r->percent = true;
		r->amount = v / 100.0;
		return 0;
	}
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strlen(units[i].name) == ulen && memcmp(units[i].name, u, ulen) == 0) {
			r->amount = v * units[i].ns;
			return 0;
		}
	rule_err(err, errsize, s,
		 ulen ? "the unit is not one of %, ns, us, ms, s"
		      : "the amount has no unit (%, ns, us, ms or s)");
	return -1;
}

bool diff_rule_fires(const struct diff_rule *r, const struct diff_row *w, bool noise_check)
{
	if (w->kind != r->kind || fnmatch(r->glob, w->name, 0) != 0)
		return false;
	/* a percentage of time A: an added row (A = 0) is an infinite increase */
	double x = r->percent ? w->change : (double)w->change_ns;
	bool past = r->greater ? x > r->amount : x < r->amount;
	if (!past)
		return false;
	return !noise_check || w->noise != DIFF_NOISE_WITHIN;
}
