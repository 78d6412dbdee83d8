/*
 * cmd_record.c: `opscope record [options] -- COMMAND [ARGS...]`.
 *
 * Runs COMMAND with libopscope preloaded (LD_PRELOAD) and registered as its NVTX injection
 * library (NVTX_INJECTION64_PATH) and CUDA injection library (CUDA_INJECTION64_PATH: the
 * CUPTI collector, docs/gpu.md), with OPSCOPE_AUTOSTART=1 so the runtime records from
 * before main() to exit. The root process writes the output file; every other process of
 * the command (forks, exec'd children) writes "<stem>.<pid>.opscope" beside it; a program
 * that a process execs (same pid) takes the next free "<stem>.<pid>.N.opscope" after the old
 * image finished its file (src/record/exec.c). Signals
 * that would stop us (SIGINT, SIGTERM, SIGHUP, SIGQUIT) are forwarded to the command, and our
 * exit status is the command's (128 + signal when it was killed).
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dirent.h>
#include <getopt.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "opscope_config.h"
#include "trace/decode.h"

static volatile sig_atomic_t record_child_pid;

static void record_forward(int sig)
{
	if (record_child_pid > 0)
		kill((pid_t)record_child_pid, sig);
}

static const char record_usage[] =
	"usage: opscope record [options] -- COMMAND [ARGS...]\n"
	"\n"
	"Run COMMAND and record it: ranges of instrumented programs (C API, NVTX) and\n"
	"every process it starts (and every program a process execs), each into its own\n"
	"trace file.\n"
	"\n"
	"options:\n"
	"  -o, --output PATH     trace file of the command's first process, or a directory\n"
	"                        (ending in '/') for one file per process\n"
	"                        (default: COMMAND.opscope, or COMMAND.N.opscope if taken)\n"
	"  -f, --force           overwrite PATH if it exists\n"
	"      --buffer-size MB  event buffers per process (default 64)\n"
	"      --flush-ms MS     how often buffered events reach the file (default 100)\n"
	"      --compress KIND   none or zstd (default zstd when available)\n"
	"      --no-nvtx         do not capture NVTX ranges\n"
	"      --no-gpu          do not record GPU activity (CUPTI; docs/gpu.md)\n"
	"      --python-functions[=all|python]\n"
	"                        Python programs: every function call as a range, and a\n"
	"                        cProfile-style profile (pstats) next to the trace; =python:\n"
	"                        Python functions only, at a fraction of the cost per call\n"
	"      --no-torch        Python programs: do not capture PyTorch\n"
	"      --sample[=HZ]     sample the stacks of every thread of every process HZ\n"
	"                        times a second (default 99), native (.eh_frame) and\n"
	"                        Python 3.11 frames; see docs/sampling.md\n"
	"      --sample-mode MODE\n"
	"                        cpu: every 1/HZ of a thread's CPU time (default);\n"
	"                        wall: every thread every 1/HZ s, waiting ones too\n"
	"  -q, --quiet           print nothing after the command exits\n"
	"  -h, --help            show this help\n";

/* The directory of this executable, from /proc/self/exe. */
static int record_exe_dir(char *dir, size_t size)
{
	ssize_t n = readlink("/proc/self/exe", dir, size - 1);
	if (n <= 0)
		return -1;
	dir[n] = '\0';
	char *slash = strrchr(dir, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	return 0;
}

/* <exe dir>/<rel>/<leaf>, or <rel>/<leaf> when rel is absolute. */
static void record_join(char *out, size_t size, const char *exe_dir, const char *rel,
			const char *leaf)
{
	if (rel[0] == '/')
		snprintf(out, size, "%s/%s", rel, leaf);
	else if (rel[0])
		snprintf(out, size, "%s/%s/%s", exe_dir, rel, leaf);
	else
		snprintf(out, size, "%s/%s", exe_dir, leaf);
}

/* Locate libopscope: $OPSCOPE_LIB; next to the executable (a build tree); the library
 * directory of the installed layout seen from <prefix>/bin (opscope_config.h); or ../lib,
 * ../lib64 from it. `out` has PATH_MAX bytes. */
static int record_find_library(char *out)
{
	const char *env = getenv("OPSCOPE_LIB");
	if (env && *env) {
		if (!realpath(env, out))
			return -1;
		return 0;
	}
	char exe[PATH_MAX];
	if (record_exe_dir(exe, sizeof(exe)) != 0)
		return -1;
	static const char *const cand[][2] = {
		{ "", "libopscope.so" },
		{ OPSCOPE_INSTALL_LIBDIR_FROM_BIN, OPSCOPE_INSTALL_SONAME },
		{ OPSCOPE_INSTALL_LIBDIR_FROM_BIN, "libopscope.so" },
		{ "../lib", "libopscope.so" },
		{ "../lib64", "libopscope.so" },
	};
	for (size_t i = 0; i < sizeof(cand) / sizeof(cand[0]); i++) {
		char path[2 * PATH_MAX];
		record_join(path, sizeof(path), exe, cand[i][0], cand[i][1]);
		if (access(path, R_OK) == 0 && realpath(path, out))
			return 0;
	}
	return -1;
}

/* A Python program started under record picks up opscope's sitecustomize (PyTorch capture,
 * --python-functions) and package when they are where this build puts them:
 *  - <exe dir>/python (a build tree): opscope_boot and the package directory go first on
 *    PYTHONPATH, so that the build's package is the one imported;
 *  - the installed package directory (opscope_config.h: <prefix>/lib/python3.X/...): only
 *    opscope_boot goes on PYTHONPATH, and OPSCOPE_PYTHON_DIR names the package directory,
 *    which the sitecustomize appends to sys.path when the interpreter does not search it
 *    already (PYTHONPATH would put everything else installed there ahead of the standard
 *    library).
 * OPSCOPE_TORCH=0 turns the PyTorch capture off. Returns whether the package was found. */
static bool record_python_path(void)
{
	char exe[PATH_MAX];
	if (record_exe_dir(exe, sizeof(exe)) != 0)
		return false;
	static const char *const rel[] = { "python", OPSCOPE_INSTALL_PYDIR_FROM_BIN };
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		if (!rel[i][0])
			continue;
		char dir[PATH_MAX], path[2 * PATH_MAX];
		record_join(path, sizeof(path), exe, rel[i], "opscope_boot/sitecustomize.py");
		if (access(path, R_OK) != 0)
			continue;
		record_join(path, sizeof(path), exe, rel[i], "");
		if (!realpath(path, dir))
			continue;
		int installed = i > 0;
		const char *old = getenv("PYTHONPATH");
		size_t len = 2 * strlen(dir) + (old ? strlen(old) : 0) + 32;
		char *v = malloc(len);
		if (!v)
			return false;
		snprintf(v, len, "%s/opscope_boot%s%s%s%s", dir, installed ? "" : ":",
			 installed ? "" : dir, old && *old ? ":" : "", old ? old : "");
		setenv("PYTHONPATH", v, 1);
		free(v);
		if (installed)
			setenv("OPSCOPE_PYTHON_DIR", dir, 1);
		return true;
	}
	return false;
}

