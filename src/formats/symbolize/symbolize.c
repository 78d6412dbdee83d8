/*
 * symbolize.c: native frames to function, file:line and inlined calls with elfutils' libdwfl
 * (symbolize.h). One Dwfl per binary, reported at bias 0 with dwfl_report_elf: a file offset
 * becomes an ELF address through the PT_LOAD program header that maps it, so the recorded
 * mapping's load address never matters (the trace may be read on another machine). The
 * inline chain is eu-addr2line's: the DWARF scopes of the address (dwarf_getscopes), then the
 * chain of the innermost one (dwarf_getscopes_die); each inlined_subroutine gives its
 * caller's name and its call_file:call_line.
 *
 * Invariants: a result, good or not, is computed once per (binary, offset) and kept as model
 * string ids, so a frame repeated across files (one per process) costs one hash lookup; a
 * name is never taken from a binary whose build-id differs from the recorded one.
 */
#include "formats/symbolize/symbolize.h"

#include <stdlib.h>
#include <string.h>

#include "util/demangle.h"
#include "util/grow.h"
#include "util/hashmap.h"

#if OPSCOPE_HAVE_LIBDW

#include <stdio.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <unistd.h>

/* One binary: its Dwfl (NULL when it could not be used: `why`) and where its file offsets
 * load. */
struct sym_binary {
	Dwfl *dwfl;
	Dwfl_Module *mod;
	GElf_Addr bias;
	enum symbolize_why why;
	uint32_t nloads;
	struct {
		uint64_t offset, filesz, vaddr;
	} loads[16];
	/* Function symbols by address, made on the first lookup: dwfl_module_addrinfo scans
	 * every symbol per call, which was 63% of the time on libtorch (bench/RESULTS.md). */
	struct sym_entry *syms;
	uint64_t nsyms;
	bool syms_made;
};

struct sym_entry {
	GElf_Addr addr; /* bias included */
	GElf_Xword size;
	const char *name; /* libelf's, valid while the Dwfl lives */
};

/* A cached result: locs[first .. first + n) of the symbolizer, or why there are none. */
struct sym_result {
	uint32_t first;
	uint8_t n;
	uint8_t why;
	bool mangled;
};

struct symbolizer {
	struct sym_binary *bins;
	uint64_t nbins, bins_cap;
	struct hmap bin_of; /* path << 32 | build_id -> index in bins */
	struct sym_result *results;
	uint64_t nresults, results_cap;
	struct hmap result_of; /* bin << 44 | offset -> index in results */
	struct symbolize_loc *locs;
	uint64_t nlocs, locs_cap;
};

static void symbolizer_free(void *p)
{
	struct symbolizer *s = p;
	for (uint64_t i = 0; i < s->nbins; i++)
		if (s->bins[i].dwfl)
			dwfl_end(s->bins[i].dwfl);
	for (uint64_t i = 0; i < s->nbins; i++)
		free(s->bins[i].syms);
	free(s->bins);
	hmap_free(&s->bin_of);
	free(s->results);
	hmap_free(&s->result_of);
	free(s->locs);
	free(s);
}

const char *symbolize_unavailable(void)
{
	return NULL;
}

