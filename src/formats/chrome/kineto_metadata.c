/*
 * kineto_metadata.c: the top-level members of a Kineto / Chrome trace besides traceEvents
 * (ktop_member, called by the parser for each): scalars as the main process's metadata,
 * distributedInfo (rank, world size, backend), deviceProperties (GPU names, SMs, memory) and
 * otherData (our own export's process table read back). Kept apart from the events' meaning
 * (kineto_meaning.c): these are a handful of objects, read once.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/chrome/kineto.h"

/* ---------------------------------------------------------------------------------------- */
/* Top-level metadata */

/* Metadata for process `pid` (-1: the main process of the file, applied when it is
 * known). */
static bool add_meta_pid(struct kimport *K, int64_t pid, const char *key, size_t keylen,
			 struct json_span value)
{
	uint64_t cap = K->meta_cap;
	if (!grow_array((void **)&K->meta, sizeof(*K->meta), &cap, (uint64_t)K->nmeta + 1))
		return false;
	K->meta_cap = (uint32_t)cap;
	struct kmeta *e = &K->meta[K->nmeta];
	e->key = malloc(keylen + 1);
	e->value = malloc(value.len + 1);
	if (!e->key || !e->value) {
		free(e->key);
		free(e->value);
		return false;
	}
	memcpy(e->key, key, keylen);
	memcpy(e->value, value.s, value.len);
	e->key_len = keylen;
	e->value_len = value.len;
	e->pid = pid;
	K->nmeta++;
	return true;
}

static bool add_meta(struct kimport *K, const char *key, size_t keylen, struct json_span value)
{
	return add_meta_pid(K, -1, key, keylen, value);
}

/* A parsed member of a small metadata object. */
struct kpair {
	struct json_span k, v; /* v: a string's text, else canonical JSON */
};

#define KPAIRS_MAX 256 /* members kept per metadata value; more are parsed and dropped */

/* Parse an object into pairs[*np..] (at most KPAIRS_MAX in all). Nothing is committed here:
 * a refill restarts the whole value. */
static int parse_pairs(struct json_cur *c, struct kpair *pairs, int *np)
{
	int rc = json_expect(c, '{', "expected an object");
	bool first = true;
	struct json_span k, v;
	while (rc == JSON_OK && (rc = json_member(c, &first, &k)) == JSON_OK) {
		if ((rc = json_ws(c)) != 0)
			return rc;
		rc = *c->p == '"' ? json_string(c, &v) : json_canon(c, &v);
		if (rc == JSON_OK && *np < KPAIRS_MAX)
			pairs[(*np)++] = (struct kpair){ k, v };
	}
	return rc == JSON_END ? JSON_OK : rc;
}

/* Store pairs as metadata "<prefix><key>". */
static int pairs_to_meta(struct kimport *K, struct json_cur *c, const char *prefix,
			 const struct kpair *pairs, int np)
{
	for (int i = 0; i < np; i++) {
		char key[256];
		int len = snprintf(key, sizeof(key), "%s%.*s", prefix, (int)pairs[i].k.len,
				   pairs[i].k.s);
		if (len >= (int)sizeof(key))
			len = (int)sizeof(key) - 1;
		if (!add_meta(K, key, (size_t)len, pairs[i].v)) {
			c->err = "out of memory";
			c->errpos = c->p;
			return JSON_ERR;
		}
	}
	return JSON_OK;
}

/* distributedInfo: {"rank": 0, "world_size": 2, ...} -> meta "distributed.<key>". */
static int distributed_info(struct kimport *K, struct json_cur *c)
{
	struct kpair pairs[KPAIRS_MAX];
	int np = 0;
	int rc = parse_pairs(c, pairs, &np);
	return rc ? rc : pairs_to_meta(K, c, "distributed.", pairs, np);
}

/* deviceProperties: [{"id": 0, "name": ..., ...}, ...] -> meta "device.<id>.<key>". */
static int device_props(struct kimport *K, struct json_cur *c)
{
	struct kpair pairs[KPAIRS_MAX];
	int np = 0, ends[64], nobj = 0;
	int rc = json_expect(c, '[', "\"deviceProperties\" must be an array");
	if (rc)
		return rc;
	if ((rc = json_ws(c)) != 0)
		return rc;
	if (*c->p == ']') {
		c->p++;
		return JSON_OK;
	}
	for (;;) {
		if ((rc = parse_pairs(c, pairs, &np)) != 0)
			return rc;
		if (nobj < 64)
			ends[nobj++] = np;
		if ((rc = json_ws(c)) != 0)
			return rc;
		if (*c->p == ']') {
			c->p++;
			break;
		}
		if (*c->p != ',') {
			c->err = "expected ',' or ']'";
			c->errpos = c->p;
			return JSON_ERR;
		}
		c->p++;
	}
	for (int o = 0, from = 0; o < nobj; from = ends[o++]) {
		long long id = o; /* the array index when there is no "id" */
		for (int i = from; i < ends[o]; i++)
			if (span_is(pairs[i].k, "id") && pairs[i].v.len < 20) {
				char tmp[24];
				memcpy(tmp, pairs[i].v.s, pairs[i].v.len);
				tmp[pairs[i].v.len] = '\0';
				id = strtoll(tmp, NULL, 10);
			}
		char prefix[48];
		snprintf(prefix, sizeof(prefix), "device.%lld.", id);
		if ((rc = pairs_to_meta(K, c, prefix, pairs + from, ends[o] - from)) != 0)
			return rc;
	}
	return JSON_OK;
}

