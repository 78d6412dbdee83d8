/*
 * unwind.c: an async-signal-safe x86-64 unwinder over .eh_frame (unwind.h; issue 17).
 *
 * Why our own: the sampler must walk stacks of code without frame pointers (Debian's
 * python3.11, libc, libtorch) from inside a SIGPROF handler, where libgcc's unwinder and
 * libunwind may take the loader's lock (dl_iterate_phdr) or allocate. Here everything the
 * handler needs is prepared outside it:
 *
 *  - A module table (executable PT_LOAD ranges with their PT_GNU_EH_FRAME), built by
 *    unwind_modules_refresh() in ordinary code, sorted by address and published through an
 *    atomic pointer. A table is immutable once published and never freed, so a handler that
 *    loaded the pointer can use it however long it runs.
 *  - A walk: per frame, find the module of the pc (binary search), the FDE (binary search of
 *    .eh_frame_hdr's sorted table), run the CIE's and FDE's CFA program up to the pc, and
 *    apply the row: CFA = reg + offset (or a small DWARF expression), the return address and
 *    rbp read from the stack window, rsp = CFA. Resolved rows are kept in a per-thread
 *    direct-mapped cache so that repeated pcs (most of them) cost one lookup.
 *
 * What is refused rather than guessed: unknown CFA instructions or expression opcodes,
 * pointer encodings other than absptr/[us]data{2,4,8}/[us]leb128 with pcrel/datarel, CFA
 * bases other than rsp/rbp/rip, reads outside the stack window. A refused frame ends the
 * walk, marked truncated (and UNWIND_BAD_CFI, counted). A pc with no FDE (JIT code, a
 * stripped .eh_frame) gets one frame-pointer step when rbp looks like a frame in the window.
 * A walk is complete only when it reaches a frame whose return address rule is "undefined":
 * glibc marks the outermost frames, _start and the thread start in clone3/clone, that way.
 *
 * CFI bytes are read straight from the mapped modules: a module dlclose'd while a walk reads
 * it would fault (the table does not pin modules; the sampled programs do not unload code).
 */
#include "record/unwind.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <elf.h>
#include <link.h>
#include <sys/syscall.h>
#include <unistd.h>

/* ---- Module table. ---- */

struct umodule {
	uint64_t lo, hi;      /* an executable PT_LOAD's addresses */
	const uint8_t *hdr;   /* its object's .eh_frame_hdr, or NULL */
	const uint8_t *table; /* the hdr's sorted (initial_loc, fde) table */
	uint64_t count;	      /* entries in table */
	uint8_t table_enc;    /* DW_EH_PE_datarel | sdata4/udata4/sdata8/udata8 */
};

struct utable {
	uint64_t gen; /* 1, 2, ...: rows cached under another generation are stale */
	unsigned long long adds, subs; /* the loader's counters when it was built */
	struct utable *prev;	       /* the table it replaced: kept, and reachable (LSan) */
	size_t n;
	struct umodule m[];
};

static struct utable *_Atomic current;
static _Atomic uint64_t stat_walks, stat_frames, stat_bad, stat_fp, stat_trunc;

/* DWARF pointer encodings (LSB/eh_frame). */
enum {
	PE_ABSPTR = 0x00,
	PE_ULEB = 0x01,
	PE_UDATA2 = 0x02,
	PE_UDATA4 = 0x03,
	PE_UDATA8 = 0x04,
	PE_SLEB = 0x09,
	PE_SDATA2 = 0x0a,
	PE_SDATA4 = 0x0b,
	PE_SDATA8 = 0x0c,
	PE_PCREL = 0x10,
	PE_DATAREL = 0x30,
	PE_INDIRECT = 0x80,
	PE_OMIT = 0xff
};

/* A bounded reader over module bytes [p, end). */
struct cur {
	const uint8_t *p, *end;
	int bad;
};

static uint64_t cur_u(struct cur *c, unsigned n)
{
	if (c->bad || (size_t)(c->end - c->p) < n) {
		c->bad = 1;
		return 0;
	}
	uint64_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)c->p[i] << (8 * i);
	c->p += n;
	return v;
}

static uint64_t cur_uleb(struct cur *c)
{
	uint64_t v = 0;
	for (unsigned shift = 0; shift < 64; shift += 7) {
		uint64_t b = cur_u(c, 1);
		v |= (b & 0x7f) << shift;
		if (!(b & 0x80) || c->bad)
			return v;
	}
	c->bad = 1;
	return 0;
}

static int64_t cur_sleb(struct cur *c)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint64_t b;
	do {
		if (shift >= 64) {
			c->bad = 1;
			return 0;
		}
		b = cur_u(c, 1);
		v |= (b & 0x7f) << shift;
		shift += 7;
	} while ((b & 0x80) && !c->bad);
	if (shift < 64 && (b & 0x40))
		v |= ~0ull << shift;
	return (int64_t)v;
}

/* Read a pointer of encoding `enc`; `datarel` is the base of DW_EH_PE_datarel (the
 * .eh_frame_hdr). An encoding we do not know marks the cursor bad. Indirect pointers are
 * read as the address they are (only the personality uses them, and it is skipped). */
static uint64_t cur_ptr(struct cur *c, uint8_t enc, uint64_t datarel)
{
	if (enc == PE_OMIT)
		return 0;
	uint64_t at = (uint64_t)(uintptr_t)c->p, v;
	switch (enc & 0x0f) {
	case PE_ABSPTR:
	case PE_UDATA8:
	case PE_SDATA8:
		v = cur_u(c, 8);
		break;
	case PE_ULEB:
		v = cur_uleb(c);
		break;
	case PE_SLEB:
		v = (uint64_t)cur_sleb(c);
		break;
	case PE_UDATA2:
		v = cur_u(c, 2);
		break;
	case PE_SDATA2:
		v = (uint64_t)(int64_t)(int16_t)cur_u(c, 2);
		break;
	case PE_UDATA4:
		v = cur_u(c, 4);
		break;
	case PE_SDATA4:
		v = (uint64_t)(int64_t)(int32_t)cur_u(c, 4);
		break;
	default:
		c->bad = 1;
		return 0;
	}
	switch (enc & 0x70) {
	case 0:
		break;
	case PE_PCREL:
		v += at;
		break;
	case PE_DATAREL:
		v += datarel;
		break;
	default:
		c->bad = 1;
		return 0; /* textrel, funcrel, aligned: not emitted on x86-64 */
	}
	return v;
}