static char *debuginfo_path;
static const Dwfl_Callbacks sym_callbacks = {
	.find_elf = NULL,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

/* The build-id of mod in lowercase hex, or "" (size of hex: at least 129). */
static void module_build_id(Dwfl_Module *mod, char *hex, size_t size)
{
	const unsigned char *bits;
	GElf_Addr vaddr;
	int n = dwfl_module_build_id(mod, &bits, &vaddr);
	size_t o = 0;
	hex[0] = '\0';
	for (int i = 0; i < n && o + 3 <= size; i++)
		o += (size_t)snprintf(hex + o, size - o, "%02x", bits[i]);
}

/* Report `file` in a new Dwfl; true with b->dwfl/mod set when its build-id is `build_id`
 * (or none was recorded), else *why: NO_BINARY (no such file) or BUILD_ID_MISMATCH. */
static bool try_file(struct sym_binary *b, const char *file, const char *build_id,
		     enum symbolize_why *why)
{
	if (access(file, R_OK) != 0) {
		*why = SYMBOLIZE_NO_BINARY;
		return false;
	}
	Dwfl *d = dwfl_begin(&sym_callbacks);
	if (!d)
		return false;
	dwfl_report_begin(d);
	Dwfl_Module *mod = dwfl_report_elf(d, file, file, -1, 0, false);
	dwfl_report_end(d, NULL, NULL);
	char hex[130];
	if (mod)
		module_build_id(mod, hex, sizeof(hex));
	if (!mod || (*build_id && strcmp(hex, build_id) != 0)) {
		*why = mod ? SYMBOLIZE_BUILD_ID_MISMATCH : SYMBOLIZE_NO_BINARY;
		dwfl_end(d);
		return false;
	}
	b->dwfl = d;
	b->mod = mod;
	return true;
}

/* Open binary `path` with `build_id` (hex, "" if not recorded), or its debug file. */
static void open_binary(struct sym_binary *b, const char *path, const char *build_id)
{
	memset(b, 0, sizeof(*b));
	if (!*path || *path == '[') {
		b->why = SYMBOLIZE_NO_PATH;
		return;
	}
	enum symbolize_why why = SYMBOLIZE_NO_BINARY, why2 = SYMBOLIZE_NO_BINARY;
	if (!try_file(b, path, build_id, &why)) {
		char debug[320];
		size_t n = strlen(build_id);
		if (n < 3 || n > 256 ||
		    snprintf(debug, sizeof(debug), "/usr/lib/debug/.build-id/%.2s/%s.debug",
			     build_id, build_id + 2) >= (int)sizeof(debug) ||
		    !try_file(b, debug, build_id, &why2)) {
			b->why = why;
			return;
		}
	}
	Elf *elf = dwfl_module_getelf(b->mod, &b->bias);
	size_t nph = 0;
	if (elf && elf_getphdrnum(elf, &nph) == 0)
		for (size_t i = 0; i < nph && b->nloads < 16; i++) {
			GElf_Phdr ph;
			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD) {
				b->loads[b->nloads].offset = ph.p_offset;
				/* a debug file's segments are NOBITS: its memsz still covers them */
				b->loads[b->nloads].filesz = ph.p_memsz;
				b->loads[b->nloads].vaddr = ph.p_vaddr;
				b->nloads++;
			}
		}
	b->why = SYMBOLIZE_OK;
}

/* The name of a function's DIE: its linkage name demangled, else DW_AT_name; NULL if none.
 * A demangled name is malloc'd into *owned. */
static const char *die_name(Dwarf_Die *die, char **owned, bool *mangled)
{
	Dwarf_Attribute a;
	const char *link = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &a));
	if (!link)
		link = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a));
	char *d = link ? demangle_cxx(link) : NULL;
	if (d)
		return *owned = d;
	const char *name = dwarf_diename(die);
	if (!name && link)
		*mangled = true;
	return name ? name : link;
}

/* A symbol-table name, demangled when it is a C++ name. */
static const char *sym_name(const char *name, char **owned, bool *mangled)
{
	if (name && strncmp(name, "_Z", 2) == 0) {
		char *d = demangle_cxx(name);
		if (d)
			return *owned = d;
		*mangled = true;
	}
	return name;
}

static int sym_cmp(const void *a, const void *b)
{
	const struct sym_entry *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->size > y->size ? -1 : x->size < y->size; /* sized first */
}

/* The binary's defined function symbols, sorted by address (empty when out of memory: the
 * lookups then find none). */