/* otherData of our own export: {"generator": ..., "processes": {"<pid>": {key: value, ...}}}
 * -> the metadata of each process (program, hostname, rank, cpu.*_utilization, ...), applied
 * at the end if the file is our export. Parsed whole before anything is kept: a refill
 * parses the value again. */
#define KOTHER_MAX 1024 /* metadata entries kept; more are parsed and dropped */

static int other_data(struct kimport *K, struct json_cur *c)
{
	struct kpair *pairs = malloc(KOTHER_MAX * sizeof(*pairs));
	int64_t *pids = malloc(KOTHER_MAX * sizeof(*pids));
	struct kpair one[KPAIRS_MAX];
	int n = 0;
	if (!pairs || !pids) {
		free(pairs);
		free(pids);
		c->err = "out of memory";
		c->errpos = c->p;
		return JSON_ERR;
	}
	int rc = json_expect(c, '{', "expected an object");
	bool first = true;
	struct json_span k;
	while (rc == JSON_OK && (rc = json_member(c, &first, &k)) == JSON_OK) {
		if ((rc = json_ws(c)) != JSON_OK)
			break;
		if (!span_is(k, "processes") || *c->p != '{') { /* not ours: not an error */
			rc = json_skip(c, 0);
			continue;
		}
		bool pfirst = true;
		struct json_span pk;
		rc = json_expect(c, '{', "expected an object");
		while (rc == JSON_OK && (rc = json_member(c, &pfirst, &pk)) == JSON_OK) {
			int np = 0;
			if ((rc = json_ws(c)) != JSON_OK)
				break;
			if (*c->p != '{') {
				rc = json_skip(c, 0);
				continue;
			}
			if ((rc = parse_pairs(c, one, &np)) != JSON_OK)
				break;
			int64_t pid = 0;
			for (size_t i = 0; i < pk.len && pid <= UINT32_MAX; i++)
				pid = pk.s[i] >= '0' && pk.s[i] <= '9' ? pid * 10 + (pk.s[i] - '0')
								       : UINT32_MAX + 1ll;
			for (int i = 0; i < np && n < KOTHER_MAX && pk.len && pid <= UINT32_MAX;
			     i++, n++) {
				pairs[n] = one[i];
				pids[n] = pid;
			}
		}
		if (rc == JSON_END)
			rc = JSON_OK;
	}
	if (rc == JSON_END)
		rc = JSON_OK;
	for (int i = 0; rc == JSON_OK && i < n; i++)
		if (!add_meta_pid(K, pids[i], pairs[i].k.s, pairs[i].k.len, pairs[i].v)) {
			c->err = "out of memory";
			c->errpos = c->p;
			rc = JSON_ERR;
		}
	free(pairs);
	free(pids);
	return rc;
}

int ktop_member(struct kimport *K, struct json_cur *c, struct json_span key)
{
	if (span_is(key, "otherData"))
		return other_data(K, c);
	if (span_is(key, "deviceProperties"))
		return device_props(K, c);
	if (span_is(key, "distributedInfo"))
		return distributed_info(K, c);
	int rc = json_ws(c);
	if (rc)
		return rc;
	if (span_is(key, "baseTimeNanoseconds")) {
		struct json_span num;
		bool is_int;
		int64_t v;
		if (*c->p != '-' && (*c->p < '0' || *c->p > '9')) {
			c->err = "\"baseTimeNanoseconds\" must be an integer";
			c->errpos = c->p;
			return JSON_ERR;
		}
		if ((rc = json_number(c, &num, &is_int, &v)) != 0)
			return rc;
		if (!is_int) {
			c->err = "\"baseTimeNanoseconds\" must be an integer";
			c->errpos = num.s;
			return JSON_ERR;
		}
		K->base_ns = v;
		return JSON_OK;
	}
	/* short scalars (schemaVersion, displayTimeUnit, host_name, ...) are kept as metadata;
	 * long logs (INFO, ERROR) and other structures are skipped */
	struct json_span v;
	if (*c->p == '[' || *c->p == '{')
		return json_skip(c, 0);
	rc = *c->p == '"' ? json_string(c, &v) : json_canon(c, &v);
	if (rc == JSON_OK && v.len <= 1024 && key.len < 200) {
		char k[256];
		int len = snprintf(k, sizeof(k), "trace.%.*s", (int)key.len, key.s);
		if (!add_meta(K, k, (size_t)len, v)) {
			c->err = "out of memory";
			c->errpos = c->p;
			return JSON_ERR;
		}
	}
	return rc;
}
