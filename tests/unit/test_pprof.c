/*
 * test_pprof.c: the pprof family (src/formats/pprof/): the protobuf wire reader and writer on
 * hand-made bytes from the encoding spec; the profile.proto importer on hand-made profiles
 * (inlined lines, thread labels, the default sample type, malformed input); the gperftools
 * legacy CPU importer on pprof's own test data against its reference parses (X.string), in
 * both word sizes and byte orders; and the exporters (pprof, folded) read back.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "opscope/opscope.h"

#include "formats/import.h"
#include "formats/pprof/pprof.h"
#include "formats/pprof/protowire.h"
#include "fuzz/model_check.h"
#include "harness.h"
#include "model/model.h"
#include "util/buf.h"

#define SHARED OPSCOPE_TEST_DATA_DIR "/../../shared/data/pprof/"

/* ---------------------------------------------------------------------------------------- */
/* The wire format. */

TEST(varints_round_trip)
{
	static const uint64_t vals[] = { 0,
					 1,
					 127,
					 128,
					 300,
					 16383,
					 16384,
					 UINT32_MAX,
					 1ull << 63,
					 UINT64_MAX,
					 (uint64_t)-1000 };
	struct buf b;
	buf_init(&b);
	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++)
		pw_put_varint(&b, (uint32_t)i + 1, vals[i]);
	REQUIRE(!b.oom);
	/* the spec's example: 150 in field 1 is 08 96 01 */
	struct buf e;
	buf_init(&e);
	pw_put_varint(&e, 1, 150);
	CHECK_EQ_U(e.len, 3);
	CHECK(e.len == 3 && e.data[0] == 0x08 && e.data[1] == 0x96 && e.data[2] == 0x01);
	buf_free(&e);
	struct pw_reader r;
	struct pw_field f;
	pw_init(&r, b.data, b.len, 0);
	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		REQUIRE(pw_next(&r, &f) == 1);
		CHECK_EQ_U(f.number, i + 1);
		CHECK_EQ_U(f.wire, PW_VARINT);
		CHECK_EQ_U(f.value, vals[i]);
	}
	CHECK_EQ_I(pw_next(&r, &f), 0);
	buf_free(&b);
}

TEST(nested_and_packed)
{
	struct buf b;
	buf_init(&b);
	size_t outer = pw_begin(&b, 2);
	uint64_t many[200];
	for (int i = 0; i < 200; i++)
		many[i] = (uint64_t)i * 1000; /* 200 values, over 127 bytes: a 2-byte length */
	pw_put_packed(&b, 1, many, 200);
	pw_put_varint(&b, 1, 7); /* the same field unpacked too: readers take both */
	pw_put_bytes(&b, 3, "abc", 3);
	pw_end(&b, outer);
	REQUIRE(!b.oom);
	struct pw_reader r, s;
	struct pw_field f, g;
	pw_init(&r, b.data, b.len, 100);
	REQUIRE(pw_next(&r, &f) == 1);
	CHECK_EQ_U(f.number, 2);
	CHECK_EQ_U(f.wire, PW_LEN);
	CHECK_EQ_U(f.len, b.len - 3); /* tag and a 2-byte length */
	CHECK_EQ_U(f.data_offset, 103);
	pw_sub(&s, &f);
	uint64_t n = 0, sum = 0, v;
	int k;
	while ((k = pw_next(&s, &g)) == 1) {
		if (g.number == 1) {
			size_t pos = 0;
			while (pw_scalars_next(&s, &g, &pos, &v) == 1)
				n++, sum += v;
		} else {
			CHECK_EQ_U(g.number, 3);
			CHECK(g.len == 3 && memcmp(g.data, "abc", 3) == 0);
		}
	}
	CHECK_EQ_I(k, 0);
	CHECK_EQ_U(n, 201);
	CHECK_EQ_U(sum, 199u * 200 / 2 * 1000 + 7);
	CHECK_EQ_I(pw_next(&r, &f), 0);
	buf_free(&b);
}

/* The error of reading bytes b[0..n) to the end ("" if none), and its offset. */
static const char *read_error(const uint8_t *b, size_t n, size_t *off)
{
	struct pw_reader r;
	struct pw_field f;
	pw_init(&r, b, n, 0);
	int k;
	while ((k = pw_next(&r, &f)) == 1) {
		if (f.wire == PW_LEN && f.number == 1) {
			size_t pos = 0;
			uint64_t v;
			while ((k = pw_scalars_next(&r, &f, &pos, &v)) == 1)
				;
			if (k < 0)
				break;
		}
	}
	*off = r.err_off;
	return k < 0 ? r.err : "";
}