static void make_syms(struct sym_binary *b)
{
	b->syms_made = true;
	int n = dwfl_module_getsymtab(b->mod);
	if (n <= 0 || !(b->syms = malloc((size_t)n * sizeof(*b->syms))))
		return;
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		const char *name =
			dwfl_module_getsym_info(b->mod, i, &sym, &addr, &shndx, NULL, NULL);
		int type = GELF_ST_TYPE(sym.st_info);
		if (name && *name && shndx != SHN_UNDEF &&
		    (type == STT_FUNC || type == STT_GNU_IFUNC))
			b->syms[b->nsyms++] = (struct sym_entry){ addr, sym.st_size, name };
	}
	qsort(b->syms, b->nsyms, sizeof(*b->syms), sym_cmp);
}

/* The function symbol that holds addr: the nearest one at or below it whose size covers it
 * (or, for a symbol of size 0, the nearest one); NULL if none. */
static const char *find_sym(struct sym_binary *b, GElf_Addr addr)
{
	if (!b->syms_made)
		make_syms(b);
	uint64_t lo = 0, hi = b->nsyms; /* first entry above addr */
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (b->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	GElf_Addr at = b->syms[lo - 1].addr;
	for (uint64_t i = lo; i-- > 0 && b->syms[i].addr == at;)
		if (b->syms[i].size == 0 || addr - at < b->syms[i].size)
			return b->syms[i].name;
	return NULL;
}

static uint32_t intern(struct model *m, const char *s)
{
	return s ? model_intern(m, s, strlen(s)) : 0;
}

static bool is_function(Dwarf_Die *d)
{
	int tag = dwarf_tag(d);
	return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
	       tag == DW_TAG_entry_point;
}

/* Locations of ELF address addr (bias included) of b, innermost first; their count. */
static int resolve(struct model *m, struct sym_binary *b, Dwarf_Addr addr,
		   struct symbolize_loc *out, int max, bool *mangled)
{
	int n = 0;
	char *owned = NULL;
	Dwfl_Line *line = dwfl_module_getsrc(b->mod, addr);
	int lineno = 0;
	const char *file = line ? dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL) : NULL;
	Dwarf_Addr dbias = 0;
	Dwarf_Die *cu = dwfl_module_addrdie(b->mod, addr, &dbias);
	Dwarf_Die *scopes = NULL, *chain = NULL;
	int nchain = 0;
	if (cu) {
		int ns = dwarf_getscopes(cu, addr - dbias, &scopes);
		if (ns > 0) {
			Dwarf_Die inner = scopes[0];
			nchain = dwarf_getscopes_die(&inner, &chain);
		}
	}
	Dwarf_Files *files = NULL;
	if (nchain > 0 && dwarf_getsrcfiles(cu, &files, NULL) != 0)
		files = NULL;
	/* Walk out: each function scope is a location; an inlined one's call site is where its
	 * caller (the next function scope out) is. */
	const char *cur_file = file;
	int cur_line = lineno;
	for (int i = 0; i < nchain && n < max; i++) {
		if (!is_function(&chain[i]))
			continue;
		owned = NULL;
		const char *name = die_name(&chain[i], &owned, mangled);
		out[n++] = (struct symbolize_loc){ intern(m, name), intern(m, cur_file), cur_line };
		free(owned);
		if (dwarf_tag(&chain[i]) != DW_TAG_inlined_subroutine)
			break;
		Dwarf_Attribute a;
		Dwarf_Word v;
		cur_file = NULL;
		cur_line = 0;
		if (files && dwarf_formudata(dwarf_attr(&chain[i], DW_AT_call_file, &a), &v) == 0)
			cur_file = dwarf_filesrc(files, v, NULL, NULL);
		if (dwarf_formudata(dwarf_attr(&chain[i], DW_AT_call_line, &a), &v) == 0)
			cur_line = (int)v;
	}
	free(scopes);
	free(chain);
	if (n == 0 || !out[n - 1].name) {
		/* no DWARF function here: the symbol table names the outermost location */
		const char *sname = find_sym(b, addr);
		if (sname) {
			owned = NULL;
			sname = sym_name(sname, &owned, mangled);
			if (n == 0)
				out[n++] = (struct symbolize_loc){ intern(m, sname),
								   intern(m, file), lineno };
			else
				out[n - 1].name = intern(m, sname);
			free(owned);
		}
	}
	if (n > 0 && !out[n - 1].name)
		n = 0;
	return n;
}