struct build {
	struct umodule *m;
	size_t n, cap;
	int oom;
};

/* The search table of the .eh_frame_hdr at `hdr` into m (hdr, table, count, table_enc), or
 * m->hdr = NULL when there is none we can binary-search: version 1, a datarel table of
 * fixed-size entries. */
static void hdr_table(const uint8_t *hdr, struct umodule *m)
{
	m->hdr = NULL;
	m->table = NULL;
	m->count = 0;
	m->table_enc = 0;
	if (!hdr || hdr[0] != 1 || hdr[2] == PE_OMIT || hdr[3] == PE_OMIT ||
	    (hdr[3] & 0x70) != PE_DATAREL ||
	    !((hdr[3] & 0x0f) == PE_UDATA4 || (hdr[3] & 0x0f) == PE_SDATA4 ||
	      (hdr[3] & 0x0f) == PE_UDATA8 || (hdr[3] & 0x0f) == PE_SDATA8))
		return;
	struct cur c = { hdr + 4, hdr + 4 + 16, 0 };
	cur_ptr(&c, hdr[1], (uint64_t)(uintptr_t)hdr);
	uint64_t count = cur_ptr(&c, hdr[2], (uint64_t)(uintptr_t)hdr);
	if (c.bad)
		return;
	m->hdr = hdr;
	m->table = c.p;
	m->count = count;
	m->table_enc = hdr[3];
}

static int collect(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct build *b = arg;
	const uint8_t *hdr = NULL;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_GNU_EH_FRAME)
			hdr = (const uint8_t *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
	struct umodule tab;
	hdr_table(hdr, &tab);
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) || ph->p_memsz == 0)
			continue;
		if (b->n == b->cap) {
			size_t cap = b->cap ? b->cap * 2 : 64;
			struct umodule *m = realloc(b->m, cap * sizeof(*m));
			if (!m) {
				b->oom = 1;
				return 1;
			}
			b->m = m;
			b->cap = cap;
		}
		struct umodule *m = &b->m[b->n++];
		m->lo = info->dlpi_addr + ph->p_vaddr;
		m->hi = m->lo + ph->p_memsz;
		m->hdr = tab.hdr;
		m->table = tab.table;
		m->count = tab.count;
		m->table_enc = tab.table_enc;
	}
	return 0;
}

static int counters(struct dl_phdr_info *info, size_t size, void *arg)
{
	unsigned long long *ab = arg;
	if (size < offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs))
		return 1;
	ab[0] = info->dlpi_adds;
	ab[1] = info->dlpi_subs;
	return 1; /* the counters are the same in every entry: stop at the first */
}

static int umodule_cmp(const void *a, const void *b)
{
	const struct umodule *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

int unwind_modules_refresh(void)
{
	unsigned long long ab[2] = { 0, 0 };
	dl_iterate_phdr(counters, ab);
	struct utable *old = atomic_load_explicit(&current, memory_order_acquire);
	if (old && old->adds == ab[0] && old->subs == ab[1])
		return 0;
	struct build b = { NULL, 0, 0, 0 };
	dl_iterate_phdr(collect, &b);
	if (b.oom) {
		free(b.m);
		return -1;
	}
	struct utable *t = malloc(sizeof(*t) + b.n * sizeof(t->m[0]));
	if (!t) {
		free(b.m);
		return -1;
	}
	t->gen = old ? old->gen + 1 : 1;
	t->prev = old;
	t->adds = ab[0];
	t->subs = ab[1];
	t->n = b.n;
	if (b.n)
		memcpy(t->m, b.m, b.n * sizeof(t->m[0]));
	free(b.m);
	qsort(t->m, t->n, sizeof(t->m[0]), umodule_cmp);
	/* `old` is not freed: a handler may be reading it (see the file's opening). */
	atomic_store_explicit(&current, t, memory_order_release);
	return 0;
}

void unwind_stats_reset(void)
{
	atomic_store_explicit(&stat_walks, 0, memory_order_relaxed);
	atomic_store_explicit(&stat_frames, 0, memory_order_relaxed);
	atomic_store_explicit(&stat_bad, 0, memory_order_relaxed);
	atomic_store_explicit(&stat_fp, 0, memory_order_relaxed);
	atomic_store_explicit(&stat_trunc, 0, memory_order_relaxed);
}

void unwind_stats_get(struct unwind_stats *s)
{
	s->walks = atomic_load_explicit(&stat_walks, memory_order_relaxed);
	s->frames = atomic_load_explicit(&stat_frames, memory_order_relaxed);
	s->bad_cfi = atomic_load_explicit(&stat_bad, memory_order_relaxed);
	s->fp_steps = atomic_load_explicit(&stat_fp, memory_order_relaxed);
	s->truncated = atomic_load_explicit(&stat_trunc, memory_order_relaxed);
}

static const struct umodule *module_of(const struct utable *t, uint64_t pc)
{
	size_t lo = 0, hi = t->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (pc < t->m[mid].lo)
			hi = mid;
		else if (pc >= t->m[mid].hi)
			lo = mid + 1;
		else
			return &t->m[mid];
	}
	return NULL;
}