TEST(malformed_wire)
{
	size_t off;
	static const uint8_t trunc_varint[] = { 0x08, 0x96 };
	CHECK_STR(read_error(trunc_varint, sizeof(trunc_varint), &off), "truncated varint");
	CHECK_EQ_U(off, 1);
	static const uint8_t long_varint[] = { 0x08, 0xff, 0xff, 0xff, 0xff, 0xff,
					       0xff, 0xff, 0xff, 0xff, 0xff, 0x01 };
	CHECK_STR(read_error(long_varint, sizeof(long_varint), &off), "varint longer than 64 bits");
	static const uint8_t group[] = { 0x08, 0x01, 0x0b };
	CHECK_STR(read_error(group, sizeof(group), &off),
		  "group wire type (not used by profile.proto)");
	CHECK_EQ_U(off, 2);
	static const uint8_t bad_wire[] = { 0x0e };
	CHECK_STR(read_error(bad_wire, sizeof(bad_wire), &off), "invalid wire type");
	static const uint8_t field0[] = { 0x00, 0x01 };
	CHECK_STR(read_error(field0, sizeof(field0), &off), "invalid field number");
	/* a length of 2^62: must not wrap or read anything */
	static const uint8_t huge[] = { 0x12, 0x80, 0x80, 0x80, 0x80, 0x80,
					0x80, 0x80, 0x80, 0x40, 0x00 };
	CHECK_STR(read_error(huge, sizeof(huge), &off), "length runs past the end of the message");
	CHECK_EQ_U(off, 1);
	static const uint8_t fixed[] = { 0x09, 1, 2, 3 };
	CHECK_STR(read_error(fixed, sizeof(fixed), &off), "truncated fixed-width field");
	static const uint8_t bad_packed[] = { 0x0a, 0x02, 0x01, 0x80 };
	CHECK_STR(read_error(bad_packed, sizeof(bad_packed), &off), "truncated varint");
	CHECK_EQ_U(off, 3);
}

/* ---------------------------------------------------------------------------------------- */
/* profile.proto, made by hand. */

/* A profile: strings "", "samples", "count", "cpu", "nanoseconds", "main", "inl", "leaf",
 * "a.c", "thread", "worker", "/bin/x"; two sample types, default "samples"; one mapping; three
 * functions; location 1 (leaf, one line), location 2 (inl inlined into main: two lines);
 * samples: [1, 2] on thread "worker" values (1, 10); [1] with no label (2, 20); [2] (3, 30);
 * an empty stack (4, 40). */