/* A run that recorded nothing at all: why it may be so and what to do, two lines on stderr.
 * python: whether record_python_path() found opscope's Python package. */
static void record_hint_empty(const char *command, bool python)
{
	fprintf(stderr,
		"opscope: nothing recorded: %s ran no opscope instrumentation (link -lopscope "
		"and use its C API, or annotate with NVTX); see 'opscope record --help'\n",
		command);
	char exe[PATH_MAX];
	if (python) {
		fputs("opscope: Python programs are recorded once they import torch, or call by "
		      "call with --python-functions\n",
		      stderr);
	} else if (record_exe_dir(exe, sizeof(exe)) == 0) {
		/* where it was looked for: the build tree, and the installed layout when this
		 * build installs one (configured with the Python extension) */
		char installed[2 * PATH_MAX] = "";
		if (OPSCOPE_INSTALL_PYDIR_FROM_BIN[0]) {
			installed[0] = ',';
			installed[1] = ' ';
			record_join(installed + 2, sizeof(installed) - 2, exe,
				    OPSCOPE_INSTALL_PYDIR_FROM_BIN, "");
		}
		fprintf(stderr,
			"opscope: Python programs: opscope's Python package is not next to this "
			"tool (%s/python%s): build it (-DOPSCOPE_PYTHON=ON) and use that build's "
			"opscope, or install it (cmake --install)\n",
			exe, installed);
	}
}

/* Default output: "<command>.opscope", or "<command>.N.opscope" for the first free N. */
static void record_default_output(const char *command, char *out, size_t size, int force)
{
	const char *base = strrchr(command, '/');
	base = base ? base + 1 : command;
	snprintf(out, size, "%s.opscope", base);
	for (int n = 1; !force && access(out, F_OK) == 0 && n < 10000; n++)
		snprintf(out, size, "%s.%d.opscope", base, n);
}