/* A module loaded since the table was built (a handler cannot call dl_iterate_phdr, which
 * takes the loader's lock): found in the loader's public list of objects (_r_debug), whose
 * ELF and program headers sit at the start of its first page (a shared object's first
 * PT_LOAD maps file offset 0 at address 0). That page is checked to be mapped (mincore)
 * before it is read, and objects at base 0 (a non-PIE executable: in the table anyway) are
 * skipped. Only walks that met a pc outside the table pay for this. 0 when found. */
static int module_from_link_map(uint64_t pc, struct umodule *out)
{
	unsigned guard = 0;
	for (const struct link_map *l = _r_debug.r_map; l && guard < 4096; l = l->l_next, guard++) {
		uint64_t base = l->l_addr;
		unsigned char vec;
		if (base == 0 || (base & 4095) ||
		    syscall(SYS_mincore, (void *)(uintptr_t)base, 4096, &vec) != 0)
			continue;
		const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)(uintptr_t)base;
		if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
		    eh->e_phentsize != sizeof(ElfW(Phdr)) || eh->e_phnum > 64 ||
		    eh->e_phoff + (uint64_t)eh->e_phnum * sizeof(ElfW(Phdr)) > 4096)
			continue;
		const ElfW(Phdr) *ph = (const ElfW(Phdr) *)(uintptr_t)(base + eh->e_phoff);
		const uint8_t *hdr = NULL;
		int hit = 0;
		for (unsigned i = 0; i < eh->e_phnum; i++) {
			if (ph[i].p_type == PT_GNU_EH_FRAME)
				hdr = (const uint8_t *)(uintptr_t)(base + ph[i].p_vaddr);
			if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X) &&
			    pc - (base + ph[i].p_vaddr) < ph[i].p_memsz) {
				out->lo = base + ph[i].p_vaddr;
				out->hi = out->lo + ph[i].p_memsz;
				hit = 1;
			}
		}
		if (hit) {
			hdr_table(hdr, out);
			return 0;
		}
	}
	return -1;
}

/* The FDE whose range may hold pc: the last table entry with initial_loc <= pc. */
static const uint8_t *fde_of(const struct umodule *m, uint64_t pc)
{
	unsigned w =
		(m->table_enc & 0x0f) == PE_UDATA4 || (m->table_enc & 0x0f) == PE_SDATA4 ? 4 : 8;
	uint64_t base = (uint64_t)(uintptr_t)m->hdr;
	uint64_t lo = 0, hi = m->count;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		struct cur c = { m->table + mid * 2 * w, m->table + (mid + 1) * 2 * w, 0 };
		uint64_t loc = cur_ptr(&c, m->table_enc, base);
		if (pc < loc)
			hi = mid;
		else
			lo = mid + 1;
	}
	if (lo == 0)
		return NULL;
	struct cur c = { m->table + (lo - 1) * 2 * w, m->table + lo * 2 * w, 0 };
	cur_ptr(&c, m->table_enc, base);
	return (const uint8_t *)(uintptr_t)cur_ptr(&c, m->table_enc, base);
}

/* ---- CFI rows. ---- */

enum {
	R_UNSET, /* no rule given: for rbp "same value", for rip a broken row */
	R_UNDEF, /* DW_CFA_undefined: for rip, the outermost frame */
	R_SAME,
	R_OFFSET,     /* saved at CFA + off */
	R_VAL_OFFSET, /* the value is CFA + off */
	R_REG,	      /* the value is in register reg */
	R_EXPR,	      /* saved at the address expr computes (CFA pushed first) */
	R_VAL_EXPR,   /* the value expr computes */
	C_REG,	      /* CFA = reg + off */
	C_EXPR,	      /* CFA = the value of expr */
};

#define UROW_NO_FDE 1u
#define UROW_SIGNAL 2u /* the FDE is a signal frame's ('S'): its caller's pc is exact */
#define UROW_BAD    4u

#define DW_RBP	    6
#define DW_RSP	    7
#define DW_RIP	    16
#define STATE_DEPTH 8 /* DW_CFA_remember_state nesting */

struct rowstate {
	struct unwind_rule cfa, rip, rsp, rbp;
};

struct cie {
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_reg;
	uint8_t fde_enc;
	int has_z, signal;
	const uint8_t *insns, *end;
};

static struct unwind_rule *rule_of(struct rowstate *s, uint64_t reg, uint64_t ra)
{
	if (reg == ra)
		return &s->rip;
	if (reg == DW_RSP)
		return &s->rsp;
	if (reg == DW_RBP)
		return &s->rbp;
	return NULL; /* a register we do not track: its rule is read and dropped */
}

static void set_rule(struct unwind_rule *r, uint8_t kind, int64_t off)
{
	if (!r)
		return;
	r->kind = kind;
	r->off = (int32_t)off;
	r->expr = NULL;
	r->len = 0;
}

/* Run CFA instructions [c) until the location passes pc. `init` is the state after the
 * CIE's instructions (for DW_CFA_restore), NULL while running them. When the location would
 * pass pc, *next (if not NULL) gets where the row that holds at pc ends. 0, or -1 on anything
 * we do not know. */