static void make_profile(struct buf *b, bool packed)
{
	static const char *const strs[] = { "",	      "samples", "count", "cpu", "nanoseconds",
					    "main",   "inl",	 "leaf",  "a.c", "thread",
					    "worker", "/bin/x" };
	size_t at;
	for (int t = 0; t < 2; t++) {
		at = pw_begin(b, 1);
		pw_put_varint(b, 1, t ? 3 : 1);
		pw_put_varint(b, 2, t ? 4 : 2);
		pw_end(b, at);
	}
	/* samples before the tables they use: readers must not care */
	struct {
		uint64_t locs[2];
		size_t nlocs;
		int64_t v[2];
		bool label;
	} samples[] = { { { 1, 2 }, 2, { 1, 10 }, true },
			{ { 1 }, 1, { 2, 20 }, false },
			{ { 2 }, 1, { 3, 30 }, false },
			{ { 0 }, 0, { 4, 40 }, false } };
	for (size_t i = 0; i < 4; i++) {
		at = pw_begin(b, 2);
		if (packed) {
			pw_put_packed(b, 1, samples[i].locs, samples[i].nlocs);
			uint64_t v[2] = { (uint64_t)samples[i].v[0], (uint64_t)samples[i].v[1] };
			pw_put_packed(b, 2, v, 2);
		} else {
			for (size_t j = 0; j < samples[i].nlocs; j++)
				pw_put_varint(b, 1, samples[i].locs[j]);
			pw_put_varint(b, 2, (uint64_t)samples[i].v[0]);
			pw_put_varint(b, 2, (uint64_t)samples[i].v[1]);
		}
		if (samples[i].label) {
			size_t l = pw_begin(b, 3);
			pw_put_varint(b, 1, 9);
			pw_put_varint(b, 2, 10);
			pw_end(b, l);
		}
		pw_end(b, at);
	}
	at = pw_begin(b, 3);
	pw_put_varint(b, 1, 1);
	pw_put_varint(b, 2, 0x1000);
	pw_put_varint(b, 3, 0x9000);
	pw_put_varint(b, 5, 11);
	pw_end(b, at);
	at = pw_begin(b, 4); /* location 1: leaf at line 7 */
	pw_put_varint(b, 1, 1);
	pw_put_varint(b, 2, 1);
	pw_put_varint(b, 3, 0x1234);
	size_t ln = pw_begin(b, 4);
	pw_put_varint(b, 1, 3);
	pw_put_varint(b, 2, 7);
	pw_end(b, ln);
	pw_end(b, at);
	at = pw_begin(b, 4); /* location 2: inl (line 3) inlined into main (line 20) */
	pw_put_varint(b, 1, 2);
	pw_put_varint(b, 2, 1);
	pw_put_varint(b, 3, 0x2000);
	ln = pw_begin(b, 4);
	pw_put_varint(b, 1, 2);
	pw_put_varint(b, 2, 3);
	pw_end(b, ln);
	ln = pw_begin(b, 4);
	pw_put_varint(b, 1, 1);
	pw_put_varint(b, 2, 20);
	pw_end(b, ln);
	pw_end(b, at);
	for (uint64_t fn = 1; fn <= 3; fn++) {
		at = pw_begin(b, 5);
		pw_put_varint(b, 1, fn);
		pw_put_varint(b, 2, 4 + fn); /* main, inl, leaf */
		pw_put_varint(b, 4, 8);
		pw_end(b, at);
	}
	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
		pw_put_bytes(b, 6, strs[i], strlen(strs[i]));
	pw_put_varint(b, 9, 1700000000000000000ull);
	pw_put_varint(b, 10, 2002012950);
	at = pw_begin(b, 11);
	pw_put_varint(b, 1, 3);
	pw_put_varint(b, 2, 4);
	pw_end(b, at);
	pw_put_varint(b, 12, 10000000);
	pw_put_varint(b, 14, 1); /* default: "samples" */
}

/* The frames of a sample's stack, leaf first, as "name@line" (or "0xADDR") joined by ' ', with
 * a '*' on inlined frames. */
static void stack_text(const struct model *m, uint32_t s, char *out, size_t size)
{
	size_t n = 0;
	out[0] = '\0';
	for (; s != MODEL_NO_STACK && n < size; s = m->stacks[s].parent) {
		const struct model_frame *f = &m->frames[m->stacks[s].frame];
		if (f->name)
			n += (size_t)snprintf(out + n, size - n, "%s%s@%d%s", n ? " " : "",
					      model_str(m, f->name), f->line,
					      f->flags & MODEL_FRAMEF_INLINED ? "*" : "");
		else
			n += (size_t)snprintf(out + n, size - n, "%s0x%llx", n ? " " : "",
					      (unsigned long long)f->address);
	}
}

static void check_hand_profile(const struct model *m)
{
	REQUIRE(m->nfiles == 1);
	const struct model_file *f = &m->files[0];
	CHECK_STR(model_str(m, f->format), "pprof");
	CHECK_EQ_U(f->nsample_types, 2);
	CHECK_EQ_U(f->weight_type, 0); /* default_sample_type "samples" */
	CHECK_STR(model_str(m, m->sample_types[f->first_sample_type + 1].type), "cpu");
	CHECK_STR(model_str(m, m->sample_types[f->first_sample_type + 1].unit), "nanoseconds");
	CHECK_STR(model_str(m, f->period_type), "cpu");
	CHECK_EQ_I(f->period, 10000000);
	CHECK_EQ_I(f->duration_ns, 2002012950);
	CHECK_EQ_U(f->create_realtime_ns, 1700000000000000000ull);
	REQUIRE(m->nmappings == 1);
	CHECK_EQ_U(m->mappings[0].start, 0x1000);
	CHECK_STR(model_str(m, m->mappings[0].path), "/bin/x");
	/* thread "worker" and the profile's own track */
	REQUIRE(m->ntracks == 2);
	const struct model_track *w = &m->tracks[0], *p = &m->tracks[1];
	CHECK_STR(model_str(m, w->name), "worker");
	REQUIRE(w->nsamples == 1 && p->nsamples == 3);
	char text[256];
	stack_text(m, w->samples.stack[0], text, sizeof(text));
	CHECK_STR(text, "leaf@7 inl@3* main@20");
	CHECK_EQ_I(w->samples.weight[0], 1);
	CHECK_EQ_I(model_sample_value(m, w, 0, 1), 10);
	stack_text(m, p->samples.stack[0], text, sizeof(text));
	CHECK_STR(text, "leaf@7");
	stack_text(m, p->samples.stack[1], text, sizeof(text));
	CHECK_STR(text, "inl@3* main@20");
	CHECK_EQ_U(p->samples.stack[2], MODEL_NO_STACK);
	CHECK_EQ_I(model_sample_value(m, p, 2, 1), 40);
	CHECK_STR(model_str(m, m->frames[m->stacks[p->samples.stack[0]].frame].module), "/bin/x");
	fuzz_model_check(m);
}