static int record_set_preload(const char *lib)
{
	const char *old = getenv("LD_PRELOAD");
	if (!old || !*old)
		return setenv("LD_PRELOAD", lib, 1);
	size_t n = strlen(lib) + strlen(old) + 2;
	char *v = malloc(n);
	if (!v)
		return -1;
	snprintf(v, n, "%s:%s", lib, old);
	int rc = setenv("LD_PRELOAD", v, 1);
	free(v);
	return rc;
}

/* Before the command runs (unrecorded, if its trace cannot be written): a directory output
 * is made (mkdir -p, as the runtime would) and must be writable; a file output is created and
 * removed at once, after -f removed what was there (a file or a link: -f refuses anything
 * else). 0, or -1 with errno set. */
static int record_check_output(const char *path, int is_dir, int force)
{
	if (is_dir) {
		char p[PATH_MAX + 2];
		snprintf(p, sizeof(p), "%s", path);
		for (char *s = p + 1; *s; s++) {
			if (*s != '/')
				continue;
			*s = '\0';
			int rc = mkdir(p, 0755);
			*s = '/';
			if (rc != 0 && errno != EEXIST)
				return -1;
		}
		return access(path, W_OK | X_OK);
	}
	struct stat st;
	if (force && lstat(path, &st) == 0) {
		if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
			/* -f replaces a trace, never a device or a directory (as root, -f -o
			 * /dev/null removed /dev/null) */
			errno = S_ISDIR(st.st_mode) ? EISDIR : EEXIST;
			return -1;
		}
		if (unlink(path) != 0 && errno != ENOENT)
			return -1;
	}
	FILE *f = fopen(path, "wx");
	if (!f)
		return -1;
	fclose(f);
	return unlink(path);
}

/* Print one line per trace file the command produced: the root file and its siblings
 * "<stem>.<pid>[.N].opscope" (other processes, and images after an exec), or one line saying
 * there is none. Returns whether there were such files and all of them hold no event at all
 * (not even a dropped one). */