static int run_cfa(struct cur *c, const struct cie *ci, uint64_t *loc, uint64_t pc,
		   struct rowstate *s, const struct rowstate *init, uint64_t *next)
{
	struct rowstate stack[STATE_DEPTH];
	unsigned depth = 0;
	while (c->p < c->end && !c->bad) {
		uint8_t op = (uint8_t)cur_u(c, 1);
		uint64_t reg = op & 0x3f, delta = 0;
		int64_t off;
		struct unwind_rule *r;
		switch (op & 0xc0) {
		case 0x40: /* DW_CFA_advance_loc */
			delta = reg * ci->code_align;
			goto advance;
		case 0x80: /* DW_CFA_offset */
			off = (int64_t)cur_uleb(c) * ci->data_align;
			set_rule(rule_of(s, reg, ci->ra_reg), R_OFFSET, off);
			continue;
		case 0xc0: /* DW_CFA_restore */
			goto restore;
		}
		switch (op) {
		case 0x00: /* nop */
			continue;
		case 0x01: /* set_loc */
			delta = cur_ptr(c, ci->fde_enc, 0) - *loc;
			goto advance;
		case 0x02:
			delta = cur_u(c, 1) * ci->code_align;
			goto advance;
		case 0x03:
			delta = cur_u(c, 2) * ci->code_align;
			goto advance;
		case 0x04:
			delta = cur_u(c, 4) * ci->code_align;
			goto advance;
		case 0x05: /* offset_extended */
			reg = cur_uleb(c);
			off = (int64_t)cur_uleb(c) * ci->data_align;
			set_rule(rule_of(s, reg, ci->ra_reg), R_OFFSET, off);
			continue;
		case 0x06: /* restore_extended */
			reg = cur_uleb(c);
			goto restore;
		case 0x07: /* undefined */
			set_rule(rule_of(s, cur_uleb(c), ci->ra_reg), R_UNDEF, 0);
			continue;
		case 0x08: /* same_value */
			set_rule(rule_of(s, cur_uleb(c), ci->ra_reg), R_SAME, 0);
			continue;
		case 0x09: /* register */
			r = rule_of(s, cur_uleb(c), ci->ra_reg);
			reg = cur_uleb(c);
			set_rule(r, R_REG, 0);
			if (r)
				r->reg = (uint8_t)(reg < 255 ? reg : 255);
			continue;
		case 0x0a: /* remember_state */
			if (depth == STATE_DEPTH)
				return -1;
			stack[depth++] = *s;
			continue;
		case 0x0b: /* restore_state: the whole row, CFA included */
			if (depth == 0)
				return -1;
			*s = stack[--depth];
			continue;
		case 0x0c: /* def_cfa */
			reg = cur_uleb(c);
			off = (int64_t)cur_uleb(c);
			goto def_cfa;
		case 0x0d: /* def_cfa_register */
			reg = cur_uleb(c);
			off = s->cfa.kind == C_REG ? s->cfa.off : 0;
			goto def_cfa;
		case 0x0e: /* def_cfa_offset */
			if (s->cfa.kind != C_REG)
				return -1;
			s->cfa.off = (int32_t)cur_uleb(c);
			continue;
		case 0x0f: /* def_cfa_expression */
		{
			uint64_t len = cur_uleb(c);
			if (len > (uint64_t)(c->end - c->p) || len > 0xffff)
				return -1;
			s->cfa.kind = C_EXPR;
			s->cfa.expr = c->p;
			s->cfa.len = (uint16_t)len;
			c->p += len;
			continue;
		}
		case 0x10: /* expression */
		case 0x16: /* val_expression */
		{
			r = rule_of(s, cur_uleb(c), ci->ra_reg);
			uint64_t len = cur_uleb(c);
			if (len > (uint64_t)(c->end - c->p) || len > 0xffff)
				return -1;
			set_rule(r, op == 0x10 ? R_EXPR : R_VAL_EXPR, 0);
			if (r) {
				r->expr = c->p;
				r->len = (uint16_t)len;
			}
			c->p += len;
			continue;
		}
		case 0x11: /* offset_extended_sf */
			reg = cur_uleb(c);
			off = cur_sleb(c) * ci->data_align;
			set_rule(rule_of(s, reg, ci->ra_reg), R_OFFSET, off);
			continue;
		case 0x12: /* def_cfa_sf */
			reg = cur_uleb(c);
			off = cur_sleb(c) * ci->data_align;
			goto def_cfa;
		case 0x13: /* def_cfa_offset_sf */
			if (s->cfa.kind != C_REG)
				return -1;
			s->cfa.off = (int32_t)(cur_sleb(c) * ci->data_align);
			continue;
		case 0x14: /* val_offset */
			reg = cur_uleb(c);
			off = (int64_t)cur_uleb(c) * ci->data_align;
			set_rule(rule_of(s, reg, ci->ra_reg), R_VAL_OFFSET, off);
			continue;
		case 0x15: /* val_offset_sf */
			reg = cur_uleb(c);
			off = cur_sleb(c) * ci->data_align;
			set_rule(rule_of(s, reg, ci->ra_reg), R_VAL_OFFSET, off);
			continue;
		case 0x2e: /* GNU_args_size: only matters to exception landing pads */
			cur_uleb(c);
			continue;
		case 0x2f: /* GNU_negative_offset_extended */
			reg = cur_uleb(c);
			off = -(int64_t)cur_uleb(c) * ci->data_align;
			set_rule(rule_of(s, reg, ci->ra_reg), R_OFFSET, off);
			continue;
		default:
			return -1;
		}
advance:
		if (*loc + delta > pc) {
			if (next)
				*next = *loc + delta;
			return 0; /* the row for pc is complete */
		}
		*loc += delta;
		continue;
restore:
		if (!init)
			return -1; /* DW_CFA_restore inside a CIE */
		r = rule_of(s, reg, ci->ra_reg);
		if (r)
			*r = *rule_of((struct rowstate *)init, reg, ci->ra_reg);
		continue;
def_cfa:
		/* Any register here: stack-realigning functions define the CFA on r10 for a few
		 * prologue instructions and then by an expression over rbp. A row that still
		 * needs an untracked register fails in the walk (unwind.h says why). */
		s->cfa.kind = C_REG;
		s->cfa.reg = (uint8_t)(reg <= DW_RIP ? reg : 255);
		s->cfa.off = (int32_t)off;
		s->cfa.expr = NULL;
		continue;
	}
	return c->bad ? -1 : 0;
}