TEST(import_hand_made_profile)
{
	for (int packed = 0; packed < 2; packed++) {
		struct buf b;
		buf_init(&b);
		make_profile(&b, packed);
		REQUIRE(!b.oom);
		CHECK(pprof_sniff(b.data, b.len < 256 ? b.len : 256));
		struct model *m = model_new();
		char err[256] = "";
		CHECK_EQ_I(import_load_mem(m, "hand.pb", b.data, b.len, err, sizeof(err)), 0);
		CHECK_STR(err, "");
		check_hand_profile(m);
		model_free(m);
		buf_free(&b);
	}
}

/* gzip'd bytes of b (for the gzip paths). */
static void gzip_buf(const struct buf *in, struct buf *out)
{
	z_stream z;
	memset(&z, 0, sizeof(z));
	deflateInit2(&z, 9, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
	uint8_t *o = buf_reserve(out, deflateBound(&z, in->len));
	z.next_in = in->data;
	z.avail_in = (uInt)in->len;
	z.next_out = o;
	z.avail_out = (uInt)deflateBound(&z, in->len);
	deflate(&z, Z_FINISH);
	out->len += z.total_out;
	deflateEnd(&z);
}

TEST(import_gzip_and_sniff)
{
	struct buf b, g;
	buf_init(&b);
	buf_init(&g);
	make_profile(&b, true);
	gzip_buf(&b, &g);
	REQUIRE(!g.oom);
	CHECK(pprof_sniff(g.data, g.len < 256 ? g.len : 256));
	struct model *m = model_new();
	char err[256] = "";
	CHECK_EQ_I(import_load_mem(m, "hand.pb.gz", g.data, g.len, err, sizeof(err)), 0);
	check_hand_profile(m);
	model_free(m);
	/* truncated gzip: the file and the offset */
	m = model_new();
	CHECK_EQ_I(pprof_load_mem(m, "cut.pb.gz", g.data, g.len / 2, err, sizeof(err)),
		   OPSCOPE_ETRUNCATED);
	char want[128];
	snprintf(want, sizeof(want), "cut.pb.gz: offset %zu: gzip data is truncated", g.len / 2);
	CHECK_STR(err, want);
	model_free(m);
	/* JSON, plain or gzip'd, is not a profile */
	static const char json[] = "\n{\"traceEvents\": [{\"ph\":\"X\",\"name\":\"a\"}]}";
	CHECK(!pprof_sniff((const unsigned char *)json, sizeof(json) - 1));
	struct buf j, jg;
	buf_init(&j);
	buf_init(&jg);
	buf_append(&j, json, sizeof(json) - 1);
	gzip_buf(&j, &jg);
	CHECK(!pprof_sniff(jg.data, jg.len));
	CHECK(!legacy_sniff(jg.data, jg.len));
	buf_free(&j);
	buf_free(&jg);
	buf_free(&b);
	buf_free(&g);
}

/* The error of importing b[0..n) as a profile ("" if it loads). */
static const char *import_error(const void *b, size_t n, char *err, size_t size)
{
	struct model *m = model_new();
	err[0] = '\0';
	int rc = pprof_load_mem(m, "bad.pb", b, n, err, size);
	if (rc == 0)
		err[0] = '\0';
	else if (strchr(err, '\n'))
		snprintf(err, size, "(more than one line)");
	model_free(m);
	return err;
}

TEST(import_malformed_profiles)
{
	struct buf b;
	buf_init(&b);
	make_profile(&b, true);
	char err[256];
	/* every truncation is an error naming the file and an offset, or loads (a cut at a
	 * field boundary is a smaller valid profile) */
	size_t errors = 0;
	for (size_t n = 0; n < b.len; n++) {
		import_error(b.data, n, err, sizeof(err));
		if (err[0]) {
			errors++;
			CHECK(strncmp(err, "bad.pb: offset ", 15) == 0);
		}
	}
	CHECK(errors > b.len / 2);
	/* a sample field as a varint: wrong wire type */
	static const uint8_t wrong[] = { 0x10, 0x05 };
	CHECK_STR(import_error(wrong, sizeof(wrong), err, sizeof(err)),
		  "bad.pb: offset 0: Profile field 2: wire type varint, expected length-delimited");
	/* a huge length */
	static const uint8_t huge[] = { 0x32, 0xff, 0xff, 0xff, 0xff, 0x0f, 'a' };
	CHECK_STR(import_error(huge, sizeof(huge), err, sizeof(err)),
		  "bad.pb: offset 1: length runs past the end of the message");
	/* a string index past the table */
	static const uint8_t bad_str[] = { 0x32, 0x00, 0x0a, 0x02, 0x08, 0x05 };
	CHECK_STR(import_error(bad_str, sizeof(bad_str), err, sizeof(err)),
		  "bad.pb: offset 4: string index 5 out of range (1 strings)");
	/* a sample naming a location that does not exist */
	static const uint8_t no_loc[] = { 0x32, 0x00, 0x12, 0x02, 0x08, 0x09 };
	CHECK_STR(import_error(no_loc, sizeof(no_loc), err, sizeof(err)),
		  "bad.pb: offset 4: sample: no location with id 9");
	buf_free(&b);
}

/* ---------------------------------------------------------------------------------------- */
/* gperftools legacy CPU profiles against pprof's reference parses (X.string). */

/* The text of a file (malloc'd, NUL-terminated), or NULL. */
static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 1 << 16, n = 0;
	char *s = malloc(cap + 1);
	size_t k;
	while (s && (k = fread(s + n, 1, cap - n, f)) > 0) {
		n += k;
		if (n == cap) {
			char *t = realloc(s, 2 * cap + 1);
			if (!t) {
				free(s);
				s = NULL;
				break;
			}
			s = t;
			cap *= 2;
		}
	}
	fclose(f);
	if (s)
		s[n] = '\0';
	if (len)
		*len = n;
	return s;
}

