/*
 * html_assets.h: the HTML report's page around its data, made at build time by
 * cmake/embed_html.cmake from src/report/html/ (page.html, report.css, report.js): the page
 * up to where the report's JSON goes, and the rest. Internal to src/report.
 */
#ifndef OPSCOPE_REPORT_HTML_ASSETS_H
#define OPSCOPE_REPORT_HTML_ASSETS_H

#include <stddef.h>

extern const char report_html_head[];	  /* the page up to the data, NUL-terminated */
extern const size_t report_html_head_len; /* bytes, the NUL left out */
extern const char report_html_tail[];	  /* the page after the data, NUL-terminated */
extern const size_t report_html_tail_len; /* bytes, the NUL left out */

#endif
