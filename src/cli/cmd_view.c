/*
 * cmd_view.c: `opscope view [options] FILE|DIR...`: make the HTML report of the traces (the
 * page `report --format html` writes, byte for byte) and serve it over HTTP/1.1 on 127.0.0.1
 * (another address only with --bind), on a free port or the one given, printing the URL.
 *
 * The server is as small as its job: one page, one connection at a time, each closed after
 * its response. GET or HEAD of "/" (with any query) or "/index.html" gets the page, which asks
 * for nothing more (its icon is a data: URL); any other path 404, any other method 405, a
 * request line that does not parse 400, one that does not arrive within 10 seconds nothing. It reads at most 16 KiB of a request and never the body. A client that goes
 * away mid-response costs nothing (SIGPIPE is ignored by main(); send fails with EPIPE).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <getopt.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "cli/cli.h"

static const char view_usage[] =
	"usage: opscope view [options] FILE|DIR...\n"
	"\n"
	"Serve the HTML report of the traces (what `opscope report --format html` writes) on\n"
	"http://127.0.0.1:PORT/ and print that URL; open it in a browser. Ctrl-C stops.\n"
	"\n"
	"options:\n"
	"  -p, --port N          port to listen on (default 0: a free one)\n"
	"      --bind ADDR       address to listen on (default 127.0.0.1; anything else makes\n"
	"                        the report readable from other machines)\n"
	"      --views LIST      only these views (as `opscope report --views`)\n"
	"      --max-requests N  stop after answering N requests (default: never)\n"
	"  -h, --help            show this help\n";

/* Bytes of a request read at most: its request line and headers. */
#define VIEW_REQUEST_MAX 16384

/* Send all n bytes of s; false when the client went away. */
static bool view_send(int fd, const char *s, size_t n)
{
	while (n) {
		ssize_t k = send(fd, s, n, MSG_NOSIGNAL);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return false;
		s += k;
		n -= (size_t)k;
	}
	return true;
}

/* Answer one request on connection fd with the page (page, len). */
static void view_answer(int fd, const char *page, size_t len)
{
	char req[VIEW_REQUEST_MAX + 1];
	size_t got = 0;
	while (got < VIEW_REQUEST_MAX) { /* up to the end of the headers */
		ssize_t k = recv(fd, req + got, VIEW_REQUEST_MAX - got, 0);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		got += (size_t)k;
		req[got] = '\0';
		if (strstr(req, "\r\n\r\n") || strstr(req, "\n\n"))
			break;
	}
	req[got] = '\0';
	char method[16], path[1024];
	int status = 200;
	const char *reason = "OK";
	if (got == 0)
		return;
	if (sscanf(req, "%15s %1023s HTTP/1.%*c", method, path) != 2) {
		status = 400;
		reason = "Bad Request";
	} else if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
		status = 405;
		reason = "Method Not Allowed";
	} else if ((path[0] != '/' || strcspn(path, "?") != 1) && /* "/" or "/?..." */
		   strcmp(path, "/index.html") != 0) {
		status = 404;
		reason = "Not Found";
	}
	bool head = status == 200 && strcmp(method, "HEAD") == 0;
	const char *body = status == 200 ? page : reason;
	size_t blen = status == 200 ? len : strlen(reason);
	char hdr[1024];
	int n = snprintf(hdr, sizeof(hdr),
			 "HTTP/1.1 %d %s\r\n"
			 "Content-Type: %s\r\n"
			 "Content-Length: %zu\r\n"
			 "Cache-Control: no-store\r\n"
			 "X-Content-Type-Options: nosniff\r\n"
			 "Referrer-Policy: no-referrer\r\n"
			 "%s"
			 "Connection: close\r\n\r\n",
			 status, reason,
			 status == 200 ? "text/html; charset=utf-8" : "text/plain; charset=utf-8",
			 blen, status == 405 ? "Allow: GET, HEAD\r\n" : "");
	if (view_send(fd, hdr, (size_t)n) && !head)
		view_send(fd, body, blen);
}

/* Listen on addr:port; the socket, or -1 after printing why. The URL it answers at (the port
 * taken, where 0 asked for a free one) goes to url. */
static int view_listen(const char *addr, const char *port, char *url, size_t urlsize)
{
	struct addrinfo hints, *res = NULL;
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	int gai = getaddrinfo(addr, port, &hints, &res);
	if (gai != 0) {
		cli_error("view: --bind %s: %s", addr, gai_strerror(gai));
		return -1;
	}
	int fd = -1, err = 0;
	for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0) {
			err = errno;
			continue;
		}
		int one = 1;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, 16) != 0) {
			err = errno;
			close(fd);
			fd = -1;
		}
	}
	freeaddrinfo(res);
	if (fd < 0) {
		cli_error("view: cannot listen on %s port %s: %s", addr, port, strerror(err));
		return -1;
	}
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char host[INET6_ADDRSTRLEN] = "?";
	unsigned p = 0;
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0) {
		if (ss.ss_family == AF_INET6) {
			const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)&ss;
			inet_ntop(AF_INET6, &s6->sin6_addr, host, sizeof(host));
			p = ntohs(s6->sin6_port);
		} else {
			const struct sockaddr_in *s4 = (const struct sockaddr_in *)&ss;
			inet_ntop(AF_INET, &s4->sin_addr, host, sizeof(host));
			p = ntohs(s4->sin_port);
		}
	}
	snprintf(url, urlsize, ss.ss_family == AF_INET6 ? "http://[%s]:%u/" : "http://%s:%u/", host,
		 p);
	return fd;
}

int cmd_view(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "port", required_argument, NULL, 'p' },
		{ "bind", required_argument, NULL, 'B' },
		{ "views", required_argument, NULL, 'V' },
		{ "max-requests", required_argument, NULL, 'M' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *bind_addr = "127.0.0.1", *views = NULL;
	char port[8] = "0";
	long v, max_requests = 0;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "p:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (!cli_parse_count(optarg, 65535, &v))
				return cli_usage_error("view", "--port wants a number 0..65535");
			snprintf(port, sizeof(port), "%ld", v);
			break;
		case 'B':
			bind_addr = optarg;
			break;
		case 'V':
			views = optarg;
			break;
		case 'M':
			if (!cli_parse_count(optarg, 1000000000L, &v) || v == 0)
				return cli_usage_error("view",
						       "--max-requests wants a positive number");
			max_requests = v;
			break;
		case 'h':
			fputs(view_usage, stdout);
			return CLI_OK;
		default:
			return cli_usage_error("view", NULL);
		}
	}
	if (optind >= argc)
		return cli_usage_error("view", "no trace file or directory given");
	char *page;
	size_t len;
	int rc = cli_report_html(argv + optind, (size_t)(argc - optind), views, &page, &len);
	if (rc != CLI_OK)
		return rc;
	char url[128];
	int lfd = view_listen(bind_addr, port, url, sizeof(url));
	if (lfd < 0) {
		free(page);
		return CLI_ERROR;
	}
	printf("opscope: serving the report at %s (Ctrl-C stops)\n", url);
	fflush(stdout);
	for (long served = 0; !max_requests || served < max_requests;) {
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED || errno == EMFILE ||
			    errno == ENFILE)
				continue;
			rc = cli_error("view: accept: %s", strerror(errno));
			break;
		}
		struct timeval tv = { 10, 0 }; /* a client that sends nothing is dropped */
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		view_answer(fd, page, len);
		shutdown(fd, SHUT_WR);
		close(fd);
		served++;
	}
	close(lfd);
	free(page);
	return rc;
}