/* Check model m (one file) against the reference parse: every sample's values and its
 * locations' addresses in order, and the mapping of each location. Returns the samples and
 * the sum of their counts and of their nanoseconds. */
static void check_against_string(const struct model *m, const char *ref, uint64_t *nsamples,
				 int64_t *count, int64_t *ns)
{
	*nsamples = 0;
	*count = *ns = 0;
	/* the Locations and Mappings sections: id -> address, mapping id; mapping id -> line */
	static uint64_t loc_addr[4096];
	static unsigned loc_map[4096];
	static char map_file[64][256];
	static uint64_t map_range[64][3];
	const char *locs = strstr(ref, "\nLocations\n"), *maps = strstr(ref, "\nMappings\n");
	REQUIRE(locs && maps);
	for (const char *l = strchr(locs + 1, '\n') + 1; l < maps; l = strchr(l, '\n') + 1) {
		unsigned id, mid;
		unsigned long long a;
		if (sscanf(l, " %u: 0x%llx M=%u", &id, &a, &mid) == 3 && id < 4096)
			loc_addr[id] = a, loc_map[id] = mid;
	}
	unsigned nmaps = 0;
	for (const char *l = maps + 10; *l; l = strchr(l, '\n') + 1) {
		unsigned id;
		unsigned long long s, e, o;
		int k = 0;
		if (sscanf(l, "%u: 0x%llx/0x%llx/0x%llx %n", &id, &s, &e, &o, &k) == 4 && k &&
		    id < 64) {
			size_t fl = strcspn(l + k, " \n");
			snprintf(map_file[id], sizeof(map_file[id]), "%.*s", (int)fl, l + k);
			map_range[id][0] = s, map_range[id][1] = e, map_range[id][2] = o;
			nmaps++;
		}
		if (!strchr(l, '\n'))
			break;
	}
	/* the mappings, in order */
	REQUIRE(m->nmappings == nmaps);
	for (unsigned i = 0; i < nmaps; i++) {
		CHECK_EQ_U(m->mappings[i].start, map_range[i + 1][0]);
		CHECK_EQ_U(m->mappings[i].limit, map_range[i + 1][1]);
		CHECK_EQ_U(m->mappings[i].offset, map_range[i + 1][2]);
		CHECK_STR(model_str(m, m->mappings[i].path), map_file[i + 1]);
	}
	/* the samples, in order */
	REQUIRE(m->ntracks == 1);
	const struct model_track *t = &m->tracks[0];
	const char *l = strstr(ref, "\nSamples:\n");
	REQUIRE(l);
	l = strchr(strchr(l + 1, '\n') + 1, '\n') + 1; /* past the sample types */
	uint64_t i = 0;
	for (; l < locs; l = strchr(l, '\n') + 1, i++) {
		long long c, v;
		int k = 0;
		char line[4096]; /* one line: sscanf must not read on into the next */
		snprintf(line, sizeof(line), "%.*s", (int)strcspn(l, "\n"), l);
		REQUIRE(sscanf(line, " %lld %lld:%n", &c, &v, &k) == 2 && k);
		REQUIRE(i < t->nsamples);
		CHECK_EQ_I(model_sample_value(m, t, i, 0), c);
		CHECK_EQ_I(model_sample_value(m, t, i, 1), v);
		*count += c;
		*ns += v;
		uint32_t s = t->samples.stack[i];
		const char *p = line + k;
		unsigned id;
		int adv;
		while (sscanf(p, "%u%n", &id, &adv) == 1 && id < 4096) {
			REQUIRE(s != MODEL_NO_STACK);
			const struct model_frame *fr = &m->frames[m->stacks[s].frame];
			CHECK_EQ_U(fr->address, loc_addr[id]);
			CHECK_STR(model_str(m, fr->module), map_file[loc_map[id]]);
			CHECK_EQ_U(fr->name, 0); /* unsymbolized */
			s = m->stacks[s].parent;
			p += adv;
		}
		CHECK_EQ_U(s, MODEL_NO_STACK);
	}
	CHECK_EQ_U(i, t->nsamples);
	*nsamples = i;
}