static bool record_report(const char *path, int is_dir)
{
	int files = 0, empty = 0;
	char dir[PATH_MAX], stem[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s", path);
	if (is_dir) {
		snprintf(stem, sizeof(stem), "%s", "");
	} else {
		char *slash = strrchr(dir, '/');
		const char *file = slash ? slash + 1 : dir;
		snprintf(stem, sizeof(stem), "%s", file);
		char *dot = strrchr(stem, '.');
		if (dot && dot != stem)
			*dot = '\0';
		if (slash)
			*slash = '\0';
		else
			snprintf(dir, sizeof(dir), ".");
	}
	DIR *d = opendir(dir);
	if (!d)
		return false;
	struct dirent *e;
	size_t stem_len = strlen(stem);
	while ((e = readdir(d))) {
		const char *name = e->d_name;
		size_t len = strlen(name);
		if (len < 8 || strcmp(name + len - 8, ".opscope") != 0)
			continue;
		if (!is_dir && strncmp(name, stem, stem_len) != 0)
			continue;
		if (!is_dir && name[stem_len] != '.')
			continue;
		char file[PATH_MAX * 2];
		size_t dl = strlen(dir); /* -o out/: no "out//file" */
		snprintf(file, sizeof(file), "%s%s%s", dir, dl && dir[dl - 1] == '/' ? "" : "/",
			 name);
		struct decode_summary s;
		files++;
		if (decode_summarize(file, &s) == 0) {
			empty += s.events == 0 && s.dropped == 0 && s.samples == 0;
			/* loss first-hand: the share dropped, a torn tail, no clean end */
			char lost[64] = "";
			if (s.dropped > 0)
				snprintf(lost, sizeof(lost), " (%.1f%% of the events)",
					 100.0 * (double)s.dropped /
						 (double)(s.events + s.dropped));
			char torn[64] = "";
			if (s.discarded_bytes > 0)
				snprintf(torn, sizeof(torn), ", %zu bytes of torn tail not read",
					 s.discarded_bytes);
			char samples[48] = "";
			if (s.samples > 0)
				snprintf(samples, sizeof(samples), ", %llu stack samples",
					 (unsigned long long)s.samples);
			fprintf(stderr,
				"opscope: %s: %llu events, %llu dropped%s%s, %u threads, pid %u%s%s\n",
				file, (unsigned long long)s.events, (unsigned long long)s.dropped,
				lost, samples, s.threads, s.pid, torn,
				s.complete ? ""
					   : " (INCOMPLETE: the recording did not stop cleanly)");
		} else {
			fprintf(stderr, "opscope: %s: unreadable\n", file);
		}
	}
	closedir(d);
	if (files == 0) /* the runtime never ran: nothing but the preload could have made one */
		fprintf(stderr,
			"opscope: no trace file was written: opscope's runtime did not run in the "
			"command (a static or setuid program, or LD_PRELOAD taken out of its "
			"environment)\n");
	return files > 0 && empty == files;
}

int cmd_record(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "force", no_argument, NULL, 'f' },
		{ "buffer-size", required_argument, NULL, 'b' },
		{ "flush-ms", required_argument, NULL, 'F' },
		{ "compress", required_argument, NULL, 'c' },
		{ "no-nvtx", no_argument, NULL, 'N' },
		{ "no-gpu", no_argument, NULL, 'G' },
		{ "python-functions", optional_argument, NULL, 'P' },
		{ "no-torch", no_argument, NULL, 'T' },
		{ "sample", optional_argument, NULL, 'S' },
		{ "sample-mode", required_argument, NULL, 'M' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *output = NULL, *buffer_mb = NULL, *flush_ms = NULL, *compress = NULL;
	int force = 0, nvtx = 1, gpu = 1, quiet = 0, c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+o:fqh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			output = optarg;
			break;
		case 'f':
			force = 1;
			break;
		case 'b':
			buffer_mb = optarg;
			break;
		case 'F':
			flush_ms = optarg;
			break;
		case 'c':
			compress = optarg;
			break;
		case 'N':
			nvtx = 0;
			break;
		case 'G':
			gpu = 0;
			break;
		case 'P': /* read by python/opscope_boot/sitecustomize.py */
			if (optarg && strcmp(optarg, "all") != 0 && strcmp(optarg, "python") != 0)
				return cli_usage_error(
					"record", "--python-functions wants 'all' or 'python'");
			setenv("OPSCOPE_PYFUNC",
			       optarg && !strcmp(optarg, "python") ? "python" : "1", 1);
			break;
		case 'T':
			setenv("OPSCOPE_TORCH", "0", 1);
			break;
		case 'S': /* read by the runtime: src/record/autostart.c, sampler.c */
			if (optarg && (strspn(optarg, "0123456789") != strlen(optarg) ||
				       atol(optarg) <= 0 || atol(optarg) > 100000))
				return cli_usage_error("record",
						       "--sample wants a rate from 1 to 100000 Hz");
			setenv("OPSCOPE_SAMPLE_HZ", optarg ? optarg : "99", 1);
			break;
		case 'M':
			if (strcmp(optarg, "cpu") != 0 && strcmp(optarg, "wall") != 0)
				return cli_usage_error("record",
						       "--sample-mode wants 'cpu' or 'wall'");
			setenv("OPSCOPE_SAMPLE_MODE", optarg, 1);
			if (!getenv("OPSCOPE_SAMPLE_HZ"))
				setenv("OPSCOPE_SAMPLE_HZ", "99", 1);
			break;
		case 'q':
			quiet = 1;
			break;
		case 'h':
			fputs(record_usage, stdout);
			return 0;
		default:
			return cli_usage_error("record", NULL);
		}
	}
	if (optind >= argc)
		return cli_usage_error("record", "no command given (opscope record -- COMMAND)");
	if (buffer_mb &&
	    (atol(buffer_mb) <= 0 || strspn(buffer_mb, "0123456789") != strlen(buffer_mb)))
		return cli_usage_error("record", "--buffer-size wants a positive number of MB");
	if (flush_ms && (atol(flush_ms) <= 0 || strspn(flush_ms, "0123456789") != strlen(flush_ms)))
		return cli_usage_error("record", "--flush-ms wants a positive number");
	if (compress && strcmp(compress, "none") != 0 && strcmp(compress, "zstd") != 0)
		return cli_usage_error("record", "--compress wants 'none' or 'zstd'");

	char lib[PATH_MAX];
	if (record_find_library(lib) != 0) {
		fprintf(stderr, "opscope: record: cannot find libopscope.so (set OPSCOPE_LIB)\n");
		return 1;
	}
	char out[PATH_MAX];
	if (output)
		snprintf(out, sizeof(out), "%s", output);
	else
		record_default_output(argv[optind], out, sizeof(out), force);
	size_t out_len = strlen(out);
	struct stat st;
	int is_dir = (out_len && out[out_len - 1] == '/') ||
		     (stat(out, &st) == 0 && S_ISDIR(st.st_mode));
	if (!is_dir && !force && output && access(out, F_OK) == 0) {
		fprintf(stderr, "opscope: record: %s exists (use -f to overwrite)\n", out);
		return 1;
	}
	/* Absolute, so that processes that change directory write to the same place. */
	char abs_out[2 * PATH_MAX + 2];
	char cwd[PATH_MAX] = "";
	if (out[0] != '/' && !getcwd(cwd, sizeof(cwd))) {
		fprintf(stderr, "opscope: record: getcwd: %s\n", strerror(errno));
		return 1;
	}
	snprintf(abs_out, sizeof(abs_out), "%s%s%s", cwd, cwd[0] ? "/" : "", out);
	if (strlen(abs_out) >= PATH_MAX) {
		fprintf(stderr, "opscope: record: output path too long\n");
		return 1;
	}
	if (is_dir && abs_out[strlen(abs_out) - 1] != '/')
		strcat(abs_out, "/");
	if (record_check_output(abs_out, is_dir, force) != 0) {
		fprintf(stderr, "opscope: record: cannot write %s: %s\n", out, strerror(errno));
		return 1;
	}

	if (record_set_preload(lib) != 0 || setenv("OPSCOPE_AUTOSTART", "1", 1) != 0 ||
	    setenv("OPSCOPE_OUTPUT", abs_out, 1) != 0) {
		fprintf(stderr, "opscope: record: cannot set the environment\n");
		return 1;
	}
	if (nvtx) {
		const char *prev = getenv("NVTX_INJECTION64_PATH");
		if (prev && *prev && strcmp(prev, lib) != 0)
			fprintf(stderr,
				"opscope: record: NVTX_INJECTION64_PATH is set (%s); NVTX ranges go "
				"there, not to opscope\n",
				prev);
		else
			setenv("NVTX_INJECTION64_PATH", lib, 1);
	} else {
		setenv("OPSCOPE_NVTX", "0", 1);
	}
	/* GPU activity: libopscope is the CUDA driver's injection library, whose
	 * InitializeInjection() starts the CUPTI collector during cuInit (docs/gpu.md) */
	if (gpu) {
		const char *prev = getenv("CUDA_INJECTION64_PATH");
		if (prev && *prev && strcmp(prev, lib) != 0)
			fprintf(stderr,
				"opscope: record: CUDA_INJECTION64_PATH is set (%s); GPU activity "
				"goes there, not to opscope\n",
				prev);
		else
			setenv("CUDA_INJECTION64_PATH", lib, 1);
	} else {
		setenv("OPSCOPE_GPU", "0", 1);
	}
	if (buffer_mb)
		setenv("OPSCOPE_BUFFER_MB", buffer_mb, 1);
	if (flush_ms)
		setenv("OPSCOPE_FLUSH_MS", flush_ms, 1);
	if (compress)
		setenv("OPSCOPE_COMPRESS", compress, 1);
	bool python = record_python_path();

	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "opscope: record: fork: %s\n", strerror(errno));
		return 1;
	}
	if (pid == 0) {
		char root[32];
		snprintf(root, sizeof(root), "%d", (int)getpid());
		setenv("OPSCOPE_ROOT_PID", root, 1);
		cli_restore_sigpipe(); /* an ignored signal stays ignored across exec */
		execvp(argv[optind], argv + optind);
		fprintf(stderr, "opscope: record: cannot run %s: %s\n", argv[optind],
			strerror(errno));
		_exit(127);
	}
	record_child_pid = pid;
	static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	for (size_t i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
		signal(forwarded[i], record_forward);

	int status = 0;
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "opscope: record: waitpid: %s\n", strerror(errno));
			return 1;
		}
	}
	int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
		return 127;
	if (!quiet) {
		if (WIFSIGNALED(status))
			fprintf(stderr, "opscope: %s was killed by signal %d\n", argv[optind],
				WTERMSIG(status));
		if (record_report(abs_out, is_dir))
			record_hint_empty(argv[optind], python);
	}
	return rc;
}