/* Parse the CIE at `p`. 0, or -1 when it is not one we can use. */
static int parse_cie(const uint8_t *p, struct cie *ci)
{
	struct cur c = { p, p + 4, 0 };
	uint64_t len = cur_u(&c, 4);
	if (len == 0 || len == 0xffffffffu)
		return -1; /* 64-bit .eh_frame lengths are not emitted on x86-64 */
	c.end = c.p + len;
	if (cur_u(&c, 4) != 0)
		return -1; /* not a CIE */
	uint64_t version = cur_u(&c, 1);
	if (version != 1 && version != 3)
		return -1;
	const char *aug = (const char *)c.p;
	while (c.p < c.end && *c.p)
		c.p++;
	if (c.p >= c.end)
		return -1;
	c.p++;
	if (aug[0] == 'e' && aug[1] == 'h')
		cur_u(&c, 8);
	ci->code_align = cur_uleb(&c);
	ci->data_align = cur_sleb(&c);
	ci->ra_reg = version == 1 ? cur_u(&c, 1) : cur_uleb(&c);
	ci->fde_enc = PE_ABSPTR;
	ci->has_z = aug[0] == 'z';
	ci->signal = 0;
	if (ci->has_z) {
		uint64_t alen = cur_uleb(&c);
		if (c.bad || alen > (uint64_t)(c.end - c.p))
			return -1;
		const uint8_t *aend = c.p + alen;
		for (const char *a = aug + 1; *a && c.p < aend; a++) {
			switch (*a) {
			case 'R':
				ci->fde_enc = (uint8_t)cur_u(&c, 1);
				break;
			case 'L':
				cur_u(&c, 1);
				break;
			case 'P': {
				uint8_t enc = (uint8_t)cur_u(&c, 1);
				cur_ptr(&c, (uint8_t)(enc & ~PE_INDIRECT), 0);
				break;
			}
			case 'S':
				ci->signal = 1;
				break;
			default:
				c.p = aend;
				break; /* unknown: its data (and the rest) skipped */
			}
		}
		c.p = aend;
	} else if (aug[0]) {
		return -1; /* augmentation data we cannot skip */
	}
	if (c.bad)
		return -1;
	ci->insns = c.p;
	ci->end = c.end;
	return 0;
}

/* Resolve the CFI row of `pc` into `row` (row->what gets UROW_NO_FDE or UROW_BAD), and the
 * addresses [*lo, *hi) that share it (pc alone for a row without CFI). */
static void resolve(const struct umodule *m, uint64_t pc, struct unwind_row *row, uint64_t *lo,
		    uint64_t *hi)
{
	memset(row, 0, sizeof(*row));
	*lo = pc;
	*hi = pc + 1;
	const uint8_t *fde = m && m->table ? fde_of(m, pc) : NULL;
	if (!fde) {
		row->what = UROW_NO_FDE;
		return;
	}
	struct cur c = { fde, fde + 8, 0 };
	uint64_t len = cur_u(&c, 4);
	if (len == 0 || len == 0xffffffffu) {
		row->what = UROW_BAD;
		return;
	}
	const uint8_t *id_at = c.p;
	c.end = c.p + len;
	uint64_t cie_off = cur_u(&c, 4);
	struct cie ci;
	if (cie_off == 0 || parse_cie(id_at - cie_off, &ci) != 0) {
		row->what = UROW_BAD;
		return;
	}
	uint64_t begin = cur_ptr(&c, ci.fde_enc, 0);
	uint64_t range = cur_ptr(&c, (uint8_t)(ci.fde_enc & 0x0f), 0);
	if (c.bad || pc < begin || pc - begin >= range) {
		row->what = c.bad ? UROW_BAD : UROW_NO_FDE; /* a gap between FDEs */
		return;
	}
	if (ci.has_z) {
		uint64_t alen = cur_uleb(&c);
		if (alen > (uint64_t)(c.end - c.p)) {
			row->what = UROW_BAD;
			return;
		}
		c.p += alen;
	}
	struct rowstate s, init;
	memset(&s, 0, sizeof(s));
	uint64_t loc = begin;
	struct cur ic = { ci.insns, ci.end, 0 };
	if (run_cfa(&ic, &ci, &loc, ~0ull, &s, NULL, NULL) != 0) {
		row->what = UROW_BAD;
		return;
	}
	init = s;
	loc = begin;
	uint64_t next = begin + range; /* the last row holds to the FDE's end */
	if (run_cfa(&c, &ci, &loc, pc, &s, &init, &next) != 0 || s.cfa.kind == 0) {
		row->what = UROW_BAD;
		return;
	}
	row->what = ci.signal ? UROW_SIGNAL : 0;
	row->cfa = s.cfa;
	row->rip = s.rip;
	row->rsp = s.rsp;
	row->rbp = s.rbp;
	*lo = loc;
	*hi = next < begin + range ? next : begin + range; /* an advance past the FDE's end */
}

/* ---- The walk. ---- */

struct frame {
	uint64_t reg[17]; /* by DWARF number; only rbp, rsp, rip are tracked */
	unsigned known;	  /* bit per register in reg[] that holds a value */
};

static int win_read(const struct unwind_window *w, uint64_t addr, uint64_t *out)
{
	if (addr < w->lo || addr > w->hi || w->hi - addr < 8)
		return -1;
	memcpy(out, w->bytes + (addr - w->lo), 8);
	return 0;
}

/* Evaluate a CFA or register expression (`cfa` pushed first when push_cfa): the opcodes GCC,
 * LLVM and glibc emit on x86-64 (the PLT's rsp + 8 + ((rip & 15) >= 11) * 8, stack
 * realignment's breg6 off; deref). -1 on anything else. */
