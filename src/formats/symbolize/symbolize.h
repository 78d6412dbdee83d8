/*
 * symbolize.h: names the native frames of stack samples after recording, from the binary's
 * path and build-id kept in the trace (docs/trace-format.md 3.1) and the address's offset in
 * that file, with elfutils' libdwfl: the function (demangled where libstdc++'s demangler can
 * be loaded), the source file and line where the binary or its debug file has DWARF, and one
 * location per inlined call, innermost first (as pprof's Location lines).
 *
 * A binary is used only when its build-id is the recorded one (or none was recorded); else
 * its debug file /usr/lib/debug/.build-id/xx/yyyy.debug is tried; else the frame stays
 * unsymbolized with the reason: never a name from another build. Results are cached in the
 * model (m->symbolizer) per (binary, offset) for the whole load, and each binary is opened
 * once. Single-threaded, like the loaders that call it. Without libdw (OPSCOPE_HAVE_LIBDW 0)
 * every lookup answers SYMBOLIZE_OFF and symbolize_unavailable() says why.
 */
#ifndef OPSCOPE_FORMATS_SYMBOLIZE_H
#define OPSCOPE_FORMATS_SYMBOLIZE_H

#include <stdint.h>

#include "model/model.h"

/* Most locations one address gives (the function and the calls inlined into it). */
#define SYMBOLIZE_MAX_DEPTH 32

enum symbolize_why {
	SYMBOLIZE_OK = 0,
	SYMBOLIZE_NO_PATH,	     /* anonymous memory, [vdso] and the like: no file */
	SYMBOLIZE_NO_BINARY,	     /* the file is missing, and no debug file by build-id */
	SYMBOLIZE_BUILD_ID_MISMATCH, /* the file is another build, and no debug file */
	SYMBOLIZE_NO_SYMBOL,	     /* no symbol or DWARF covers the address */
	SYMBOLIZE_OFF,		     /* no symbolizer in this build */
};

/* One location of an address: model string ids (0: not known) and a line (0: not known). */
struct symbolize_loc {
	uint32_t name, file;
	int32_t line;
};

/* Locations of the instruction at byte `offset` of the binary `path` whose build-id is
 * `build_id` (model string ids; build_id 0 when not recorded), innermost first, at most
 * `max`. Returns their count (at least 1), or 0 with *why saying why there is none. Sets
 * *mangled when the name could not be demangled. */
int symbolize_address(struct model *m, uint32_t path, uint32_t build_id, uint64_t offset,
		      struct symbolize_loc *out, int max, enum symbolize_why *why, bool *mangled);

/* NULL when this build can symbolize, else a static line saying why it cannot. */
const char *symbolize_unavailable(void);

#endif