static struct symbolizer *get(struct model *m)
{
	if (!m->symbolizer) {
		struct symbolizer *s = calloc(1, sizeof(*s));
		if (!s)
			return NULL;
		m->symbolizer = s;
		m->symbolizer_free = symbolizer_free;
	}
	return m->symbolizer;
}

int symbolize_address(struct model *m, uint32_t path, uint32_t build_id, uint64_t offset,
		      struct symbolize_loc *out, int max, enum symbolize_why *why, bool *mangled)
{
	struct symbolizer *s = get(m);
	*mangled = false;
	*why = SYMBOLIZE_NO_SYMBOL;
	if (!s) {
		m->oom = true;
		return 0;
	}
	uint64_t bkey = (uint64_t)path << 32 | build_id, bi;
	uint64_t *v = hmap_find(&s->bin_of, bkey);
	if (v) {
		bi = *v;
	} else {
		if (!grow_array((void **)&s->bins, sizeof(*s->bins), &s->bins_cap, s->nbins + 1) ||
		    !hmap_put(&s->bin_of, bkey, s->nbins)) {
			m->oom = true;
			return 0;
		}
		bi = s->nbins++;
		open_binary(&s->bins[bi], model_str(m, path), model_str(m, build_id));
	}
	struct sym_binary *b = &s->bins[bi];
	if (b->why != SYMBOLIZE_OK) {
		*why = b->why;
		return 0;
	}
	/* the cache: binaries fit in 2^44 bytes; a larger offset is looked up every time */
	uint64_t rkey = bi << 44 | offset;
	bool cacheable = offset < (1ull << 44) && bi < (1ull << 19);
	v = cacheable ? hmap_find(&s->result_of, rkey) : NULL;
	if (v) {
		const struct sym_result *r = &s->results[*v];
		int n = r->n < max ? r->n : max;
		if (n)
			memcpy(out, s->locs + r->first, (size_t)n * sizeof(*out));
		*why = (enum symbolize_why)r->why;
		*mangled = r->mangled;
		return n;
	}
	/* file offset -> ELF address through the segment that maps it */
	Dwarf_Addr addr = 0;
	bool mapped = false;
	for (uint32_t i = 0; i < b->nloads && !mapped; i++)
		if (offset >= b->loads[i].offset &&
		    offset - b->loads[i].offset < b->loads[i].filesz) {
			addr = offset - b->loads[i].offset + b->loads[i].vaddr + b->bias;
			mapped = true;
		}
	int n = mapped ? resolve(m, b, addr, out, max, mangled) : 0;
	if (n > 0)
		*why = SYMBOLIZE_OK;
	if (cacheable &&
	    grow_array((void **)&s->results, sizeof(*s->results), &s->results_cap,
		       s->nresults + 1) &&
	    grow_array((void **)&s->locs, sizeof(*s->locs), &s->locs_cap, s->nlocs + (uint64_t)n) &&
	    hmap_put(&s->result_of, rkey, s->nresults)) {
		if (n) /* locs is still NULL while every result so far had no location */
			memcpy(s->locs + s->nlocs, out, (size_t)n * sizeof(*out));
		s->results[s->nresults++] = (struct sym_result){ (uint32_t)s->nlocs, (uint8_t)n,
								 (uint8_t)*why, *mangled };
		s->nlocs += (uint64_t)n;
	}
	return n;
}

#else /* !OPSCOPE_HAVE_LIBDW */

const char *symbolize_unavailable(void)
{
	return "opscope was built without libdw (Debian: libdw-dev)";
}

int symbolize_address(struct model *m, uint32_t path, uint32_t build_id, uint64_t offset,
		      struct symbolize_loc *out, int max, enum symbolize_why *why, bool *mangled)
{
	(void)m, (void)path, (void)build_id, (void)offset, (void)out, (void)max;
	*mangled = false;
	*why = SYMBOLIZE_OFF;
	return 0;
}

#endif