static int eval_expr(const uint8_t *e, uint16_t len, const struct frame *f,
		     const struct unwind_window *w, int push_cfa, uint64_t cfa, uint64_t *out)
{
	uint64_t st[8];
	unsigned n = 0;
	if (push_cfa)
		st[n++] = cfa;
	struct cur c = { e, e + len, 0 };
	while (c.p < c.end && !c.bad) {
		uint8_t op = (uint8_t)cur_u(&c, 1);
		uint64_t a;
		if (op >= 0x30 && op <= 0x4f) { /* DW_OP_lit0..31 */
			if (n == 8)
				return -1;
			st[n++] = op - 0x30u;
			continue;
		}
		if (op >= 0x70 && op <= 0x8f) { /* DW_OP_breg0..31 */
			unsigned r = op - 0x70u;
			int64_t off = cur_sleb(&c);
			if (r > 16 || !(f->known & (1u << r)) || n == 8)
				return -1;
			st[n++] = f->reg[r] + (uint64_t)off;
			continue;
		}
		switch (op) {
		case 0x06: /* deref */
			if (n < 1 || win_read(w, st[n - 1], &a) != 0)
				return -1;
			st[n - 1] = a;
			continue;
		case 0x08:
			a = cur_u(&c, 1);
			goto push; /* const1u */
		case 0x09:
			a = (uint64_t)(int8_t)cur_u(&c, 1);
			goto push; /* const1s */
		case 0x0a:
			a = cur_u(&c, 2);
			goto push; /* const2u */
		case 0x0b:
			a = (uint64_t)(int16_t)cur_u(&c, 2);
			goto push; /* const2s */
		case 0x0c:
			a = cur_u(&c, 4);
			goto push; /* const4u */
		case 0x0d:
			a = (uint64_t)(int32_t)cur_u(&c, 4);
			goto push; /* const4s */
		case 0x0e:
		case 0x0f:
			a = cur_u(&c, 8);
			goto push; /* const8u/s */
		case 0x10:
			a = cur_uleb(&c);
			goto push; /* constu */
		case 0x11:
			a = (uint64_t)cur_sleb(&c);
			goto push; /* consts */
		case 0x12:	   /* dup */
			if (n < 1)
				return -1;
			a = st[n - 1];
			goto push;
		case 0x13: /* drop */
			if (n < 1)
				return -1;
			n--;
			continue;
		case 0x16: /* swap */
			if (n < 2)
				return -1;
			a = st[n - 1];
			st[n - 1] = st[n - 2];
			st[n - 2] = a;
			continue;
		case 0x23: /* plus_uconst */
			if (n < 1)
				return -1;
			st[n - 1] += cur_uleb(&c);
			continue;
		case 0x1a: /* and */
		case 0x1c: /* minus */
		case 0x1e: /* mul */
		case 0x21: /* or */
		case 0x22: /* plus */
		case 0x24: /* shl */
		case 0x25: /* shr */
		case 0x27: /* xor */
		case 0x29: /* eq */
		case 0x2a: /* ge */
		case 0x2b: /* gt */
		case 0x2c: /* le */
		case 0x2d: /* lt */
		case 0x2e: /* ne */
		{
			if (n < 2)
				return -1;
			uint64_t y = st[--n], x = st[n - 1];
			int64_t sx = (int64_t)x, sy = (int64_t)y;
			switch (op) {
			case 0x1a:
				x &= y;
				break;
			case 0x1c:
				x -= y;
				break;
			case 0x1e:
				x *= y;
				break;
			case 0x21:
				x |= y;
				break;
			case 0x22:
				x += y;
				break;
			case 0x24:
				x = y < 64 ? x << y : 0;
				break;
			case 0x25:
				x = y < 64 ? x >> y : 0;
				break;
			case 0x27:
				x ^= y;
				break;
			case 0x29:
				x = sx == sy;
				break;
			case 0x2a:
				x = sx >= sy;
				break;
			case 0x2b:
				x = sx > sy;
				break;
			case 0x2c:
				x = sx <= sy;
				break;
			case 0x2d:
				x = sx < sy;
				break;
			default:
				x = sx != sy;
				break;
			}
			st[n - 1] = x;
			continue;
		}
		default:
			return -1;
		}
push:
		if (n == 8)
			return -1;
		st[n++] = a;
	}
	if (c.bad || n < 1)
		return -1;
	*out = st[n - 1];
	return 0;
}

/* The caller's value of one register under rule `r`. 0, or -1 when it cannot be had. */
static int apply(const struct unwind_rule *r, unsigned self, const struct frame *f,
		 const struct unwind_window *w, uint64_t cfa, uint64_t *out)
{
	uint64_t a;
	switch (r->kind) {
	case R_UNSET:
	case R_SAME:
		if (!(f->known & (1u << self)))
			return -1;
		*out = f->reg[self];
		return 0;
	case R_OFFSET:
		return win_read(w, cfa + (uint64_t)(int64_t)r->off, out);
	case R_VAL_OFFSET:
		*out = cfa + (uint64_t)(int64_t)r->off;
		return 0;
	case R_REG:
		if (r->reg > 16 || !(f->known & (1u << r->reg)))
			return -1;
		*out = f->reg[r->reg];
		return 0;
	case R_EXPR:
		if (eval_expr(r->expr, r->len, f, w, 1, cfa, &a) != 0)
			return -1;
		return win_read(w, a, out);
	case R_VAL_EXPR:
		return eval_expr(r->expr, r->len, f, w, 1, cfa, out);
	default:
		return -1;
	}
}

/* Forms of struct unwind_quick, and its bits. */
enum { QUICK_NONE, QUICK_RSP, QUICK_RBP, QUICK_END };
#define QUICK_RBP_SAVED 1u
#define QUICK_EXACT	2u

static int fits_i16(int32_t v)
{
	return v >= INT16_MIN && v <= INT16_MAX;
}