/* Load a legacy CPU profile of the shared data; NULL (skip) when it is not there. */
static struct model *load_legacy(const char *path, const void *data, size_t size)
{
	struct model *m = model_new();
	char err[512] = "";
	int rc = data ? import_load_mem(m, path, data, size, err, sizeof(err))
		      : import_load_path(m, path, err, sizeof(err));
	if (rc)
		printf("#   %s\n", err);
	CHECK_EQ_I(rc, 0);
	return m;
}

static void legacy_golden(const char *name, uint64_t want_samples, int64_t want_count,
			  int64_t want_ns)
{
	char path[512], spath[600];
	snprintf(path, sizeof(path), SHARED "profile/testdata/%s", name);
	snprintf(spath, sizeof(spath), "%s.string", path);
	size_t size;
	char *ref = slurp(spath, NULL);
	unsigned char *data = (unsigned char *)slurp(path, &size);
	if (!ref || !data) {
		free(ref);
		free(data);
		SKIP("shared data not present");
		return;
	}
	/* as written (64-bit little-endian), and rewritten in the three other word forms */
	for (int form = 0; form < 4; form++) {
		unsigned w = form < 2 ? 8 : 4;
		bool big = form % 2;
		size_t words = 0;
		/* the words end at the trailer [0, 1, 0]; the maps text follows as it is */
		for (size_t off = 5 * 8; off + 16 <= size;) {
			uint64_t c, n;
			memcpy(&c, data + off, 8);
			memcpy(&n, data + off + 8, 8);
			off += (2 + n) * 8;
			if (c == 0 && n == 1) {
				words = off / 8;
				break;
			}
		}
		REQUIRE(words > 0);
		size_t tail = size - words * 8, osize = words * w + tail;
		unsigned char *o = malloc(osize);
		REQUIRE(o);
		for (size_t i = 0; i < words; i++) {
			uint64_t v;
			memcpy(&v, data + i * 8, 8);
			for (unsigned j = 0; j < w; j++)
				o[i * w + (big ? w - 1 - j : j)] = (unsigned char)(v >> (8 * j));
		}
		memcpy(o + words * w, data + words * 8, tail);
		/* a 32-bit program's addresses fit 32 bits; these are 64-bit: skip 32-bit forms
		 * of profiles with larger addresses */
		bool fits = true;
		for (size_t i = 0; i < words && w == 4; i++) {
			uint64_t v;
			memcpy(&v, data + i * 8, 8);
			fits &= v <= UINT32_MAX;
		}
		if (fits) {
			struct model *m =
				form ? load_legacy(name, o, osize) : load_legacy(path, NULL, 0);
			uint64_t ns = 0;
			int64_t count, nanos;
			check_against_string(m, ref, &ns, &count, &nanos);
			printf("#   %s (%u-bit %s): %llu samples, %lld count, %lld ns\n", name,
			       w * 8, big ? "big-endian" : "little-endian", (unsigned long long)ns,
			       (long long)count, (long long)nanos);
			CHECK_EQ_U(ns, want_samples);
			CHECK_EQ_I(count, want_count);
			CHECK_EQ_I(nanos, want_ns);
			CHECK_EQ_I(m->files[0].period, 10000000);
			fuzz_model_check(m);
			model_free(m);
		}
		free(o);
	}
	free(ref);
	free(data);
}