/* The quick form of a resolved row: QUICK_NONE where the walk needs the row itself. */
static struct unwind_quick quick_of(const struct unwind_row *row)
{
	struct unwind_quick q = { 0, 0, 0, QUICK_NONE, 0 };
	if (row->what & (UROW_NO_FDE | UROW_BAD))
		return q;
	if (row->rip.kind == R_UNDEF) {
		q.form = QUICK_END;
		return q;
	}
	if (row->cfa.kind != C_REG || (row->cfa.reg != DW_RSP && row->cfa.reg != DW_RBP) ||
	    !fits_i16(row->cfa.off) || row->rip.kind != R_OFFSET || !fits_i16(row->rip.off) ||
	    row->rsp.kind != R_UNSET)
		return q;
	if (row->rbp.kind == R_OFFSET && fits_i16(row->rbp.off)) {
		q.bits |= QUICK_RBP_SAVED;
		q.rbp_off = (int16_t)row->rbp.off;
	} else if (row->rbp.kind != R_UNSET && row->rbp.kind != R_SAME) {
		return q;
	}
	if (row->what & UROW_SIGNAL)
		q.bits |= QUICK_EXACT;
	q.cfa_off = (int16_t)row->cfa.off;
	q.rip_off = (int16_t)row->rip.off;
	q.form = row->cfa.reg == DW_RSP ? QUICK_RSP : QUICK_RBP;
	return q;
}

/* The set of `pc` among the cache's sets, and among its spans (by the pc's page). */
static size_t set_of(uint64_t pc)
{
	return (size_t)((pc * 0x9e3779b97f4a7c15ull) >> 56);
}

static size_t span_set_of(uint64_t pc)
{
	return (size_t)(((pc >> 12) * 0x9e3779b97f4a7c15ull) >> 57);
}

/* Put `row` for `pc` in its set (the set's next way in turn); its quick form there. */
static const struct unwind_quick *set_put(struct unwind_cache *cache, uint64_t pc,
					  const struct unwind_row *row)
{
	size_t set = set_of(pc);
	struct unwind_set *s = &cache->sets[set];
	unsigned k = cache->next[set]++ % UNWIND_CACHE_WAYS;
	s->pcs[k] = 0; /* empty until complete */
	cache->rows[set * UNWIND_CACHE_WAYS + k] = *row;
	s->quick[k] = quick_of(row);
	s->pcs[k] = pc;
	return &s->quick[k];
}

/* Put `row`, which holds for [lo, hi), in the spans of `pc`'s page (the next way in turn); its
 * quick form there. */
static const struct unwind_quick *span_put(struct unwind_cache *cache, uint64_t pc, uint64_t lo,
					   uint64_t hi, const struct unwind_row *row)
{
	size_t set = span_set_of(pc);
	struct unwind_span_set *s = &cache->spans[set];
	unsigned k = cache->span_next[set]++ % UNWIND_CACHE_WAYS;
	s->way[k].hi = 0; /* empty until complete */
	cache->span_rows[set * UNWIND_CACHE_WAYS + k] = *row;
	s->quick[k] = quick_of(row);
	s->way[k].lo = lo;
	s->way[k].hi = hi;
	return &s->quick[k];
}

/* A row found in the cache and its quick form; row NULL: not there. */
struct found {
	const struct unwind_row *row;
	const struct unwind_quick *quick;
};

/* The cache's row for `look`. A return address (`first` 0) is looked for in its set, then in
 * the spans, whose row then goes into the set too; the interrupted pc (`first`) in the spans
 * only: where a thread runs differs from sample to sample (a hot loop's many instructions
 * share one row), and each such pc would take a row of the sets from the return addresses
 * that come back every walk. */
static struct found cache_find(struct unwind_cache *cache, uint64_t look, int first)
{
	if (!first) {
		size_t set = set_of(look);
		const struct unwind_set *s = &cache->sets[set];
		for (unsigned k = 0; k < UNWIND_CACHE_WAYS; k++)
			if (s->pcs[k] == look)
				return (struct found){ &cache->rows[set * UNWIND_CACHE_WAYS + k],
						       &s->quick[k] };
	}
	size_t set = span_set_of(look);
	const struct unwind_span_set *s = &cache->spans[set];
	for (unsigned k = 0; k < UNWIND_CACHE_WAYS; k++) {
		if (look < s->way[k].lo || look >= s->way[k].hi)
			continue;
		/* a row seen at another pc of the same span */
		const struct unwind_row *row = &cache->span_rows[set * UNWIND_CACHE_WAYS + k];
		return (struct found){ row, first ? &s->quick[k] : set_put(cache, look, row) };
	}
	return (struct found){ NULL, NULL };
}