TEST(legacy_cppbench_cpu)
{
	legacy_golden("cppbench.cpu", 52, 712, 7120000000);
}

TEST(legacy_go_crc32_cpu)
{
	legacy_golden("go.crc32.cpu", 69, 211, 2110000000);
}

TEST(legacy_gobench_cpu)
{
	legacy_golden("gobench.cpu", 206, 305, 3050000000);
}

/* The sums of value columns 0 and 1 over every sample of the model. */
static void totals(const struct model *m, uint64_t *n, int64_t *v0, int64_t *v1)
{
	*n = 0;
	*v0 = *v1 = 0;
	for (uint32_t t = 0; t < m->ntracks; t++)
		for (uint64_t i = 0; i < m->tracks[t].nsamples; i++) {
			(*n)++;
			*v0 += model_sample_value(m, &m->tracks[t], i, 0);
			*v1 += model_sample_value(m, &m->tracks[t], i, 1);
		}
}

/* profile.proto from pprof's report tests: the oracle of ../shared/data/README.md. */
TEST(proto_sample_cpu)
{
	const char *path = SHARED "internal/report/testdata/sample.cpu";
	FILE *f = fopen(path, "rb");
	if (!f) {
		SKIP("shared data not present");
		return;
	}
	fclose(f);
	struct model *m = load_legacy(path, NULL, 0);
	REQUIRE(m->nfiles == 1);
	uint64_t n;
	int64_t count, ns;
	totals(m, &n, &count, &ns);
	CHECK_EQ_U(n, 76);
	CHECK_EQ_I(count, 176);
	CHECK_EQ_I(ns, 1760000000);
	const struct model_file *mf = &m->files[0];
	CHECK_EQ_I(mf->duration_ns, 2002012950);
	CHECK_EQ_U(mf->nsample_types, 2);
	CHECK_STR(model_str(m, m->sample_types[mf->first_sample_type].type), "samples");
	CHECK_STR(model_str(m, m->sample_types[mf->first_sample_type + 1].unit), "nanoseconds");
	CHECK_EQ_U(mf->weight_type, 1); /* no default_sample_type: the last */
	fuzz_model_check(m);
	model_free(m);
}

/* The samples of a model as text: per track its name and tid, per sample its values and its
 * stack (frames with name, file, line, module, address, kind and flags). */
static char *samples_text(const struct model *m)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	for (uint32_t t = 0; t < m->ntracks; t++) {
		const struct model_track *tr = &m->tracks[t];
		const struct model_file *mf = &m->files[tr->file];
		fprintf(f, "track %s tid %llu\n", model_str(m, tr->name),
			(unsigned long long)tr->tid);
		for (uint64_t i = 0; i < tr->nsamples; i++) {
			for (uint32_t c = 0; c < (mf->nsample_types ? mf->nsample_types : 1); c++)
				fprintf(f, " %lld", (long long)model_sample_value(m, tr, i, c));
			for (uint32_t s = tr->samples.stack[i]; s != MODEL_NO_STACK;
			     s = m->stacks[s].parent) {
				const struct model_frame *fr = &m->frames[m->stacks[s].frame];
				fprintf(f, " [%s %s:%d %s 0x%llx %u %u]", model_str(m, fr->name),
					model_str(m, fr->file), fr->line, model_str(m, fr->module),
					(unsigned long long)fr->address, fr->kind, fr->flags);
			}
			fputc('\n', f);
		}
	}
	fclose(f);
	return text;
}

/* Export m as pprof and import that again. */
static struct model *round_trip(const struct model *m)
{
	char *bytes = NULL, err[256] = "";
	size_t len = 0;
	FILE *f = open_memstream(&bytes, &len);
	CHECK_EQ_I(pprof_export(m, f, err, sizeof(err)), 0);
	fclose(f);
	struct model *back = model_new();
	CHECK_EQ_I(import_load_mem(back, "back.pb.gz", bytes, len, err, sizeof(err)), 0);
	CHECK_STR(err, "");
	fuzz_model_check(back);
	free(bytes);
	return back;
}