uint32_t unwind_walk(const struct unwind_regs *regs, const struct unwind_window *win,
		     struct unwind_cache *cache, uint64_t *pcs, uint32_t max, uint32_t *flags)
{
	*flags = 0;
	if (max == 0)
		return 0;
	const struct utable *t = atomic_load_explicit(&current, memory_order_acquire);
	uint64_t gen = t ? t->gen : 0;
	if (cache && atomic_load_explicit(&cache->modules_gen, memory_order_relaxed) != gen) {
		/* rows of another table may point into unloaded modules: start afresh */
		memset(cache->sets, 0, sizeof(cache->sets));
		memset(cache->spans, 0, sizeof(cache->spans));
		atomic_store_explicit(&cache->modules_gen, gen, memory_order_relaxed);
	}
	uint64_t hits = 0, misses = 0, bad = 0, fp = 0;
	struct frame f;
	f.reg[DW_RIP] = regs->rip;
	f.reg[DW_RSP] = regs->rsp;
	f.reg[DW_RBP] = regs->rbp;
	f.known = 1u << DW_RIP | 1u << DW_RSP | 1u << DW_RBP;
	uint32_t n = 0;
	int exact = 1; /* pcs[0] (and a signal frame's caller) is where the thread was, not a
			* return address: look it up as is, not minus one */
	pcs[n++] = regs->rip;
	for (;;) {
		uint64_t pc = f.reg[DW_RIP], look = exact ? pc : pc - 1;
		/* The cache first (it holds only rows of known modules, cache_find says where).
		 * Only a miss pays for the module search and the CFI program. */
		int first = n == 1;
		struct unwind_row local;
		struct found got = cache ? cache_find(cache, look, first) : (struct found){ 0 };
		const struct unwind_row *row = got.row;
		const struct unwind_quick *quick = got.quick;
		if (row) {
			hits++;
		} else {
			const struct umodule *m = t ? module_of(t, look) : NULL;
			struct umodule late;
			if (!m) {
				*flags |= UNWIND_NO_MODULE;
				if (module_from_link_map(look, &late) == 0)
					m = &late;
			}
			uint64_t lo, hi;
			resolve(m, look, &local, &lo, &hi);
			row = &local;
			if (m)
				misses++;
			if (m && cache)
				quick = first ? span_put(cache, look, lo, hi, row)
					      : set_put(cache, look, row);
		}
		uint64_t nrip, nrsp, nrbp;
		if (quick && quick->form == QUICK_END)
			break; /* the outermost frame: complete */
		if (quick && (quick->form == QUICK_RSP ||
			      (quick->form == QUICK_RBP && (f.known & (1u << DW_RBP))))) {
			/* the common frame from its set's line alone: no row, no rule dispatch */
			uint64_t cfa = f.reg[quick->form == QUICK_RSP ? DW_RSP : DW_RBP] +
				       (uint64_t)(int64_t)quick->cfa_off;
			if (win_read(win, cfa + (uint64_t)(int64_t)quick->rip_off, &nrip) != 0) {
				*flags |= UNWIND_TRUNCATED;
				break;
			}
			nrsp = cfa;
			unsigned known = 1u << DW_RIP | 1u << DW_RSP;
			nrbp = 0;
			if (quick->bits & QUICK_RBP_SAVED) {
				if (win_read(win, cfa + (uint64_t)(int64_t)quick->rbp_off, &nrbp) ==
				    0)
					known |= 1u << DW_RBP;
			} else if (f.known & (1u << DW_RBP)) {
				nrbp = f.reg[DW_RBP];
				known |= 1u << DW_RBP;
			}
			f.known = known;
			exact = (quick->bits & QUICK_EXACT) != 0;
		} else if (row->what & UROW_BAD) {
			bad++;
			*flags |= UNWIND_BAD_CFI | UNWIND_TRUNCATED;
			break;
		} else if (row->what & UROW_NO_FDE) {
			/* no CFI: one frame-pointer step if rbp looks like a frame above rsp */
			uint64_t bp = f.reg[DW_RBP];
			if (!(f.known & (1u << DW_RBP)) || bp < f.reg[DW_RSP] || (bp & 7) ||
			    win_read(win, bp, &nrbp) != 0 || win_read(win, bp + 8, &nrip) != 0) {
				*flags |= UNWIND_TRUNCATED;
				break;
			}
			nrsp = bp + 16;
			fp++;
			*flags |= UNWIND_FP_STEP;
			f.known = 1u << DW_RIP | 1u << DW_RSP | 1u << DW_RBP;
			exact = 0;
		} else {
			if (row->rip.kind == R_UNDEF)
				break; /* the outermost frame: complete */
			uint64_t cfa;
			if (row->cfa.kind == C_REG) {
				if (row->cfa.reg > DW_RIP || !(f.known & (1u << row->cfa.reg))) {
					bad++;
					*flags |= UNWIND_BAD_CFI | UNWIND_TRUNCATED;
					break;
				}
				cfa = f.reg[row->cfa.reg] + (uint64_t)(int64_t)row->cfa.off;
			} else if (eval_expr(row->cfa.expr, row->cfa.len, &f, win, 0, 0, &cfa) !=
				   0) {
				*flags |= UNWIND_TRUNCATED;
				break;
			}
			if (row->rip.kind == R_UNSET ||
			    apply(&row->rip, DW_RIP, &f, win, cfa, &nrip)) {
				*flags |= UNWIND_TRUNCATED;
				break;
			}
			if (row->rsp.kind == R_UNSET)
				nrsp = cfa;
			else if (apply(&row->rsp, DW_RSP, &f, win, cfa, &nrsp) != 0) {
				*flags |= UNWIND_TRUNCATED;
				break;
			}
			unsigned known = 1u << DW_RIP | 1u << DW_RSP;
			if (apply(&row->rbp, DW_RBP, &f, win, cfa, &nrbp) == 0)
				known |= 1u << DW_RBP;
			f.known = known;
			exact = (row->what & UROW_SIGNAL) != 0;
		}
		/* the stack grows down: a caller's frame is above (a signal frame may differ) */
		if (nrsp <= f.reg[DW_RSP] && !exact) {
			*flags |= UNWIND_TRUNCATED;
			break;
		}
		if (nrip == 0 || n == max) {
			*flags |= UNWIND_TRUNCATED; /* a zero return address: no outermost frame */
			break;
		}
		f.reg[DW_RIP] = nrip;
		f.reg[DW_RSP] = nrsp;
		f.reg[DW_RBP] = nrbp;
		pcs[n++] = nrip;
	}
	if (cache) {
		/* one writer: a load and a store, no locked instruction */
		atomic_store_explicit(&cache->hits,
				      atomic_load_explicit(&cache->hits, memory_order_relaxed) +
					      hits,
				      memory_order_relaxed);
		atomic_store_explicit(&cache->misses,
				      atomic_load_explicit(&cache->misses, memory_order_relaxed) +
					      misses,
				      memory_order_relaxed);
	}
	atomic_fetch_add_explicit(&stat_walks, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&stat_frames, n, memory_order_relaxed);
	if (bad)
		atomic_fetch_add_explicit(&stat_bad, bad, memory_order_relaxed);
	if (fp)
		atomic_fetch_add_explicit(&stat_fp, fp, memory_order_relaxed);
	if (*flags & UNWIND_TRUNCATED)
		atomic_fetch_add_explicit(&stat_trunc, 1, memory_order_relaxed);
	return n;
}