static void check_round_trip(const struct model *m)
{
	struct model *back = round_trip(m);
	char *a = samples_text(m), *b = samples_text(back);
	CHECK(strlen(a) > 20);
	CHECK_STR(a, b);
	const struct model_file *x = &m->files[0], *y = &back->files[0];
	CHECK_EQ_I(x->period, y->period);
	CHECK_EQ_I(x->duration_ns, y->duration_ns);
	CHECK_EQ_U(x->create_realtime_ns, y->create_realtime_ns);
	CHECK_EQ_U(x->weight_type, y->weight_type);
	CHECK_STR(model_str(m, x->period_type), model_str(back, y->period_type));
	CHECK_EQ_U(m->nmappings, back->nmappings);
	for (uint32_t i = 0; i < m->nmappings && i < back->nmappings; i++) {
		CHECK_EQ_U(m->mappings[i].start, back->mappings[i].start);
		CHECK_EQ_U(m->mappings[i].limit, back->mappings[i].limit);
		CHECK_STR(model_str(m, m->mappings[i].path),
			  model_str(back, back->mappings[i].path));
	}
	free(a);
	free(b);
	model_free(back);
}

TEST(export_round_trip)
{
	struct buf b;
	buf_init(&b);
	make_profile(&b, true);
	struct model *m = model_new();
	char err[256];
	REQUIRE(import_load_mem(m, "hand.pb", b.data, b.len, err, sizeof(err)) == 0);
	check_round_trip(m);
	model_free(m);
	buf_free(&b);
	static const char *const shared[] = { "profile/testdata/cppbench.cpu",
					      "profile/testdata/go.crc32.cpu",
					      "internal/report/testdata/sample.cpu",
					      "internal/proftest/testdata/large.cpu" };
	for (size_t i = 0; i < sizeof(shared) / sizeof(shared[0]); i++) {
		char path[512];
		snprintf(path, sizeof(path), SHARED "%s", shared[i]);
		FILE *f = fopen(path, "rb");
		if (!f)
			continue;
		fclose(f);
		m = load_legacy(path, NULL, 0);
		printf("#   round trip %s\n", shared[i]);
		check_round_trip(m);
		model_free(m);
	}
}

/* Folded stacks: one line per stack, outermost first; names that would break a line made
 * safe. */
TEST(export_folded)
{
	struct model *m = model_new();
	REQUIRE(model_add_file(m, "hand", "test") == 0);
	uint32_t t = model_add_track(m, MODEL_TRACK_THREAD, 1, 1, 0);
	static const char evil[] = "a;b\nc\x01\xff";
	uint32_t f1 = model_add_frame(m, model_intern(m, "main", 4), 0, 0, 0, 0, 1);
	uint32_t f2 = model_add_frame(m, model_intern(m, evil, sizeof(evil) - 1), 0, 0, 0, 0, 1);
	uint32_t f3 = model_add_frame(m, 0, 0, 0, model_intern(m, "/lib/libx.so", 12), 0xabc, 1);
	uint32_t s1 = model_add_stack(m, MODEL_NO_STACK, f1);
	uint32_t s2 = model_add_stack(m, s1, f2);
	uint32_t s3 = model_add_stack(m, s2, f3);
	model_add_sample(m, t, 0, s2, 5);
	model_add_sample(m, t, 1, s3, 7);
	model_add_sample(m, t, 2, s2, 1);
	model_add_sample(m, t, 3, MODEL_NO_STACK, 100); /* no frames: no line */
	char *text = NULL, err[128];
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	CHECK_EQ_I(folded_export(m, f, err, sizeof(err)), 0);
	fclose(f);
	CHECK_STR(text, "main;a:b c \xef\xbf\xbd 6\n"
			"main;a:b c \xef\xbf\xbd;0xabc [libx.so] 7\n");
	free(text);
	model_free(m);
}

TEST_MAIN(varints_round_trip, nested_and_packed, malformed_wire, import_hand_made_profile,
	  import_gzip_and_sniff, import_malformed_profiles, legacy_cppbench_cpu,
	  legacy_go_crc32_cpu, legacy_gobench_cpu, proto_sample_cpu, export_round_trip,
	  export_folded)
